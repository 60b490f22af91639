//! Block sizes for `contend alloc`: a list (`64`, `16,64,256`), a uniform
//! range (`16-4096`) or a log-uniform range (`16-4096:log`, as many small
//! blocks as large ones per doubling).

use serde::Serialize;
use std::fmt;

/// How block sizes are drawn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Sizes {
    /// Cycle through these sizes, bytes.
    List(Vec<usize>),
    /// Uniform over [lo, hi] bytes.
    Uniform(usize, usize),
    /// Log-uniform over [lo, hi] bytes.
    LogUniform(usize, usize),
}

fn bytes(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let (number, scale) = match t.strip_suffix(['k', 'K']) {
        Some(n) => (n, 1024),
        None => (t, 1),
    };
    match number.parse::<usize>() {
        Ok(0) => Err(format!("block size `{t}` must be at least 1 byte")),
        Ok(n) if n.checked_mul(scale).is_some_and(|b| b <= 1 << 30) => Ok(n * scale),
        Ok(_) => Err(format!("block size `{t}` is above 1 GiB")),
        Err(_) => Err(format!("`{t}` is not a size in bytes (e.g. 64, 4k, 16-4096, 16-4096:log)")),
    }
}

/// Parses a size list or range.
pub fn parse_sizes(text: &str) -> Result<Sizes, String> {
    let t = text.trim();
    let (range, log) = match t.strip_suffix(":log") {
        Some(r) => (r, true),
        None => (t, false),
    };
    if let Some((lo, hi)) = range.split_once('-') {
        let (lo, hi) = (bytes(lo)?, bytes(hi)?);
        if lo > hi {
            return Err(format!("size range `{t}` runs backwards"));
        }
        return Ok(if log { Sizes::LogUniform(lo, hi) } else { Sizes::Uniform(lo, hi) });
    }
    if log {
        return Err(format!("`:log` applies to a range like 16-4096:log, not `{t}`"));
    }
    crate::model::value::parse_list(t, bytes).map(Sizes::List)
}

impl fmt::Display for Sizes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sizes::List(v) => write!(f, "{}", v.iter().map(usize::to_string).collect::<Vec<_>>().join(",")),
            Sizes::Uniform(lo, hi) => write!(f, "{lo}-{hi}"),
            Sizes::LogUniform(lo, hi) => write!(f, "{lo}-{hi}:log"),
        }
    }
}

impl Sizes {
    /// The largest block size that can be drawn, bytes.
    pub fn largest(&self) -> usize {
        match self {
            Sizes::List(v) => v.iter().copied().max().unwrap_or(0),
            Sizes::Uniform(_, hi) | Sizes::LogUniform(_, hi) => *hi,
        }
    }
}

/// A deterministic stream of sizes (xorshift64*), one per worker.
#[derive(Debug, Clone)]
pub struct SizeStream<'a> {
    sizes: &'a Sizes,
    state: u64,
    next_index: usize,
}

impl<'a> SizeStream<'a> {
    /// A stream seeded by `seed` (the worker's index).
    pub fn new(sizes: &'a Sizes, seed: u64) -> Self {
        Self { sizes, state: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1, next_index: seed as usize }
    }

    fn random(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// The next size.
    #[inline]
    pub fn next_size(&mut self) -> usize {
        match self.sizes {
            Sizes::List(v) => {
                self.next_index = (self.next_index + 1) % v.len();
                v[self.next_index]
            }
            Sizes::Uniform(lo, hi) => lo + (self.random() % (hi - lo + 1) as u64) as usize,
            Sizes::LogUniform(lo, hi) => {
                let u = (self.random() >> 11) as f64 / (1u64 << 53) as f64;
                let (a, b) = ((*lo as f64).ln(), (*hi as f64).ln());
                ((a + u * (b - a)).exp() as usize).clamp(*lo, *hi)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_parse() {
        assert_eq!(parse_sizes("64"), Ok(Sizes::List(vec![64])));
        assert_eq!(parse_sizes("16,64,4k"), Ok(Sizes::List(vec![16, 64, 4096])));
        assert_eq!(parse_sizes("16-4096"), Ok(Sizes::Uniform(16, 4096)));
        assert_eq!(parse_sizes("16-4096:log"), Ok(Sizes::LogUniform(16, 4096)));
        assert!(parse_sizes("0").unwrap_err().contains("at least 1"));
        assert!(parse_sizes("64-16").unwrap_err().contains("backwards"));
        assert!(parse_sizes("64:log").unwrap_err().contains("range"));
        assert!(parse_sizes("2G").is_err());
        assert!(parse_sizes("big").unwrap_err().contains("not a size"));
    }

    #[test]
    fn streams_stay_in_range() {
        for sizes in [Sizes::Uniform(16, 100), Sizes::LogUniform(16, 4096), Sizes::List(vec![8, 9])] {
            let mut s = SizeStream::new(&sizes, 3);
            for _ in 0..10_000 {
                let n = s.next_size();
                assert!((8..=4096).contains(&n), "{n}");
            }
            assert_eq!(parse_sizes(&sizes.to_string()), Ok(sizes.clone()));
        }
    }
}
