//! `contend run` in the parent: the setting every execution shares
//! (`with_setting`: the run's private directory, the symbolizer, the
//! futex plan), the rounds that interleave the points (`measure`), and
//! the outcome put together (`finish`). One execution is `execution.rs`;
//! each point against glibc's mutex, `pairing.rs`; the warnings about
//! what the interposer saw, `run_warnings.rs`. The modes (locks,
//! `--recommend`, `--what-if`) are `run_mode.rs`, matched in `mod.rs`.

use crate::engine::futex_plan::FutexPlan;
use crate::engine::rounds::{run_rounds_from, Purpose};
use crate::family::program::execution::{is_glibc, run_point, Setting};
use crate::family::program::hooks;
use crate::family::program::launch;
use crate::family::program::pairing::{profile_cost, vs_glibc};
use crate::family::program::run_warnings::seen;
use crate::family::program::scratch::RunDir;
use crate::family::program::spec::ProgramSpec;
use crate::family::program::streams::Streams;
use crate::family::program::symbols::Symbolizer;
use crate::measure::futex::FutexCounters;
use crate::model::program::{FailedPoint, ProgramPoint, ProgramResult, ProgramSample, VsGlibc, GLIBC};
use crate::model::run::Stopped;
use crate::model::warning::common as notes;
use crate::model::warning::{Warning, WarningKind};
use anyhow::{anyhow, Context, Result};
use nix::sys::signal::Signal;

/// A finished `contend run`.
#[derive(Debug, Clone)]
pub struct ProgramOutcome {
    /// One per lock, pthread first.
    pub results: Vec<ProgramResult>,
    /// Each lock against pthread (None for pthread itself).
    pub vs_glibc: Vec<Option<VsGlibc>>,
    /// With `--profile`: the profiled pthread's metric over the unprofiled
    /// one's, round by round (what the profile costs this program).
    pub profile_cost: Option<VsGlibc>,
    /// One line each.
    pub warnings: Vec<Warning>,
    /// The signal that ended it early.
    pub interrupted: Option<Signal>,
    /// With `--recommend`: the lock for each of the most waited-on
    /// mutexes, and what the winners give together.
    pub recommendation: Option<crate::model::advice::Recommendation>,
    /// With `--what-if`: the slope and the predictions.
    pub what_if: Option<crate::model::advice::WhatIf>,
    /// With `--what-if` by virtual speedup: the predictions and the
    /// ranking.
    pub speedup: Option<crate::model::advice::SpeedupWhatIf>,
    /// The locks under which the program failed (contend then exits 1).
    pub failed: Vec<FailedPoint>,
}

/// One profiled execution under glibc's mutex, said first (`why`), to
/// find the program's mutexes: what a choice by name, the recommendation
/// and the what-if start from.
pub(crate) fn profile_once(cx: &mut Setting<'_>, why: &str) -> Result<ProgramSample> {
    if cx.spec.progress {
        crate::session::terminal::status(&format!("contend run {why}"));
    }
    run_point(cx, &first_value(cx.spec, ProgramPoint::new(GLIBC, true)), None)
        .context("profiling the program")
}

/// `point` at a parameter scan's first value (the warm-ups and the
/// profile that maps names run there); unchanged without a scan.
fn first_value(spec: &ProgramSpec, point: ProgramPoint) -> ProgramPoint {
    let parameter = spec.parameter.as_ref().and_then(|s| s.points().next());
    ProgramPoint { parameter, ..point }
}

/// Gives each per-mutex point its mutexes by address: names are looked
/// up in the profile of one execution under glibc's mutex, made first
/// (and said), when some choice names a mutex rather than giving its
/// address.
fn map_choices(cx: &mut Setting<'_>, points: &mut [ProgramPoint]) -> Result<()> {
    use crate::family::program::choice::{self, Target};
    let mut parsed = Vec::new();
    for p in points.iter() {
        parsed.push(choice::parse(&p.lock).map_err(|e| anyhow!("--lock {e}"))?);
    }
    let by_name = parsed.iter().flatten().flatten().any(|c| matches!(c.target, Target::Site(_)));
    let mapped = if by_name {
        let sample =
            profile_once(cx, ": one profiled execution under pthread, to find the mutexes --lock names")?;
        Some(sample.mutexes)
    } else {
        None
    };
    for (p, choices) in points.iter_mut().zip(parsed) {
        let Some(choices) = choices else { continue };
        let env = choice::env(&choices, mapped.as_deref()).map_err(|e| anyhow!("--lock {e}"))?;
        p.chosen = Some(env);
    }
    Ok(())
}

/// What measuring some points gave.
pub(crate) struct Measured {
    /// One per point that ran, in the points' order.
    pub results: Vec<ProgramResult>,
    /// The signal that ended it early.
    pub interrupted: Option<Signal>,
    /// The points planned.
    pub planned: usize,
    /// The points whose program failed, in the points' order.
    pub failed: Vec<FailedPoint>,
}

/// Runs the program at every point, interleaved in rounds; adds the
/// outlier notes to `warnings`.
pub(crate) fn measure(
    cx: &mut Setting<'_>,
    points: &[ProgramPoint],
    futex: &FutexPlan,
    inline: Option<&FutexCounters>,
    warnings: &mut Vec<Warning>,
) -> Result<Measured> {
    let spec = cx.spec;
    let planned = crate::engine::progress::planned_runs(points.len(), &spec.repeat, futex.separate());
    // The program's output is its own, on the terminal: a progress bar
    // redrawn over it would garble both. The bar is kept for captured
    // output (--metric); otherwise a header line precedes each execution.
    let bar = crate::engine::progress::sweep_bar(
        spec.progress && spec.metric.is_some(),
        points.len(),
        &spec.repeat,
        futex.separate(),
        std::time::Duration::from_secs(1),
    );
    let headers = spec.progress && spec.metric.is_none() && planned > 1;
    let mut started = 0;
    let rounds = run_rounds_from(
        points.len(),
        &spec.repeat,
        futex.separate(),
        points.iter().position(is_glibc),
        |i, purpose| {
            let point = &points[i];
            let lock = point.label(spec.profile);
            bar.set_message(lock.clone());
            let counted = match purpose {
                Purpose::Count => futex.open_for_count()?,
                Purpose::Measure => None,
            };
            started += 1;
            if headers {
                let what = if purpose == Purpose::Count { ", counting futex calls" } else { "" };
                crate::session::terminal::status(&format!(
                    "contend run: {lock}, execution {}{what}",
                    progress_count(started, planned)
                ));
            }
            run_point(cx, point, counted.as_ref().or(inline)).with_context(|| format!("lock {lock}"))
        },
        |_, s| crate::engine::progress::tick(&bar, s),
    )?;
    bar.finish_and_clear();
    let mut results = Vec::new();
    let mut failed = Vec::new();
    let what = if spec.metric.is_some() { "metric" } else { "wall s" };
    for (point, r) in points.iter().zip(rounds.points) {
        let Some(r) = r else { continue };
        if r.stopped == Stopped::Failed {
            let last = r.runs.last().expect("a failed point has its failed run");
            failed.push(FailedPoint {
                point: point.clone(),
                reason: last.failure.clone().unwrap_or_default(),
                round: last.run.round,
                runs: r.runs,
            });
            continue;
        }
        let values: Vec<f64> =
            crate::engine::repeat::measured(&r.runs).map(crate::model::run::RunRecord::metric).collect();
        warnings.extend(notes::outliers(
            &point.label(spec.profile),
            what,
            &r.stats,
            &values,
            spec.repeat.precision_pct,
        ));
        results.push(ProgramResult::median(point.clone(), r));
    }
    Ok(Measured { results, interrupted: rounds.interrupted, planned: points.len(), failed })
}

/// "3 of 18" while the plan holds; past it, how many more there were
/// and why ("execution 21 of 18" read as a miscount): runs rejected for
/// load are re-made, and --precision adds runs.
fn progress_count(started: usize, planned: usize) -> String {
    if started <= planned {
        format!("{started} of {planned}")
    } else {
        format!(
            "{started} ({planned} planned, {} more: runs re-made for load, or added for --precision)",
            started - planned
        )
    }
}

/// What every way of running the program starts with: the futex plan,
/// the run's private directory, the symbolizer and the compiled metric,
/// handed to `run` as a [`Setting`] (the locks, the recommendation or the
/// what-if: `mod.rs` chooses).
pub(crate) fn with_setting(
    spec: &ProgramSpec,
    run: impl FnOnce(&mut Setting<'_>, &FutexPlan, Option<&FutexCounters>, Vec<Warning>) -> Result<ProgramOutcome>,
) -> Result<ProgramOutcome> {
    let mut warnings = Vec::new();
    let (futex, inline) = FutexPlan::resolve(spec.repeat.count_futex, &mut warnings).split_inline();
    let mut symbols = Symbolizer::default();
    let mut dir = RunDir::create()?;
    let mut streams = Streams::open(&spec.program_output, &dir)?;
    let _adopting = launch::adopt_orphans()?;
    crate::session::signals::set_stopping(format!(
        "the program (SIGTERM to it and everything it started, SIGKILL after the {} grace)",
        crate::model::value::format_nanos(spec.grace_ns)
    ));
    // Compiled once for every execution (the spec checked that it compiles).
    let metric = spec.metric.as_deref().map(regex::Regex::new).transpose()?;
    let mut cx = Setting {
        spec,
        dir: &mut dir,
        symbols: &mut symbols,
        data_names: Default::default(),
        metric: metric.as_ref(),
        streams: &mut streams,
        kernel_waits_failed: None,
        limit: None,
        slowest_glibc: None,
    };
    let outcome = warm_up(&mut cx).and_then(|()| run(&mut cx, &futex, inline.as_ref(), warnings));
    // Also after a failure or an interrupt: what --prepare set up is undone.
    let cleaned = match &spec.hooks.cleanup {
        Some(cmd) => hooks::shell(cx.hook_place(), "--cleanup", cmd, ""),
        None => Ok(()),
    };
    let written = streams.finish();
    let after: Vec<String> =
        [cleaned.err(), written.err()].into_iter().flatten().map(|e| format!("{e:#}")).collect();
    let mut outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            // The run's own error is the one contend exits with.
            for line in after {
                crate::session::terminal::status(&format!("warning: {line}"));
            }
            return Err(e);
        }
    };
    for line in after {
        outcome.warnings.push(Warning::sweep(WarningKind::AfterRun, format!("{line}; the results stand")));
    }
    Ok(outcome)
}

/// The `--warmup` executions, under glibc's mutex, unprofiled, each with
/// --prepare and --conclude; their samples are dropped. A failure is the
/// program's, as any under glibc's mutex.
fn warm_up(cx: &mut Setting<'_>) -> Result<()> {
    let n = cx.spec.hooks.warmup;
    for i in 1..=n {
        if cx.spec.progress {
            crate::session::terminal::status(&format!(
                "contend run: warm-up execution {i} of {n} (not measured)"
            ));
        }
        let point = first_value(cx.spec, ProgramPoint::new(GLIBC, false));
        run_point(cx, &point, None).context("a warm-up execution (--warmup)")?;
    }
    Ok(())
}

/// Runs the program under every `--lock` point, in rounds.
pub(crate) fn run_locks(
    cx: &mut Setting<'_>,
    futex: &FutexPlan,
    inline: Option<&FutexCounters>,
    mut warnings: Vec<Warning>,
) -> Result<ProgramOutcome> {
    let spec = cx.spec;
    if spec.baseline_added {
        warnings.push(Warning::sweep(
            WarningKind::NoBaseline,
            "pthread (glibc's mutex) was added as the baseline the ratios are to",
        ));
    }
    // With --profile, glibc's mutex also runs unprofiled in every round:
    // the profile's cost to this program, measured beside it. A scan has
    // them all at each value.
    let mut points: Vec<ProgramPoint> =
        spec.locks.iter().map(|l| ProgramPoint::new(l, spec.profile)).collect();
    if spec.profile {
        points.push(ProgramPoint::new(GLIBC, false));
    }
    if let Some(scan) = &spec.parameter {
        let at = |p: crate::model::program::ParameterValue| {
            points.iter().map(move |point| ProgramPoint { parameter: Some(p.clone()), ..point.clone() })
        };
        points = scan.points().flat_map(at).collect();
    }
    map_choices(cx, &mut points)?;
    let m = measure(cx, &points, futex, inline, &mut warnings)?;
    let vs = vs_glibc(&m.results);
    let profile_cost = profile_cost(&m.results);
    let kernel_waits_failed = cx.kernel_waits_failed.take();
    Ok(finish(spec, m, vs, profile_cost, kernel_waits_failed, warnings))
}

/// The outcome of measured points, with the notes every run gets.
pub(crate) fn finish(
    spec: &ProgramSpec,
    m: Measured,
    vs_glibc: Vec<Option<VsGlibc>>,
    profile_cost: Option<VsGlibc>,
    kernel_waits_failed: Option<String>,
    mut warnings: Vec<Warning>,
) -> ProgramOutcome {
    let results = m.results;
    warnings.extend(seen(&spec.program[0], &results));
    if let Some(why) = kernel_waits_failed {
        warnings.push(Warning::sweep(
            WarningKind::FutexCounting,
            format!("the profile has no kernel waits per mutex (\"kernel waits\" shows -): {why}"),
        ));
    }
    warnings.extend(crate::family::program::run_warnings::lost_samples(&results));
    warnings.extend(notes::screening(results.iter().map(|r| r.runs.as_slice()), spec.repeat.max_steal_pct));
    warnings.extend(notes::drift(
        spec.repeat.order == crate::engine::repeat::Order::Interleaved,
        results.iter().map(|r| r.runs.as_slice()),
    ));
    if let Some(sig) = m.interrupted {
        warnings.push(notes::interrupted(sig, results.len() + m.failed.len(), m.planned, ""));
    }
    ProgramOutcome {
        results,
        vs_glibc,
        profile_cost,
        warnings,
        interrupted: m.interrupted,
        recommendation: None,
        what_if: None,
        speedup: None,
        failed: m.failed,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_progress_count_says_why_it_passed_the_plan() {
        assert_eq!(super::progress_count(3, 18), "3 of 18");
        assert_eq!(super::progress_count(18, 18), "18 of 18");
        let past = super::progress_count(63, 18);
        assert!(past.starts_with("63 (18 planned, 45 more: runs re-made for load"), "{past}");
    }
}
