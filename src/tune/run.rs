//! `contend tune`: which spin budget maximizes throughput? The classic
//! futex-scalability question, answered by search instead of a table (for
//! pthread-adaptive, the budget is glibc's mutex spin count, 1..32767). A
//! coarse pass measures the decades 1..100000 (the seed's budgets); then
//! each refinement measures the two budgets halfway (in log space) to the
//! neighbours of the current best, halving the step each time, until the
//! step is under 15% or another round would overrun --max-time. The
//! answer is the best budget's mean with its 95% interval, and the other
//! budgets a Welch test cannot tell apart from it.

use crate::engine::repeat::Repeat;
use crate::family::lock::spec::{Mode, Point};
use crate::family::lock::sweep::{LockSession, PointResult};
use crate::measure::stats::welch;
use crate::model::warning::Warning;
use crate::session::resources::DEFAULT_LOCK_DIR;
use crate::tune::spec::{Knob, TuneSpec};
use anyhow::Result;
use nix::sys::signal::Signal;
use std::path::Path;
use std::time::{Duration, Instant};

/// Refinement stops when the step factor falls below this.
const FINEST_STEP: f64 = 1.15;

/// What the search found.
#[derive(Debug, Clone)]
pub struct TuneOutcome {
    /// Every budget measured, by spin.
    pub results: Vec<PointResult>,
    /// Index of the best in `results`.
    pub best: Option<usize>,
    /// Budgets not significantly different from the best (p >= 0.05).
    pub ties: Vec<u32>,
    /// Why refinement ended.
    pub ended: &'static str,
    /// Warnings for the reader.
    pub warnings: Vec<Warning>,
    /// The signal that cut the search short.
    pub interrupted: Option<Signal>,
    /// How long the search took.
    pub took: Duration,
    /// What was searched.
    pub knob: Knob,
}

fn point(spec: &TuneSpec, value: u32) -> Point {
    let p = Point {
        hold: spec.hold,
        idle: spec.idle,
        duration_ns: spec.duration_ns,
        warmup_ns: spec.warmup_ns,
        ..Point::new(spec.lock, Mode::Threads, spec.threads)
    };
    spec.knob.set(p, value)
}

fn best_of(results: &[PointResult]) -> Option<usize> {
    (0..results.len()).max_by(|&a, &b| results[a].stats.mean.total_cmp(&results[b].stats.mean))
}

/// Runs the search.
pub fn run_tune(spec: &TuneSpec) -> Result<TuneOutcome> {
    let started = Instant::now();
    let budget = Duration::from_nanos(spec.max_time_ns);
    let mut warnings = Vec::new();
    let plan: Repeat = spec.repeat;
    let session = LockSession::open(&[spec.lock], Path::new(DEFAULT_LOCK_DIR), false, &plan, &mut warnings)?;
    // The coarse pass is the plan; refinement adds runs until --max-time,
    // which also caps the ETA.
    let per_run = Duration::from_nanos(spec.duration_ns + spec.warmup_ns);
    let coarse = spec.knob.coarse();
    let planned = crate::engine::progress::planned_runs(coarse.len(), &plan, session.counts_separately());
    let bar = crate::engine::progress::progress_bar(!spec.output.no_progress, planned, per_run, Some(budget));
    let mut results: Vec<PointResult> = Vec::new();
    let mut interrupted = None;
    let mut measure =
        |spin: u32, results: &mut Vec<PointResult>, warnings: &mut Vec<Warning>| -> Result<bool> {
            let (r, stop) = session.run_points(&[point(spec, spin)], &plan, &bar, warnings)?;
            results.extend(r);
            interrupted = stop;
            Ok(stop.is_none())
        };
    let mut ended = "the step fell below 15%";
    'search: {
        for spin in coarse {
            if !measure(spin, &mut results, &mut warnings)? {
                ended = "interrupted";
                break 'search;
            }
        }
        let mut step = 10f64.sqrt();
        while step >= FINEST_STEP {
            let per_point = started.elapsed() / results.len() as u32;
            if started.elapsed() + per_point * 2 > budget {
                ended = "--max-time would have been exceeded";
                break;
            }
            let best = results[best_of(&results).expect("the coarse pass measured")].point.clone();
            let best = spec.knob.of(&best).unwrap_or(1);
            let candidates = [f64::from(best) / step, f64::from(best) * step]
                .map(|c| c.round().clamp(1.0, f64::from(spec.knob.max())) as u32);
            for spin in candidates {
                if results.iter().any(|r| spec.knob.of(&r.point) == Some(spin)) {
                    continue;
                }
                if !measure(spin, &mut results, &mut warnings)? {
                    ended = "interrupted";
                    break 'search;
                }
            }
            step = step.sqrt();
        }
    }
    bar.finish_and_clear();
    results.sort_by_key(|r| spec.knob.of(&r.point));
    let best = best_of(&results);
    let ties = best
        .map(|b| {
            let values = |r: &PointResult| {
                crate::engine::repeat::measured(&r.runs).map(|s| s.cs_per_s).collect::<Vec<_>>()
            };
            let top = values(&results[b]);
            results
                .iter()
                .enumerate()
                .filter(|&(i, r)| i != b && welch(&top, &values(r)).is_some_and(|w| w.p >= 0.05))
                .filter_map(|(_, r)| spec.knob.of(&r.point))
                .collect()
        })
        .unwrap_or_default();
    let took = started.elapsed();
    Ok(TuneOutcome { results, best, ties, ended, warnings, interrupted, took, knob: spec.knob })
}
