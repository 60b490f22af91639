//! One run as every family records it (its round, start and status), the
//! trait the rounds read a family's sample through, and the runs of one
//! point with the statistics over the measured ones.

use crate::measure::stats::Stats;
use serde::Serialize;

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
    /// A run failed (`contend run`: the program failed under this lock
    /// while it succeeds under glibc's): no more runs, and no statistics
    /// that a comparison could take for a result.
    Failed,
}

impl Stopped {
    /// For notes: "precision reached", "max time spent".
    pub fn describe(self) -> &'static str {
        match self {
            Stopped::Runs => "runs done",
            Stopped::Precision => "precision reached",
            Stopped::MaxTime => "max time spent before the precision was reached",
            Stopped::Interrupted => "interrupted",
            Stopped::Failed => "a run failed",
        }
    }
}

/// What a run was for, as the export records it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
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
    /// The run failed (`contend run`: the program exited with a status not
    /// accepted, died of a signal, or the interposer said it could not go
    /// on); its point stops there and is reported as failed.
    Failed,
}

/// When and why a run was made; every run in an export carries it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
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
    /// The run's window for judging it together with the other runs of
    /// its round, when it is too short to judge alone (see
    /// [`crate::measure::cpu::Window`]); None where not measured.
    fn window(&self) -> Option<crate::measure::cpu::Window> {
        None
    }
    /// Whether the run failed (its point then stops: [`Stopped::Failed`]).
    fn failed(&self) -> bool {
        false
    }
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
        (!values.is_empty()).then(|| Repeated { stats: Stats::of(&values), runs, stopped })
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
/// cut-short run when no measured run exists, or else the failed one (a
/// failed point's numbers are its own, never a result's: see
/// [`Stopped::Failed`]).
fn stats_status<S: RunRecord>(runs: &[S]) -> RunStatus {
    let any = |status| runs.iter().any(|r| r.info().status == status);
    if any(RunStatus::Measured) {
        RunStatus::Measured
    } else if any(RunStatus::CutShort) || !any(RunStatus::Failed) {
        RunStatus::CutShort
    } else {
        RunStatus::Failed
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
    runs.iter().filter(|r| r.info().status == RunStatus::Rejected).count()
}

/// The runs screened out over one or more points, and how much of the
/// machine steal and other load took during each (where it was measured):
/// what the screening warning and the precision note both report.
#[derive(Debug, Default)]
pub struct Screened {
    /// Runs screened out.
    pub count: usize,
    /// The disturbance (% of the machine) of each that measured one.
    pub busy: Vec<f64>,
}

impl Screened {
    /// Adds one point's screened-out runs.
    pub fn add<S: RunRecord>(&mut self, runs: &[S]) {
        for run in runs.iter().filter(|r| r.info().status == RunStatus::Rejected) {
            self.count += 1;
            self.busy.extend(run.disturbance_pct());
        }
    }

    /// The mean and the largest disturbance, when any was measured.
    pub fn busy_mean_max(&self) -> Option<(f64, f64)> {
        (!self.busy.is_empty()).then(|| {
            let mean = self.busy.iter().sum::<f64>() / self.busy.len() as f64;
            (mean, self.busy.iter().copied().fold(0.0, f64::max))
        })
    }
}

/// The measured runs of `runs`.
pub fn measured<S: RunRecord>(runs: &[S]) -> impl Iterator<Item = &S> {
    runs.iter().filter(|r| r.info().status == RunStatus::Measured)
}

/// A run record for unit tests: a status and a disturbance, metric 1.
#[cfg(test)]
pub(crate) mod testing {
    use crate::model::run::{RunInfo, RunRecord, RunStatus};

    /// One run.
    pub(crate) struct Run(pub RunInfo, pub Option<f64>);

    impl Run {
        /// A run of `status` that lost `busy`% of the machine.
        pub(crate) fn new(status: RunStatus, busy: f64) -> Self {
            Run(RunInfo { status, ..Default::default() }, Some(busy))
        }
    }

    impl RunRecord for Run {
        fn info(&self) -> &RunInfo {
            &self.0
        }
        fn info_mut(&mut self) -> &mut RunInfo {
            &mut self.0
        }
        fn metric(&self) -> f64 {
            1.0
        }
        fn cut_short(&self) -> Option<nix::sys::signal::Signal> {
            None
        }
        fn disturbance_pct(&self) -> Option<f64> {
            self.1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::Run;
    use super::*;

    #[test]
    fn screened_counts_rejected_runs_over_points_and_their_disturbance() {
        let mut screened = Screened::default();
        assert_eq!(screened.busy_mean_max(), None);
        screened.add(&[Run::new(RunStatus::Rejected, 30.0), Run::new(RunStatus::Measured, 90.0)]);
        screened.add(&[Run(RunInfo { status: RunStatus::Rejected, ..Default::default() }, None)]);
        screened.add(&[Run::new(RunStatus::Rejected, 50.0)]);
        assert_eq!(screened.count, 3);
        assert_eq!(screened.busy_mean_max(), Some((40.0, 50.0)));
    }
}
