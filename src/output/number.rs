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
}
