//! How a sweep counts futex syscalls (`--count-futex`), resolved against
//! what this machine allows: not at all, inline over every run, or in one
//! separate counting run per point (see [`crate::measure::futex`]). The
//! engine's decision, with the warning the reader must see.

use crate::measure::futex::{CountFutex, FutexCounters, FutexTracepoints};
use crate::model::warning::{Warning, WarningKind};

/// How a sweep counts, resolved against what this machine allows.
#[derive(Debug)]
pub enum FutexPlan {
    /// No counts.
    Off,
    /// Counters open for the whole sweep, every run counted.
    Inline(FutexCounters),
    /// Counters opened for each counting run only.
    Separate(FutexTracepoints),
}

impl FutexPlan {
    /// Resolves `mode`; what the reader must know goes to `warnings`
    /// (counting unavailable and why, or inline counting's perturbation).
    pub fn resolve(mode: CountFutex, warnings: &mut Vec<Warning>) -> Self {
        let found = match mode {
            CountFutex::Off => return FutexPlan::Off,
            _ => FutexTracepoints::find(),
        };
        // A trial open, so a missing permission shows up before the runs
        // rather than in the last one.
        match found.and_then(|tp| tp.open().map(|c| (tp, c))) {
            Ok((_, counters)) if mode == CountFutex::Inline => {
                warnings.push(Warning::sweep(
                    WarningKind::FutexCounting,
                    "futex syscalls counted inside the measured runs (--count-futex inline): an enabled \
                     syscall tracepoint sends every syscall of every task through the tracing slow path, \
                     so the rates and latencies here are lower than unperturbed ones",
                ));
                FutexPlan::Inline(counters)
            }
            Ok((tp, _)) => FutexPlan::Separate(tp),
            Err(why) => {
                warnings.push(Warning::sweep(
                    WarningKind::FutexCounting,
                    format!("futex syscall counts unavailable: {why}"),
                ));
                FutexPlan::Off
            }
        }
    }

    /// Whether a counting run per point is wanted.
    pub fn separate(&self) -> bool {
        matches!(self, FutexPlan::Separate(_))
    }

    /// Splits off the counters of an inline plan, which the caller keeps
    /// open for the whole sweep; what remains says whether counting runs
    /// are wanted.
    pub fn split_inline(self) -> (FutexPlan, Option<FutexCounters>) {
        match self {
            FutexPlan::Inline(counters) => (FutexPlan::Off, Some(counters)),
            other => (other, None),
        }
    }

    /// Fresh counters for one counting run, opened on the calling thread
    /// (so the workers it starts inherit them); dropping them closes the
    /// tracepoints again.
    pub fn open_for_count(&self) -> anyhow::Result<Option<FutexCounters>> {
        match self {
            FutexPlan::Separate(tp) => tp.open().map(Some).map_err(anyhow::Error::msg),
            _ => Ok(None),
        }
    }
}
