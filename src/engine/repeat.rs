//! How the runs of a sweep are planned: `--runs N` independent runs per
//! point (each with its own workers and warm-up), or with `--precision P%`
//! as many as it takes for the 95% confidence interval of the mean to
//! shrink within P% of it, bounded by `--max-time`; in which order
//! (`--order`), which runs are screened out for steal (`--max-steal`), and
//! whether futex syscalls are counted in separate runs (`--count-futex`).
//! The rounds themselves are made by [`crate::engine::rounds`].

pub use crate::measure::futex::CountFutex;
use serde::Serialize;

pub use crate::model::run::*;
use std::time::Duration;

/// In which order the runs of a sweep's points are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// Rounds: each runs every unfinished point once, in a fresh random
    /// order, so a burst of host noise lands on all variants alike.
    Interleaved,
    /// Every run of the first point, then every run of the next.
    Sequential,
}

/// The plan for a sweep's runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Repeat {
    /// Runs at least (with --precision) or exactly (without), per point.
    pub runs: u32,
    /// Target half-width of the 95% interval, % of the mean.
    pub precision_pct: Option<f64>,
    /// With a precision target: stop adding runs to a point once another
    /// would take its own runs past this, ns.
    pub max_time_ns: u64,
    /// The order of the runs.
    pub order: Order,
    /// Seed of the interleaved order's shuffles (given or drawn), so an
    /// order can be replayed.
    pub seed: u64,
    /// Re-run a run whose steal, or CPU load from other processes, went
    /// above this share of the machine's CPU time, %; None: no screening.
    pub max_steal_pct: Option<f64>,
    /// Where futex counts come from.
    pub count_futex: CountFutex,
}

/// How many times one run is re-made after a screening rejection; the
/// last attempt is kept whatever its steal (and flagged in the warnings),
/// so a host that is noisy all the time still produces a result.
pub const MAX_RERUNS: u32 = 3;

/// The default `--max-steal`, %: see the flag's help for why.
pub const DEFAULT_MAX_STEAL_PCT: f64 = 10.0;

impl Repeat {
    /// One run, as in a single measurement, futex counts in that run.
    pub const ONCE: Repeat = Repeat {
        runs: 1,
        precision_pct: None,
        max_time_ns: 0,
        order: Order::Sequential,
        seed: 0,
        max_steal_pct: None,
        count_futex: CountFutex::Inline,
    };

    /// Checks the repetition flags' values; `max_time` defaults to 60 s
    /// per point. Order, screening and counting take their defaults
    /// (interleaved, 10% steal, separate counting); set them after.
    pub fn new(runs: u32, precision_pct: Option<f64>, max_time: Option<Duration>) -> Result<Self, String> {
        if runs == 0 {
            return Err("--runs must be at least 1".into());
        }
        if let Some(p) = precision_pct {
            if !(p > 0.0 && p < 100.0) {
                return Err(format!("--precision {p}% must be between 0 and 100%"));
            }
        }
        if max_time.is_some() && precision_pct.is_none() {
            return Err("--max-time bounds --precision; give --precision too".into());
        }
        if max_time.is_some_and(|d| d.is_zero()) {
            return Err("--max-time must be longer than 0".into());
        }
        Ok(Repeat {
            runs,
            precision_pct,
            max_time_ns: max_time.unwrap_or(Duration::from_secs(60)).as_nanos() as u64,
            order: Order::Interleaved,
            seed: 0,
            max_steal_pct: Some(DEFAULT_MAX_STEAL_PCT),
            count_futex: CountFutex::Separate,
        })
    }

    /// The fewest measured runs a point gets: an interval needs two.
    pub fn least(&self) -> usize {
        if self.precision_pct.is_some() {
            self.runs.max(2) as usize
        } else {
            self.runs as usize
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_plans_are_refused() {
        assert!(Repeat::new(0, None, None).is_err());
        assert!(Repeat::new(3, Some(0.0), None).is_err());
        assert!(Repeat::new(3, None, Some(Duration::from_secs(1))).is_err());
        assert!(Repeat::new(3, Some(2.0), Some(Duration::ZERO)).is_err());
        assert_eq!(Repeat::new(1, Some(2.0), None).unwrap().least(), 2);
        assert_eq!(Repeat::new(5, None, None).unwrap().least(), 5);
    }
}
