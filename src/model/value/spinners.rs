//! `--spinners none|one|many`: the FUTEX_LOCK RFC's waiting policies.

use super::choice::{choice_name, parse_choice};
use serde::Serialize;
use std::fmt;

/// Which waiters spin before sleeping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SpinPolicy {
    /// Sleep at once.
    None,
    /// One adaptive spinner; the rest sleep.
    One,
    /// Every waiter spins.
    Many,
}

impl From<SpinPolicy> for locks::Spinners {
    fn from(p: SpinPolicy) -> Self {
        match p {
            SpinPolicy::None => locks::Spinners::None,
            SpinPolicy::One => locks::Spinners::One,
            SpinPolicy::Many => locks::Spinners::Many,
        }
    }
}

/// Each policy's CLI name.
const NAMES: [(&str, SpinPolicy); 3] =
    [("none", SpinPolicy::None), ("one", SpinPolicy::One), ("many", SpinPolicy::Many)];

impl fmt::Display for SpinPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(choice_name(*self, &NAMES))
    }
}

/// Parses `none`, `one` or `many`.
pub fn parse_spinners(text: &str) -> Result<SpinPolicy, String> {
    parse_choice(text, "spinner policy", &NAMES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse_and_print() {
        for p in [SpinPolicy::None, SpinPolicy::One, SpinPolicy::Many] {
            assert_eq!(parse_spinners(&p.to_string()), Ok(p));
        }
        assert!(parse_spinners("some").unwrap_err().contains("none, one or many"));
    }
}
