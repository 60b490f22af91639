//! Runs every point of a spec in order, each repeated as `--runs` and
//! `--precision` say, with a progress bar on a terminal, owning the run's
//! resources and collecting the warnings that apply to the whole sweep. An
//! interrupt ends the sweep after the run it cut short; what was measured
//! so far is kept.

use super::repeat::{repeat, Repeat, Repeated, Stopped};
use super::resources::Resources;
use crate::measure::env::cpus_online;
use crate::measure::futex::FutexTracepoints;
use crate::measure::stats::Stats;
use crate::registry;
use crate::spec::{LockSpec, Mode, Point};
use crate::workloads::lock::RunContext;
use crate::workloads::lock_sample::LockSample;
use anyhow::{anyhow, Result};
use indicatif::{ProgressBar, ProgressStyle};
use nix::sys::signal::Signal;
use serde::Serialize;
use std::io::IsTerminal;
use std::time::Duration;

/// A point and what its runs measured.
#[derive(Debug, Clone, Serialize)]
pub struct PointResult {
    /// What was run.
    pub point: Point,
    /// The run with the median cs/s: the detail columns (CPU split,
    /// fairness, counters) come from it. It is also one of `runs`.
    pub sample: LockSample,
    /// Critical sections per second over the runs: mean, interval, spread.
    pub stats: Stats,
    /// Why no more runs were made.
    pub stopped: Stopped,
    /// Every run, in order.
    pub runs: Vec<LockSample>,
}

impl PointResult {
    /// Builds the result from a point's runs.
    pub fn new(point: Point, repeated: Repeated<LockSample>) -> Self {
        let median = repeated.median_run(|s| s.cs_per_s);
        PointResult {
            point,
            sample: repeated.runs[median].clone(),
            stats: repeated.stats,
            stopped: repeated.stopped,
            runs: repeated.runs,
        }
    }

    /// A result of a single run (tests, and code that measures once).
    pub fn single(point: Point, sample: LockSample) -> Self {
        Self::new(
            point,
            Repeated {
                stats: Stats::of(&[sample.cs_per_s]),
                runs: vec![sample],
                stopped: Stopped::Runs,
            },
        )
    }
}

/// A finished (or interrupted) sweep.
#[derive(Debug, Clone)]
pub struct SweepOutcome {
    /// One result per point measured, in spec order.
    pub results: Vec<PointResult>,
    /// Things the reader must know to trust the numbers, one line each.
    pub warnings: Vec<String>,
    /// The signal that stopped the sweep early, if one did.
    pub interrupted: Option<Signal>,
}

/// Below this estimated length no progress bar is worth drawing.
const PROGRESS_MIN: Duration = Duration::from_secs(2);

/// What running lock points needs once per command: the futex counters
/// (opened on this thread, so every worker inherits them), the lock file
/// and SysV set, owned until the session is dropped.
pub struct LockSession {
    ctx: RunContext,
    _resources: Resources,
    cpus: usize,
}

impl LockSession {
    /// Opens what `locks` need; warnings go to `warnings`.
    pub fn open(locks: &[&str], lock_dir: &std::path::Path, warnings: &mut Vec<String>) -> Result<Self> {
        let entries: Vec<_> = locks.iter().filter_map(|l| registry::find(l)).collect();
        let mut resources = Resources::new();
        let ctx = RunContext {
            futex: match FutexTracepoints::find().and_then(|tp| tp.open()) {
                Ok(counters) => Some(counters),
                Err(why) => {
                    warnings.push(format!("futex syscall counts unavailable: {why}"));
                    None
                }
            },
            lock_file: match entries.iter().any(|e| e.caps.needs_file) {
                true => Some(resources.lock_file(lock_dir)?),
                false => None,
            },
            sysv_set: match entries.iter().any(|e| e.caps.needs_sem_set) {
                true => Some(resources.sem_set()?),
                false => None,
            },
        };
        Ok(Self {
            ctx,
            _resources: resources,
            cpus: cpus_online(),
        })
    }

    /// Runs one point as `plan` says. Returns its result (None if
    /// interrupted before its first run measured anything) and the signal
    /// that should end the sweep.
    pub fn run_point(
        &self,
        point: Point,
        plan: &Repeat,
        warnings: &mut Vec<String>,
    ) -> Result<(Option<PointResult>, Option<Signal>)> {
        let entry = registry::find(point.lock).ok_or_else(|| anyhow!("lock `{}` vanished", point.lock))?;
        let run = match point.mode {
            Mode::Threads => entry.run,
            Mode::Processes => entry
                .run_procs
                .ok_or_else(|| anyhow!("`{}` has no process form", entry.name))?,
        };
        let cut_short = |s: &LockSample| s.interrupted.as_deref().and_then(|s| s.parse::<Signal>().ok());
        let (repeated, stop) = repeat(plan, || run(&point, &self.ctx), |s| s.cs_per_s, cut_short)?;
        let result = repeated.map(|r| PointResult::new(point, r));
        if let Some(r) = &result {
            warnings.extend(crate::measure::warnings::for_point(r, self.cpus));
        }
        Ok((result, stop))
    }
}

/// Runs the sweep.
pub fn run_lock_sweep(spec: &LockSpec) -> Result<SweepOutcome> {
    let points = spec.points();
    let total = points.len();
    let mut warnings = Vec::new();
    let session = LockSession::open(&spec.locks, &spec.lock_dir, &mut warnings)?;
    let cpus = session.cpus;
    if let Some(&most) = spec.workers.iter().filter(|&&t| t as usize > cpus).max() {
        warnings.push(format!(
            "{most} {} on {cpus} online CPUs: oversubscribed, so lock holders get preempted \
             inside the critical section and waiters that spin burn CPU the holder needs",
            spec.mode.label()
        ));
    }
    warnings.extend(crate::measure::warnings::for_machine());
    let per_point = Duration::from_nanos(spec.duration_ns + spec.warmup_ns) * spec.repeat.runs;
    let bar = progress_bar(spec.progress, total, per_point);
    let mut results = Vec::with_capacity(total);
    let mut interrupted = None;
    for point in points {
        bar.set_message(point.label());
        let (result, stop) = session.run_point(point, &spec.repeat, &mut warnings)?;
        results.extend(result);
        if stop.is_some() {
            interrupted = stop;
            break;
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if let Some(sig) = interrupted {
        warnings.push(format!(
            "interrupted by {sig}: {} of {total} points measured; the last run was cut short \
             (its rates still divide by the time it really ran)",
            results.len(),
        ));
    }
    Ok(SweepOutcome {
        results,
        warnings,
        interrupted,
    })
}

/// A progress bar for `points` points of about `per_point` each, hidden when
/// not wanted, not on a terminal, or too short to matter.
pub(crate) fn progress_bar(wanted: bool, points: usize, per_point: Duration) -> ProgressBar {
    let estimate = per_point * points as u32;
    if !wanted || !std::io::stderr().is_terminal() || estimate < PROGRESS_MIN {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(points as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} points, ETA {eta}  {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}
