//! How the runs of a sweep are planned: `--runs N` independent runs per
//! point (each with its own workers and warm-up), or with `--precision P%`
//! as many as it takes for the 95% confidence interval of the mean to
//! shrink within P% of it, bounded by `--max-time`; in which order
//! (`--order`), which runs are screened out for steal (`--max-steal`), and
//! whether futex syscalls are counted in separate runs (`--count-futex`).
//! The rounds themselves are made by [`crate::engine::rounds`].

pub use crate::measure::futex::CountFutex;
use crate::measure::stats::Stats;
use serde::Serialize;
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

/// Why a point stopped adding runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stopped {
    /// The --runs asked for were done.
    Runs,
    /// The interval reached --precision.
    Precision,
    /// --max-time would have been exceeded by another run first.
    MaxTime,
    /// SIGINT/SIGTERM.
    Interrupted,
}

impl Stopped {
    /// For notes: "precision reached", "max time spent".
    pub fn describe(self) -> &'static str {
        match self {
            Stopped::Runs => "runs done",
            Stopped::Precision => "precision reached",
            Stopped::MaxTime => "max time spent before the precision was reached",
            Stopped::Interrupted => "interrupted",
        }
    }
}

/// What a run was for, as the export records it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// A run of the statistics.
    #[default]
    Measured,
    /// Screened out (steal or other load above --max-steal) and re-run;
    /// kept for the record, out of the statistics.
    Rejected,
    /// The run with the futex tracepoints on (--count-futex separate): it
    /// gives the kernel-work counts and stays out of the statistics.
    Counting,
    /// Cut short by a signal: a shorter window, and often a disturbed one
    /// (the Ctrl-C itself). Out of the statistics when the point has a
    /// complete run; the only run of its point otherwise, and then the
    /// row says so.
    CutShort,
}

/// When and why a run was made; every run in an export carries it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RunInfo {
    /// The round it belongs to (0-based; with --order sequential, the
    /// run's index within its point).
    pub round: u32,
    /// Wall-clock start, ns since the Unix epoch.
    pub start_unix_ns: u64,
    /// Measured, rejected, counting or cut short.
    pub status: RunStatus,
}

/// What the rounds need to know of one run's sample.
pub trait RunRecord {
    /// Its round, start and status.
    fn info(&self) -> &RunInfo;
    /// The same, to fill in.
    fn info_mut(&mut self) -> &mut RunInfo;
    /// The number the interval is about (cs/s, p50 ns, ops/s).
    fn metric(&self) -> f64;
    /// The signal that cut the run short, if one did.
    fn cut_short(&self) -> Option<nix::sys::signal::Signal>;
    /// The share of the machine's CPU time taken from the run by the
    /// hypervisor or by other processes, %; None where not measured.
    fn disturbance_pct(&self) -> Option<f64>;
}

/// Every run of a point and the statistics of its metric over the
/// measured ones.
#[derive(Debug, Clone)]
pub struct Repeated<S> {
    /// The runs, in the order they were made: measured, rejected and
    /// counting.
    pub runs: Vec<S>,
    /// The metric over the measured runs.
    pub stats: Stats,
    /// Why it stopped.
    pub stopped: Stopped,
}

impl<S: RunRecord> Repeated<S> {
    /// Builds the statistics over `runs`' measured runs, or over the run a
    /// signal cut short when there is no other; None if there is neither.
    pub fn new(runs: Vec<S>, stopped: Stopped) -> Option<Self> {
        let values: Vec<f64> = stats_runs(&runs).map(RunRecord::metric).collect();
        (!values.is_empty()).then(|| Repeated {
            stats: Stats::of(&values),
            runs,
            stopped,
        })
    }

    /// Index of the measured run whose metric is closest to the median:
    /// the one reports take their detail columns from.
    pub fn median_run(&self) -> usize {
        let counted = stats_status(&self.runs);
        (0..self.runs.len())
            .filter(|&i| self.runs[i].info().status == counted)
            .min_by(|&a, &b| {
                let d = |i: usize| (self.runs[i].metric() - self.stats.median).abs();
                d(a).total_cmp(&d(b))
            })
            .unwrap_or(0)
    }
}

/// The status of the runs the statistics are over: measured ones, or the
/// cut-short run when no measured run exists.
fn stats_status<S: RunRecord>(runs: &[S]) -> RunStatus {
    if measured(runs).next().is_some() {
        RunStatus::Measured
    } else {
        RunStatus::CutShort
    }
}

/// The runs the statistics are over (see [`stats_status`]).
pub fn stats_runs<S: RunRecord>(runs: &[S]) -> impl Iterator<Item = &S> {
    let status = stats_status(runs);
    runs.iter().filter(move |r| r.info().status == status)
}

/// Whether a point's numbers come from a run a signal cut short (it had
/// no complete run): its row must say so.
pub fn from_cut_short<S: RunRecord>(runs: &[S]) -> bool {
    stats_status(runs) == RunStatus::CutShort && runs.iter().any(|r| r.info().status == RunStatus::CutShort)
}

/// The counting run among `runs`, if one was made.
pub fn counting_run<S: RunRecord>(runs: &[S]) -> Option<&S> {
    runs.iter().find(|r| r.info().status == RunStatus::Counting)
}

/// How many of `runs` were screened out.
pub fn rejected<S: RunRecord>(runs: &[S]) -> usize {
    runs.iter()
        .filter(|r| r.info().status == RunStatus::Rejected)
        .count()
}

/// The measured runs of `runs`.
pub fn measured<S: RunRecord>(runs: &[S]) -> impl Iterator<Item = &S> {
    runs.iter().filter(|r| r.info().status == RunStatus::Measured)
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
