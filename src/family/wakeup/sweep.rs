//! Runs every point of a `contend wakeup` spec: owns the run's resources
//! (SysV set, the private directory worker processes write their records
//! to, the ftrace tracer), measures the clock's cost once, and collects the
//! warnings. An interrupt ends the sweep after the point it cut short.

use crate::engine::futex_plan::FutexPlan;
use crate::engine::repeat::{stats_runs, Repeated, RunRecord};
use crate::engine::rounds::{run_rounds, Purpose};
use crate::family::wakeup::placement::allowed_cpus;
use crate::family::wakeup::registry as primitives;
use crate::family::wakeup::sched::lock_memory;
use crate::family::wakeup::spec::{WakeupPoint, WakeupSpec};
use crate::family::wakeup::workload::{WakeupContext, WakeupSample};
use crate::measure::clock::{measure_cost, ClockCost};
use crate::measure::tracefs::{TraceReport, Tracer};
use crate::model::warning::common as notes;
use crate::model::warning::{Warning, WarningKind};
use crate::model::Mode;
use crate::model::SpecError;
use crate::session::resources::{Resources, DEFAULT_LOCK_DIR};
use anyhow::{anyhow, Result};
use nix::sys::signal::Signal;
use std::path::Path;

/// A wake-up point and what its runs measured (median round trip, ns);
/// its sample is every measured run merged.
pub type WakeupResult = crate::model::Measured<WakeupPoint, WakeupSample>;

/// A finished (or interrupted) sweep.
#[derive(Debug, Clone)]
pub struct WakeupOutcome {
    /// One result per point measured.
    pub results: Vec<WakeupResult>,
    /// What reading the clock costs.
    pub clock: ClockCost,
    /// What the tracer did, when tracing.
    pub trace: Option<TraceReport>,
    /// One line each.
    pub warnings: Vec<Warning>,
    /// The signal that stopped the sweep early, if one did.
    pub interrupted: Option<Signal>,
}

/// Runs the sweep.
pub fn run_wakeup_sweep(spec: &WakeupSpec) -> Result<WakeupOutcome> {
    let mut warnings = Vec::new();
    let mut resources = Resources::new();
    // What the host refuses before anything is measured is a refusal
    // (exit 2), as a bad flag is, not a failed run (exit 1).
    if spec.mlock {
        lock_memory().map_err(SpecError)?;
    }
    let needs_set = spec.primitives.iter().any(|p| primitives::find(p).is_some_and(|e| e.needs_sem_set));
    let (futex, inline) = FutexPlan::resolve(spec.repeat.count_futex, &mut warnings).split_inline();
    let mut ctx = WakeupContext {
        futex: inline,
        sysv_set: if needs_set { Some(resources.sem_set()?) } else { None },
        tracer: match spec.trace {
            Some(t) => Some(Tracer::open(t).map_err(SpecError)?),
            None => None,
        },
        scratch: match spec.mode {
            Mode::Processes => Some(resources.scratch_dir(Path::new(DEFAULT_LOCK_DIR))?),
            Mode::Threads => None,
        },
    };
    let clock = measure_cost(10_000);
    warnings.extend(machine_warnings(spec));
    let outcome = run_points(spec, &mut ctx, &futex, &mut warnings);
    let stopped = match &outcome {
        Ok((results, _)) => results.iter().any(|r| r.sample.stopped_trace),
        Err(_) => false,
    };
    let trace = ctx.tracer.as_mut().map(|t| {
        t.restore(stopped);
        TraceReport { tracefs: t.root().display().to_string(), tagged: 0, stopped }
    });
    let (results, interrupted) = outcome?;
    let trace = trace.map(|mut t| {
        t.tagged = results.iter().flat_map(|r| &r.sample.pairs).map(|p| p.tagged).sum();
        t
    });
    if let Some(sig) = interrupted {
        warnings.push(notes::interrupted(
            sig,
            results.len(),
            spec.points().len(),
            "; the last one holds what was recorded before the signal",
        ));
    }
    Ok(WakeupOutcome { results, clock, trace, warnings, interrupted })
}

type Points = (Vec<WakeupResult>, Option<Signal>);

fn run_points(
    spec: &WakeupSpec,
    ctx: &mut WakeupContext,
    futex: &FutexPlan,
    warnings: &mut Vec<Warning>,
) -> Result<Points> {
    let points = spec.points();
    let bar = crate::engine::progress::sweep_bar(
        spec.progress,
        points.len(),
        &spec.repeat,
        futex.separate(),
        estimate(spec),
    );
    let rounds = run_rounds(
        points.len(),
        &spec.repeat,
        futex.separate(),
        |i, purpose| {
            let point = &points[i];
            bar.set_message(point.label());
            let entry = primitives::find(point.primitive)
                .ok_or_else(|| anyhow!("primitive `{}` vanished", point.primitive))?;
            let run = match point.mode {
                Mode::Threads => entry.run,
                Mode::Processes => {
                    entry.run_procs.ok_or_else(|| anyhow!("`{}` has no process form", entry.name))?
                }
            };
            if purpose == Purpose::Count {
                // Open for this run only: dropping them switches the
                // syscall tracepoints off again.
                ctx.futex = futex.open_for_count()?;
            }
            let sample = run(point, ctx);
            if purpose == Purpose::Count {
                ctx.futex = None;
            }
            sample
        },
        |_, s| crate::engine::progress::tick(&bar, s),
    )?;
    bar.finish_and_clear();
    let mut results = Vec::with_capacity(points.len());
    for (point, r) in points.into_iter().zip(rounds.points) {
        let Some(r) = r else { continue };
        results.push(wakeup_result(point, r, spec.repeat.precision_pct, warnings));
    }
    warnings.extend(notes::screening(results.iter().map(|r| r.runs.as_slice()), spec.repeat.max_steal_pct));
    warnings.extend(notes::drift(
        spec.repeat.order == crate::engine::repeat::Order::Interleaved,
        results.iter().map(|r| r.runs.as_slice()),
    ));
    Ok((results, rounds.interrupted))
}

fn wakeup_result(
    point: WakeupPoint,
    r: Repeated<WakeupSample>,
    precision_pct: Option<f64>,
    warnings: &mut Vec<Warning>,
) -> WakeupResult {
    let kept: Vec<WakeupSample> = stats_runs(&r.runs).cloned().collect();
    let sample = WakeupSample::merge(&kept);
    warnings.extend(point_warnings(&point, &sample));
    let p50s: Vec<f64> = kept.iter().map(RunRecord::metric).collect();
    warnings.extend(crate::model::warning::common::outliers(
        &point.label(),
        "p50 ns",
        &r.stats,
        &p50s,
        precision_pct,
    ));
    WakeupResult::with_sample(point, sample, r)
}

/// A rough length per run for the progress bar.
fn estimate(spec: &WakeupSpec) -> std::time::Duration {
    use crate::family::wakeup::spec::Length;
    let ns = match spec.length {
        Length::Duration(ns) => ns,
        // A round costs at least the interval; 20 µs when there is none.
        Length::Iterations(n) => n.saturating_mul(spec.interval_ns.max(20_000)),
    };
    std::time::Duration::from_nanos(ns + spec.warmup_ns)
}

fn machine_warnings(spec: &WakeupSpec) -> Vec<Warning> {
    let mut out = crate::model::warning::common::for_machine();
    let cpus = spec.cpus.len();
    if spec.pairs as usize > cpus {
        out.push(Warning::sweep(
            WarningKind::Oversubscribed,
            format!(
                "{} pairs on {cpus} usable CPUs: more pairs than CPUs, so a woken thread often waits \
                 for another pair's thread to leave its CPU; that queueing is part of the latency",
                spec.pairs
            ),
        ));
    }
    if spec.sched.realtime() && spec.interval_ns == 0 {
        out.push(Warning::sweep(
            WarningKind::Machine,
            "real-time threads with --interval 0 never sleep between rounds: on a CPU they share \
             they starve other work until the kernel's RT throttling (sched_rt_runtime_us) steps in",
        ));
    }
    if !spec.mlock && spec.sched.realtime() {
        out.push(Warning::sweep(
            WarningKind::Machine,
            "real-time run without --mlock: a page fault can still land inside a round trip",
        ));
    }
    if allowed_cpus().len() > cpus {
        out.push(Warning::sweep(
            WarningKind::Machine,
            format!(
                "running on CPUs {} only (--cpus / --exclude-cpus)",
                crate::model::value::format_cpu_list(&spec.cpus)
            ),
        ));
    }
    out
}

fn point_warnings(point: &WakeupPoint, s: &WakeupSample) -> Vec<Warning> {
    let cpus = crate::measure::env::cpus_online();
    let mut out =
        crate::model::warning::common::noise(&point.label(), &s.cpu, s.window_s, s.process.cpu_s, cpus);
    let negative: u64 = s.pairs.iter().map(|p| p.negative_one_way).sum();
    if negative > 0 {
        out.push(Warning::point(
            WarningKind::Timing,
            point.label(),
            format!(
                "{negative} one-way times came out negative (clock skew between CPUs) and were \
                 recorded as 0; trust the round trips, not the one-way split"
            ),
        ));
    }
    let late: u64 = s.pairs.iter().map(|p| p.late_starts).sum();
    let rounds = s.round_trip.summary.map_or(0, |r| r.samples);
    if rounds > 0 && late * 100 > rounds {
        out.push(Warning::point(
            WarningKind::Timing,
            point.label(),
            format!(
                "{late} of {rounds} rounds started a whole --interval late (the machine could not \
                 keep the schedule); the interval is shorter than a round trip plus wake-up"
            ),
        ));
    }
    if rounds > 0 && rounds < 1000 {
        out.push(Warning::point(
            WarningKind::TooFewSamples,
            point.label(),
            format!(
                "only {rounds} round trips: p99.9 and max rest on a handful of samples; use more \
                 --iterations"
            ),
        ));
    }
    out
}
