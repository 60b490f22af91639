//! The repetition flags every family shares: how many runs, in which
//! order, which are screened out, and where the futex counts come from.

use crate::engine::repeat::{CountFutex, Order, Repeat};
use crate::model::value::{parse_count, parse_duration, parse_percent};
use clap::Args;
use std::time::Duration;

/// `--runs`, `--precision`, `--max-time`, `--order`, `--seed`,
/// `--max-steal`, `--count-futex`.
#[derive(Debug, Args)]
#[command(next_help_heading = crate::output::args::MEASUREMENT)]
pub struct RepeatArgs {
    /// Independent runs per point (each with its own workers and
    /// warm-up); the report gives the mean and its 95% confidence
    /// interval (Student's t).
    #[arg(long, value_parser = parse_count, default_value = "3", allow_hyphen_values = true)]
    #[arg(value_name = "N")]
    pub runs: u32,

    /// Keep adding runs until the 95% interval's half-width is within
    /// this share of the mean (e.g. 2%), or --max-time is spent.
    #[arg(long, value_parser = parse_percent, value_name = "PERCENT")]
    pub precision: Option<f64>,

    /// With --precision: the time to spend on one point's runs. In
    /// interleaved order it is pooled: the sweep may spend this times the
    /// number of points, and points that reach their precision early
    /// leave their share to the noisier ones [default: 60s].
    #[arg(long, value_parser = parse_duration, value_name = "DURATION", requires = "precision")]
    pub max_time: Option<Duration>,

    /// interleaved: rounds, each running every point once in a fresh
    /// random order, so host noise lands on all points alike and runs of
    /// one round can be paired (`contend compare --baseline`);
    /// sequential: all runs of one point, then the next.
    #[arg(long, value_enum, default_value_t = Order::Interleaved)]
    pub order: Order,

    /// Seed of the interleaved order, recorded in the export so the order
    /// can be replayed [default: drawn at random].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Re-run (up to 3 times) a run in which the hypervisor's steal, or
    /// CPU load from other processes, took more than this share of the
    /// machine's CPU time; the rejected run stays in the export, marked.
    /// `off` screens nothing. Default 10%: on the noisy 2-vCPU guest
    /// contend was developed on, quiet windows showed 0-3% steal and
    /// bursts 20-50%, and 10% of a run's CPU time taken away moves a rate
    /// by up to that much.
    #[arg(long, value_parser = parse_max_steal, value_name = "PERCENT|off",
          default_value = "10%")]
    pub max_steal: MaxSteal,

    /// Where futex syscall counts come from. separate: one extra run per
    /// point with the syscall tracepoints on, kept out of the rates (the
    /// measured runs run untraced); off: no counts; inline: count during
    /// the measured runs (perturbing: an enabled syscall tracepoint slows
    /// every syscall). Counting needs root or CAP_PERFMON; without it the
    /// run says so and counts nothing.
    #[arg(long, value_enum, default_value_t = CountFutex::Separate)]
    #[arg(value_name = "WHEN")]
    pub count_futex: CountFutex,
}

/// `--max-steal`: a share in %, or no screening.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MaxSteal(pub Option<f64>);

fn parse_max_steal(s: &str) -> Result<MaxSteal, String> {
    if s == "off" {
        return Ok(MaxSteal(None));
    }
    parse_percent(s).map(|fraction| MaxSteal(Some(fraction * 100.0))).map_err(|e| format!("{e} (or `off`)"))
}

impl RepeatArgs {
    /// The validated plan.
    pub fn plan(&self) -> Result<Repeat, String> {
        // parse_percent yields a fraction (0.02 for 2%).
        let base = Repeat::new(self.runs, self.precision.map(|p| p * 100.0), self.max_time)?;
        Ok(Repeat {
            order: self.order,
            // Drawn below 2^32 so the export's number survives JSON readers
            // that parse integers as doubles.
            seed: self.seed.unwrap_or_else(|| u64::from(fastrand::u32(..))),
            max_steal_pct: self.max_steal.0,
            count_futex: self.count_futex,
            ..base
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_steal_takes_a_share_or_off() {
        assert_eq!(parse_max_steal("10%").unwrap(), MaxSteal(Some(10.0)));
        assert_eq!(parse_max_steal("off").unwrap(), MaxSteal(None));
        assert!(parse_max_steal("0%").is_err());
        assert!(parse_max_steal("150%").is_err());
        assert!(parse_max_steal("lots").is_err());
        assert_eq!(
            MaxSteal(Repeat::new(1, None, None).unwrap().max_steal_pct),
            parse_max_steal("10%").unwrap()
        );
    }
}
