//! Whole-number counts (threads, spin budgets) and percentages.

/// A positive whole number (at least 1) that fits in 32 bits.
pub fn parse_count(text: &str) -> Result<u32, String> {
    let t = text.trim();
    if t.starts_with('-') {
        return Err(format!("`{t}` is negative; expected a whole number >= 1"));
    }
    match t.parse::<u64>() {
        Ok(0) => Err("0 is not allowed; expected a whole number >= 1".into()),
        Ok(n) => u32::try_from(n).map_err(|_| format!("`{t}` is too large (at most {})", u32::MAX)),
        Err(_) => Err(format!("`{t}` is not a whole number")),
    }
}

/// A percentage `10%` strictly between 0 and 100, as a fraction (0.1).
/// The `%` is required: a bare `0.05` could mean 5% or 0.05%, and read
/// as the latter it makes `--precision` run until --max-time. A bare
/// number is refused with the spelling it probably meant.
pub fn parse_percent(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let Some(number) = t.strip_suffix('%') else {
        return Err(match t.parse::<f64>() {
            Ok(v) if v > 0.0 && v < 1.0 => format!(
                "`{t}` needs a %: write {}% if {t} is a fraction (or {t}% if you meant {t} percent)",
                trim_float(v * 100.0)
            ),
            Ok(_) => format!("`{t}` needs a %: write {t}%"),
            Err(_) => format!("`{t}` is not a percentage (expected e.g. 10%)"),
        });
    };
    let value: f64 =
        number.trim().parse().map_err(|_| format!("`{t}` is not a percentage (expected e.g. 10%)"))?;
    if !(value > 0.0 && value < 100.0) {
        return Err(format!("`{t}` must be above 0% and below 100%"));
    }
    Ok(value / 100.0)
}

/// `v` with no trailing zeros (5, 0.5, 12.5), for suggesting a spelling.
fn trim_float(v: f64) -> String {
    let text = format!("{v:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        assert_eq!(parse_count("4"), Ok(4));
        assert!(parse_count("0").unwrap_err().contains("0 is not allowed"));
        assert!(parse_count("-3").unwrap_err().contains("negative"));
        assert!(parse_count("2.5").unwrap_err().contains("not a whole number"));
        assert!(parse_count("99999999999").unwrap_err().contains("too large"));
    }

    #[test]
    fn percents() {
        assert_eq!(parse_percent("10%"), Ok(0.1));
        assert_eq!(parse_percent(" 2.5 % "), Ok(0.025));
        let bare = parse_percent("0.05").unwrap_err();
        assert!(bare.contains("write 5%") && bare.contains("0.05%"), "{bare}");
        assert!(parse_percent("0.5").unwrap_err().contains("write 50%"));
        assert!(parse_percent("50").unwrap_err().contains("write 50%"));
        assert!(parse_percent("0%").is_err());
        assert!(parse_percent("100%").is_err());
        assert!(parse_percent("ten").is_err());
    }
}
