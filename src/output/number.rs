//! Number formatting shared by the text reports.

/// A rate with an SI suffix and about four significant digits: `301.2K`.
pub fn si(value: f64) -> String {
    let (scaled, suffix) = match value.abs() {
        v if v >= 1e9 => (value / 1e9, "G"),
        v if v >= 1e6 => (value / 1e6, "M"),
        v if v >= 1e3 => (value / 1e3, "K"),
        _ => (value, ""),
    };
    let decimals = match scaled.abs() {
        v if v >= 100.0 => 1,
        v if v >= 10.0 => 2,
        _ => 3,
    };
    format!("{scaled:.decimals$}{suffix}")
}

/// A small ratio (per-acquisition counts) with three significant digits,
/// `-` when unknown.
pub fn ratio(value: Option<f64>) -> String {
    match value {
        None => "-".into(),
        Some(0.0) => "0".into(),
        Some(v) if v >= 100.0 => format!("{v:.0}"),
        Some(v) if v >= 10.0 => format!("{v:.1}"),
        Some(v) if v >= 1.0 => format!("{v:.2}"),
        Some(v) if v >= 0.001 => format!("{v:.3}"),
        Some(v) => format!("{v:.1e}"),
    }
}

/// Gives every column of `rows` one notation: where a [`ratio`] cell had
/// to be written in scientific notation (`7.5e-5`), the column's other
/// numbers are written so too (`8.0e-3`, not `0.008` beside it), so a
/// reader compares exponents rather than digits of two formats. Zeros,
/// `-` and text stay as they are.
pub fn one_notation_per_column(rows: &mut [Vec<String>]) {
    let scientific = |c: &str| c.contains("e-") && c.parse::<f64>().is_ok();
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    for col in 0..width {
        if !rows.iter().any(|r| r.get(col).is_some_and(|c| scientific(c))) {
            continue;
        }
        for cell in rows.iter_mut().filter_map(|r| r.get_mut(col)) {
            match cell.parse::<f64>() {
                Ok(v) if v != 0.0 && !scientific(cell) => *cell = format!("{v:.1e}"),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn si_suffixes() {
        assert_eq!(si(285_000.0), "285.0K");
        assert_eq!(si(1_234_567.0), "1.235M");
        assert_eq!(si(12.5), "12.50");
        assert_eq!(si(0.0), "0.000");
    }

    #[test]
    fn ratios() {
        assert_eq!(ratio(None), "-");
        assert_eq!(ratio(Some(0.0)), "0");
        assert_eq!(ratio(Some(1.5)), "1.50");
        assert_eq!(ratio(Some(0.0123)), "0.012");
        assert_eq!(ratio(Some(0.00012)), "1.2e-4");
        assert_eq!(ratio(Some(250.0)), "250");
    }

    #[test]
    fn a_column_keeps_one_notation() {
        let mut rows = vec![
            vec!["adaptive".to_string(), ratio(Some(7.5e-5)), ratio(Some(0.5))],
            vec!["pthread".to_string(), ratio(Some(0.008)), ratio(Some(0.25))],
            vec!["tas".to_string(), ratio(Some(0.0)), "-".to_string()],
            vec!["mcs".to_string(), ratio(Some(1.04)), ratio(None)],
        ];
        one_notation_per_column(&mut rows);
        let column = |i: usize| rows.iter().map(|r| r[i].as_str()).collect::<Vec<_>>();
        assert_eq!(column(1), ["7.5e-5", "8.0e-3", "0", "1.0e0"]);
        assert_eq!(column(2), ["0.500", "0.250", "-", "-"], "a column with no small number is left alone");
        assert_eq!(column(0), ["adaptive", "pthread", "tas", "mcs"]);
    }
}
