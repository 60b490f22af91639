//! Durations written with a unit: `100ns`, `2.5us`, `1µs`, `10ms`, `5s`.
//!
//! Parsed exactly in integer nanoseconds (no floating point), so `2.5us` is
//! 2500 ns and `0.3ns` is refused rather than rounded.

use std::time::Duration;

const UNITS: &[(&str, u64)] =
    &[("ns", 1), ("us", 1_000), ("µs", 1_000), ("μs", 1_000), ("ms", 1_000_000), ("s", 1_000_000_000)];

/// Parses a duration with a unit into nanoseconds. A bare `0` is allowed.
pub fn parse_nanos(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty duration (expected e.g. 1us, 250ns, 10ms, 2s)".into());
    }
    if t == "0" {
        return Ok(0);
    }
    if t.starts_with('-') {
        return Err(format!("`{t}` is negative; durations must be >= 0"));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("`{t}` has no unit (write e.g. {t}ns, {t}us, {t}ms or {t}s)"))?;
    let (number, unit) = t.split_at(split);
    let known_unit = UNITS.iter().any(|(name, _)| *name == unit);
    if number.is_empty() && !known_unit {
        return Err(format!(
            "`{t}` is not a duration (expected a number and a unit, e.g. 250ns, 1us, 10ms, 2s)"
        ));
    }
    let scale = UNITS
        .iter()
        .find(|(name, _)| *name == unit)
        .map(|(_, scale)| *scale)
        .ok_or_else(|| format!("unknown unit `{unit}` in `{t}` (expected ns, us, ms or s)"))?;
    let (whole, frac) = match number.split_once('.') {
        Some((w, f)) => (w, f),
        None => (number, ""),
    };
    if whole.is_empty() && frac.is_empty() {
        return Err(format!("`{t}` has no number before the unit"));
    }
    let bad_number = || format!("`{number}` in `{t}` is not a number");
    let whole_ns = if whole.is_empty() {
        0
    } else {
        whole
            .parse::<u64>()
            .map_err(|_| bad_number())?
            .checked_mul(scale)
            .ok_or_else(|| format!("`{t}` is too long"))?
    };
    let mut frac_ns = 0u64;
    let mut place = scale;
    for digit in frac.chars() {
        let d = digit.to_digit(10).ok_or_else(bad_number)? as u64;
        if place < 10 {
            if d != 0 {
                return Err(format!("`{t}` is finer than a nanosecond"));
            }
            continue;
        }
        place /= 10;
        frac_ns += d * place;
    }
    whole_ns
        .checked_add(frac_ns)
        .filter(|&ns| ns <= LONGEST_NS)
        .ok_or_else(|| format!("`{t}` is longer than a week, the longest duration contend accepts"))
}

/// The longest duration any flag accepts: a week. Far beyond any sensible
/// window, hold or timeout, and small enough that no sum or product of
/// them the planner makes (a drain grace of 4 turns per worker, a deadline
/// from now) can overflow.
pub const LONGEST_NS: u64 = 7 * 24 * 3600 * 1_000_000_000;

/// Parses a duration with a unit into a [`Duration`].
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    parse_nanos(text).map(Duration::from_nanos)
}

/// Formats nanoseconds with the largest unit that keeps it exact to three
/// decimals: `1µs`, `2.5µs`, `100ns`, `10ms`, `0`.
pub fn format_nanos(ns: u64) -> String {
    if ns == 0 {
        return "0".into();
    }
    for (unit, scale) in [("s", 1_000_000_000u64), ("ms", 1_000_000), ("µs", 1_000)] {
        if ns >= scale && (ns * 1000) % scale == 0 {
            let whole = ns / scale;
            let frac = ns % scale;
            if frac == 0 {
                return format!("{whole}{unit}");
            }
            let digits = format!("{:03}", frac * 1000 / scale);
            return format!("{whole}.{}{unit}", digits.trim_end_matches('0'));
        }
    }
    format!("{ns}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_scale_to_nanoseconds() {
        assert_eq!(parse_nanos("100ns"), Ok(100));
        assert_eq!(parse_nanos("1us"), Ok(1_000));
        assert_eq!(parse_nanos("1µs"), Ok(1_000));
        assert_eq!(parse_nanos("1μs"), Ok(1_000));
        assert_eq!(parse_nanos("10ms"), Ok(10_000_000));
        assert_eq!(parse_nanos("2s"), Ok(2_000_000_000));
        assert_eq!(parse_nanos("0"), Ok(0));
        assert_eq!(parse_nanos("0ns"), Ok(0));
        assert_eq!(parse_nanos(" 5us "), Ok(5_000));
    }

    #[test]
    fn decimals_are_exact() {
        assert_eq!(parse_nanos("2.5us"), Ok(2_500));
        assert_eq!(parse_nanos("0.001s"), Ok(1_000_000));
        assert_eq!(parse_nanos(".5ms"), Ok(500_000));
        assert_eq!(parse_nanos("1.000ns"), Ok(1));
        assert!(parse_nanos("0.5ns").unwrap_err().contains("finer"));
    }

    #[test]
    fn malformed_input_is_refused_with_a_reason() {
        assert!(parse_nanos("").unwrap_err().contains("empty"));
        assert!(parse_nanos("10").unwrap_err().contains("no unit"));
        assert!(parse_nanos("-1us").unwrap_err().contains("negative"));
        assert!(parse_nanos("5 parsecs").unwrap_err().contains("unknown unit"));
        assert!(parse_nanos("us").unwrap_err().contains("no number"));
        assert!(parse_nanos("soon").unwrap_err().contains("not a duration"));
        assert!(parse_nanos("1.2.3us").unwrap_err().contains("not a number"));
        assert!(parse_nanos("99999999999999999999s").is_err());
        assert!(parse_nanos("18446744074s").unwrap_err().contains("too long"));
        assert!(parse_nanos("18446744073s").unwrap_err().contains("longer than a week"));
        assert_eq!(parse_nanos("604800s"), Ok(LONGEST_NS));
        assert!(parse_nanos("604800.000000001s").is_err());
    }

    #[test]
    fn formatting_round_trips() {
        for ns in [0, 1, 100, 999, 1_000, 2_500, 1_000_000, 1_500_000, 3_000_000_000, 1_234] {
            let text = format_nanos(ns);
            assert_eq!(parse_nanos(&text), Ok(ns), "{ns} -> {text}");
        }
        assert_eq!(format_nanos(2_500), "2.5µs");
        assert_eq!(format_nanos(1_234), "1.234µs");
        assert_eq!(format_nanos(1_234_567), "1234.567µs");
        assert_eq!(format_nanos(1_001), "1.001µs");
        assert_eq!(format_nanos(1_000_001), "1000.001µs");
        assert_eq!(format_nanos(999), "999ns");
    }
}
