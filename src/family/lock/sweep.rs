//! Runs every point of a spec in rounds (interleaved by default, see
//! [`crate::engine::rounds`]), each point repeated as `--runs` and `--precision`
//! say, with a progress bar on a terminal, owning the run's resources and
//! collecting the warnings that apply to the whole sweep. An interrupt
//! ends the sweep after the run it cut short; what was measured so far is
//! kept.

use crate::engine::futex_plan::FutexPlan;
use crate::engine::progress::{sweep_bar, tick};
use crate::engine::repeat::Repeat;
use crate::engine::rounds::{run_rounds, Purpose};
use crate::family::lock::registry;
use crate::family::lock::spec::{LockSpec, Mode, Point};
use crate::family::lock::workload::RunContext;
use crate::measure::env::cpus_online;
use crate::model::lock::LockSample;
use crate::model::warning::common as notes;
use crate::model::warning::{Warning, WarningKind};
use crate::session::resources::Resources;
use anyhow::{anyhow, Result};
use indicatif::ProgressBar;
use nix::sys::signal::Signal;
use std::time::Duration;

pub use crate::model::lock::PointResult;

/// A finished (or interrupted) sweep.
#[derive(Debug, Clone)]
pub struct SweepOutcome {
    /// One result per point measured, in spec order.
    pub results: Vec<PointResult>,
    /// Things the reader must know to trust the numbers, one line each.
    pub warnings: Vec<Warning>,
    /// The signal that stopped the sweep early, if one did.
    pub interrupted: Option<Signal>,
}

/// What running lock points needs once per command: the futex counting
/// plan (inline counters live in `ctx`, opened on this thread so every
/// worker inherits them), the lock file and SysV set, owned until the
/// session is dropped.
pub struct LockSession {
    ctx: RunContext,
    futex: FutexPlan,
    _resources: Resources,
    cpus: usize,
}

impl LockSession {
    /// Opens what `locks` need, counting futex calls as `plan` says;
    /// warnings go to `warnings`.
    pub fn open(
        locks: &[&str],
        lock_dir: &std::path::Path,
        reopen: bool,
        plan: &Repeat,
        warnings: &mut Vec<Warning>,
    ) -> Result<Self> {
        let entries: Vec<_> = locks.iter().filter_map(|l| registry::find(l)).collect();
        let mut resources = Resources::new();
        let (futex, inline) = FutexPlan::resolve(plan.count_futex, warnings).split_inline();
        let ctx = RunContext {
            futex: inline,
            lock_file: match entries.iter().any(|e| e.caps.needs_file) {
                true => Some(resources.lock_file(lock_dir)?),
                false => None,
            },
            sysv_set: match entries.iter().any(|e| e.caps.needs_sem_set) {
                true => Some(resources.sem_set()?),
                false => None,
            },
            reopen,
        };
        Ok(Self { ctx, futex, _resources: resources, cpus: cpus_online() })
    }

    /// Whether points get a separate counting run.
    pub fn counts_separately(&self) -> bool {
        self.futex.separate()
    }

    /// Makes one run of `point`: a measured one with no tracepoint on
    /// (unless counting inline), or the counting run.
    pub fn run_once(&self, point: &Point, purpose: Purpose) -> Result<LockSample> {
        let entry = registry::find(point.lock).ok_or_else(|| anyhow!("lock `{}` vanished", point.lock))?;
        let run = match point.mode {
            Mode::Threads => entry.run,
            Mode::Processes => {
                entry.run_procs.ok_or_else(|| anyhow!("`{}` has no process form", entry.name))?
            }
        };
        if point.glibc_spin.is_some() {
            // glibc reads its tunables at start-up: a child contend runs
            // the point with them set.
            let count = purpose == Purpose::Count || self.ctx.futex.is_some();
            return crate::family::lock::child::run(point, count);
        }
        match purpose {
            Purpose::Measure => run(point, &self.ctx),
            Purpose::Count => {
                // Open for this run only: closing them (when the counting
                // context drops, after the run) switches the syscall
                // tracepoints off again.
                run(point, &self.ctx.with_futex(self.futex.open_for_count()?))
            }
        }
    }

    /// Runs `points` as `plan` says, in rounds. Returns their results in
    /// the given order (points never reached are left out) and the signal
    /// that should end the sweep.
    pub fn run_points(
        &self,
        points: &[Point],
        plan: &Repeat,
        bar: &ProgressBar,
        warnings: &mut Vec<Warning>,
    ) -> Result<(Vec<PointResult>, Option<Signal>)> {
        let rounds = run_rounds(
            points.len(),
            plan,
            self.counts_separately(),
            |i, purpose| {
                bar.set_message(points[i].label());
                self.run_once(&points[i], purpose)
            },
            |_, s| tick(bar, s),
        )?;
        let results: Vec<PointResult> = points
            .iter()
            .zip(rounds.points)
            .filter_map(|(p, r)| r.map(|r| PointResult::new(p.clone(), r)))
            .collect();
        for r in &results {
            warnings.extend(crate::family::lock::warnings::for_point(r, self.cpus, plan.precision_pct));
        }
        Ok((results, rounds.interrupted))
    }
}

/// Runs the sweep.
pub fn run_lock_sweep(spec: &LockSpec) -> Result<SweepOutcome> {
    let points = spec.points();
    let total = points.len();
    let mut warnings = Vec::new();
    let session = LockSession::open(&spec.locks, &spec.lock_dir, spec.reopen, &spec.repeat, &mut warnings)?;
    let cpus = session.cpus;
    if let Some(&most) = spec.workers.iter().filter(|&&t| t as usize > cpus).max() {
        warnings.push(Warning::sweep(
            WarningKind::Oversubscribed,
            format!(
                "{most} {} on {cpus} online CPUs: oversubscribed, so lock holders get preempted \
                 inside the critical section and waiters that spin burn CPU the holder needs",
                spec.mode.label()
            ),
        ));
    }
    warnings.extend(crate::model::warning::common::for_machine());
    let per_run = Duration::from_nanos(spec.duration_ns + spec.warmup_ns);
    let bar = sweep_bar(spec.progress, total, &spec.repeat, session.counts_separately(), per_run);
    let (results, interrupted) = session.run_points(&points, &spec.repeat, &bar, &mut warnings)?;
    bar.finish_and_clear();
    warnings.extend(notes::screening(results.iter().map(|r| r.runs.as_slice()), spec.repeat.max_steal_pct));
    if let Some(sig) = interrupted {
        warnings.push(notes::interrupted(
            sig,
            results.len(),
            total,
            "; the last run was cut short (its rates still divide by the time it really ran)",
        ));
    }
    Ok(SweepOutcome { results, warnings, interrupted })
}
