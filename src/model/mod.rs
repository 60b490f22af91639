//! What every family's results have in common: a point, the runs made of
//! it, and the statistics over the measured ones. Each family supplies
//! its point and its sample (one run) types; reports and `compare` read
//! every family through this one shape.

pub mod advice;
pub mod alloc;
pub mod family;
pub mod futex_word;
pub mod lock;
pub mod mutex_profile;
pub mod program;
pub mod run;
pub mod value;
pub mod wakeup;
pub mod warning;

use crate::measure::stats::Stats;
use crate::model::run::{counting_run, Repeated, RunRecord, Stopped};
use serde::Serialize;

/// A point and what its runs measured.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[schemars(rename = "Measured_{P}")]
pub struct Measured<P, S> {
    /// What was run.
    pub point: P,
    /// The run the detail columns come from: the measured run with the
    /// median metric (lock, alloc), or every measured run merged (wakeup).
    pub sample: S,
    /// The family's metric over the measured runs: mean, 95% interval,
    /// spread, outliers.
    pub stats: Stats,
    /// Why no more runs were made.
    pub stopped: Stopped,
    /// Every run, in the order made, each with its round, start time and
    /// status: measured, rejected (screened out for steal), counting (the
    /// futex counts, out of the statistics) or cut short by a signal.
    pub runs: Vec<S>,
}

impl<P, S: RunRecord + Clone> Measured<P, S> {
    /// The result of `point` whose detail sample is its median run.
    pub fn median(point: P, repeated: Repeated<S>) -> Self {
        let median = repeated.median_run();
        Self::with_sample(point, repeated.runs[median].clone(), repeated)
    }
}

impl<P, S: RunRecord> Measured<P, S> {
    /// The result of `point` with `sample` as its detail sample.
    pub fn with_sample(point: P, sample: S, repeated: Repeated<S>) -> Self {
        Measured { point, sample, stats: repeated.stats, stopped: repeated.stopped, runs: repeated.runs }
    }

    /// The run the kernel-work columns (futex calls and errors) come from:
    /// the counting run when futex calls were counted separately, else the
    /// detail sample.
    pub fn kernel_run(&self) -> &S {
        counting_run(&self.runs).unwrap_or(&self.sample)
    }
}

/// A user mistake; the message names the flag that fixes it. Exit status 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SpecError(pub String);

/// Whether workers are threads of contend or processes forked from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Threads of this process.
    Threads,
    /// Forked worker processes sharing memory.
    Processes,
}

impl Mode {
    /// "threads" or "procs", for headings.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Threads => "threads",
            Mode::Processes => "procs",
        }
    }
}
