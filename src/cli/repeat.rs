//! The repetition flags every family shares.

use crate::parse::{parse_count, parse_duration, parse_percent};
use clap::Args;
use std::time::Duration;

/// `--runs`, `--precision`, `--max-time`.
#[derive(Debug, Args)]
pub struct RepeatArgs {
    /// Independent runs per point (each with its own workers and
    /// warm-up); the report gives the mean and its 95% confidence
    /// interval (Student's t).
    #[arg(long, value_parser = parse_count, default_value = "3", allow_hyphen_values = true)]
    pub runs: u32,

    /// Keep adding runs until the 95% interval's half-width is within
    /// this share of the mean (e.g. 2%), or --max-time is spent.
    #[arg(long, value_parser = parse_percent, value_name = "PERCENT")]
    pub precision: Option<f64>,

    /// With --precision: the most time to spend on one point (default 60s).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION", requires = "precision")]
    pub max_time: Option<Duration>,
}

impl RepeatArgs {
    /// The validated plan.
    pub fn plan(&self) -> Result<crate::runner::repeat::Repeat, String> {
        // parse_percent yields a fraction (0.02 for 2%).
        crate::runner::repeat::Repeat::new(self.runs, self.precision.map(|p| p * 100.0), self.max_time)
    }
}
