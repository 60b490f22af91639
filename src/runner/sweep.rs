//! Runs every point of a spec in order, with a progress bar on a terminal,
//! owning the run's resources and collecting the warnings that apply to the
//! whole sweep. An interrupt ends the sweep after the point it cut short;
//! what was measured so far is kept.

use super::resources::Resources;
use crate::measure::env::cpus_online;
use crate::measure::futex::FutexTracepoints;
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

/// A point and what it measured.
#[derive(Debug, Clone, Serialize)]
pub struct PointResult {
    /// What was run.
    pub point: Point,
    /// What was measured.
    pub sample: LockSample,
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

/// Runs the sweep.
pub fn run_lock_sweep(spec: &LockSpec) -> Result<SweepOutcome> {
    let points = spec.points();
    let mut warnings = Vec::new();
    let entries: Vec<_> = spec.locks.iter().filter_map(|l| registry::find(l)).collect();
    let mut resources = Resources::new();
    let ctx = RunContext {
        // Opened here, on the thread that starts every point's workers, so
        // that all of them (threads and forked processes) inherit them.
        futex: match FutexTracepoints::find().and_then(|tp| tp.open()) {
            Ok(counters) => Some(counters),
            Err(why) => {
                warnings.push(format!("futex syscall counts unavailable: {why}"));
                None
            }
        },
        lock_file: match entries.iter().any(|e| e.caps.needs_file) {
            true => Some(resources.lock_file(&spec.lock_dir)?),
            false => None,
        },
        sysv_set: match entries.iter().any(|e| e.caps.needs_sem_set) {
            true => Some(resources.sem_set()?),
            false => None,
        },
    };
    let cpus = cpus_online();
    if let Some(&most) = spec.workers.iter().filter(|&&t| t as usize > cpus).max() {
        warnings.push(format!(
            "{most} {} on {cpus} online CPUs: oversubscribed, so lock holders get preempted \
             inside the critical section and waiters that spin burn CPU the holder needs",
            spec.mode.label()
        ));
    }

    warnings.extend(crate::measure::warnings::for_machine());
    let per_point = Duration::from_nanos(spec.duration_ns + spec.warmup_ns);
    let bar = progress_bar(spec.progress, points.len(), per_point);
    let mut results = Vec::with_capacity(points.len());
    let mut interrupted = None;
    for point in points {
        bar.set_message(point.label());
        let entry = registry::find(point.lock).ok_or_else(|| anyhow!("lock `{}` vanished", point.lock))?;
        let run = match point.mode {
            Mode::Threads => entry.run,
            Mode::Processes => entry
                .run_procs
                .ok_or_else(|| anyhow!("`{}` has no process form", entry.name))?,
        };
        let cut_short = |s: &LockSample| s.interrupted.as_deref().and_then(|s| s.parse::<Signal>().ok());
        let (sample, stop) = super::point_outcome(run(&point, &ctx), cut_short)?;
        if let Some(sample) = sample {
            let result = PointResult { point, sample };
            warnings.extend(crate::measure::warnings::for_point(&result, cpus));
            results.push(result);
        }
        if stop.is_some() {
            interrupted = stop;
            break;
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if let Some(sig) = interrupted {
        warnings.push(format!(
            "interrupted by {sig}: {} of {} points measured; the last one's window was cut short \
             (its rates still divide by the time it really ran)",
            results.len(),
            spec.points().len()
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
