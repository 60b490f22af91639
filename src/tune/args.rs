//! `contend tune`'s flags, as clap sees them.

use crate::family::lock::registry::parse_lock;
use crate::model::value::{parse_count, parse_duration, parse_work, Work};
use crate::output::args::OutputArgs;
use clap::Args;
use std::time::Duration;

/// `contend tune`.
#[derive(Debug, Args)]
#[command(mut_args(crate::output::args::fit_to(
    "lockscale's layout, as `contend lock --format gnuplot`, one row per spin budget tried",
    Some("cs/s against the spin budget, with 95% intervals")
)))]
#[command(next_help_heading = crate::output::args::WORKLOAD)]
pub struct TuneArgs {
    /// The lock to tune (one with a spin budget).
    #[arg(long, short = 'l', value_parser = parse_lock, default_value = "futex")]
    pub lock: &'static str,

    /// Worker threads.
    #[arg(long, short = 't', value_parser = parse_count, default_value = "4", allow_hyphen_values = true)]
    #[arg(value_name = "N")]
    pub threads: u32,

    /// Time inside the lock (as for contend lock).
    #[arg(long, value_parser = parse_work, default_value = "1us", allow_hyphen_values = true)]
    #[arg(value_name = "WORK")]
    pub hold: Work,

    /// Time outside the lock.
    #[arg(long, value_parser = parse_work, default_value = "0", allow_hyphen_values = true)]
    #[arg(value_name = "WORK")]
    pub idle: Work,

    /// Window of each run.
    #[arg(long, short = 'd', value_parser = parse_duration, default_value = "500ms", allow_hyphen_values = true)]
    #[arg(help_heading = crate::output::args::MEASUREMENT)]
    pub duration: Duration,

    /// Warm-up before each run.
    #[arg(long, value_parser = parse_duration, default_value = "100ms", allow_hyphen_values = true)]
    #[arg(help_heading = crate::output::args::MEASUREMENT)]
    #[arg(value_name = "DURATION")]
    pub warmup: Duration,

    /// Runs per spin budget.
    #[arg(long, value_parser = parse_count, default_value = "3", allow_hyphen_values = true)]
    #[arg(help_heading = crate::output::args::MEASUREMENT)]
    #[arg(value_name = "N")]
    pub runs: u32,

    /// Stop refining once this much time is spent (the coarse pass always
    /// completes).
    #[arg(long, value_parser = parse_duration, default_value = "60s", allow_hyphen_values = true)]
    #[arg(help_heading = crate::output::args::MEASUREMENT)]
    #[arg(value_name = "DURATION")]
    pub max_time: Duration,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub output: OutputArgs,
}
