//! `contend alloc` in the parent: for each pattern and allocator, run a
//! child contend with the allocator preloaded (engine::child: an absolute
//! path in LD_PRELOAD, the spec as one argument, the JSON result on a pipe,
//! reaped with wait4 for its rusage), and count its futex syscalls with the
//! inherited tracepoint counters.

use crate::engine::child::Child;
use crate::engine::futex_plan::FutexPlan;
use crate::engine::rounds::{run_rounds, Purpose};
use crate::family::alloc::registry::Allocator;
use crate::family::alloc::spec::AllocSpec;
use crate::family::alloc::workload::{ChildResult, ChildSpec, Pattern};
use crate::measure::cpu::CpuTicks;
use crate::model::run::RunInfo;
use crate::model::warning::common as notes;
use crate::model::warning::{Warning, WarningKind};
use anyhow::{bail, Context, Result};
use nix::sys::signal::Signal;

pub use crate::model::alloc::{AllocPoint, AllocResult, AllocSample};

/// A finished alloc sweep.
#[derive(Debug, Clone)]
pub struct AllocOutcome {
    /// One result per pattern and allocator.
    pub results: Vec<AllocResult>,
    /// One line each.
    pub warnings: Vec<Warning>,
    /// The signal that ended the sweep early, if one did.
    pub interrupted: Option<Signal>,
}

fn run_one(
    spec: &AllocSpec,
    pattern: Pattern,
    allocator: &Allocator,
    futex: Option<&crate::measure::futex::FutexCounters>,
) -> Result<AllocSample> {
    let preload = allocator.library.clone();
    let child_spec = ChildSpec {
        pattern,
        workers: match pattern {
            Pattern::Local => spec.threads,
            Pattern::Pairs => spec.pairs,
        },
        iterations: spec.iterations,
        batch: spec.batch,
        sizes: spec.sizes.to_string(),
        parent: std::process::id(),
    };
    let spec_json = serde_json::to_string(&child_spec)?;
    let tunables = allocator.glibc_tunables();
    let preload_text = preload.as_ref().map(|p| p.display().to_string());
    let mut env = Vec::new();
    if let Some(path) = &preload_text {
        env.push(("LD_PRELOAD", path.as_str()));
    }
    if let Some(t) = &tunables {
        env.push(("GLIBC_TUNABLES", t.as_str()));
    }
    let before = futex.map(|f| f.read()).transpose()?;
    let ticks = CpuTicks::read().ok();
    let started = std::time::Instant::now();
    let what = format!("the {} child", allocator.label());
    let (out, usage) = Child::start("__alloc-child", &spec_json, &env, &what)?.finish()?;
    let after = futex.map(|f| f.read()).transpose()?;
    let elapsed_s = started.elapsed().as_secs_f64();
    let cpu = ticks.zip(CpuTicks::read().ok()).map(|(a, b)| a.split_until(&b));
    let result: ChildResult =
        serde_json::from_str(out.trim()).with_context(|| format!("the child's result: {out:?}"))?;
    if result.wall_s.is_nan() || result.wall_s <= 0.0 {
        bail!("the {} child measured no time (wall {} s)", allocator.label(), result.wall_s);
    }
    if preload.is_some() && result.mapped_allocator.is_none() {
        bail!("LD_PRELOAD of {} did not take effect in the child", allocator.label());
    }
    let futex = before.zip(after).map(|(b, a)| a - b);
    Ok(AllocSample {
        run: RunInfo::default(),
        pattern,
        allocator: allocator.label(),
        preloaded: preload.map(|p| p.display().to_string()),
        mapped_allocator: result.mapped_allocator,
        glibc_tunables: result.glibc_tunables,
        wall_s: result.wall_s,
        user_s: usage.user_s,
        sys_s: usage.sys_s,
        operations: result.operations,
        ops_per_s: result.operations as f64 / result.wall_s,
        vs_glibc: None,
        max_rss_kib: usage.max_rss_kib,
        voluntary_context_switches: usage.voluntary,
        involuntary_context_switches: usage.involuntary,
        allocator_futex_calls: futex.map(|f| f.calls.saturating_sub(result.own_futex_calls)),
        futex,
        own_futex_calls: result.own_futex_calls,
        cpu,
        elapsed_s,
    })
}

/// Runs every pattern under every allocator, in rounds.
pub fn run_alloc_sweep(spec: &AllocSpec) -> Result<AllocOutcome> {
    let mut warnings = Vec::new();
    let (futex, inline) = FutexPlan::resolve(spec.repeat.count_futex, &mut warnings).split_inline();
    let points: Vec<(Pattern, &Allocator)> =
        spec.patterns.iter().flat_map(|&p| spec.allocators.iter().map(move |a| (p, a))).collect();
    let per_run = std::time::Duration::from_secs(1);
    let bar = crate::engine::progress::sweep_bar(
        spec.progress,
        points.len(),
        &spec.repeat,
        futex.separate(),
        per_run,
    );
    let rounds = run_rounds(
        points.len(),
        &spec.repeat,
        futex.separate(),
        |i, purpose| {
            let (pattern, allocator) = points[i];
            bar.set_message(format!("{pattern:?} {}", allocator.label()).to_lowercase());
            // Counting runs open their counters here (the child inherits
            // them) and close them when `counted` drops.
            let counted = match purpose {
                Purpose::Count => futex.open_for_count()?,
                Purpose::Measure => None,
            };
            run_one(spec, pattern, allocator, counted.as_ref().or(inline.as_ref()))
                .with_context(|| format!("pattern {pattern:?} under {}", allocator.label()))
        },
        |_, s| crate::engine::progress::tick(&bar, s),
    )?;
    bar.finish_and_clear();
    let mut results: Vec<AllocResult> = Vec::new();
    // After an interrupt, the points measured so far (a cut-short child is
    // never a run: it reported nothing).
    for (&(pattern, allocator), r) in points.iter().zip(rounds.points) {
        let Some(r) = r else { continue };
        let ops: Vec<f64> = crate::engine::repeat::measured(&r.runs).map(|s| s.ops_per_s).collect();
        let name = format!("{pattern:?} {}", allocator.label()).to_lowercase();
        warnings.extend(notes::outliers(&name, "ops/s", &r.stats, &ops, spec.repeat.precision_pct));
        let point = AllocPoint { pattern, allocator: allocator.label() };
        results.push(AllocResult::median(point, r));
    }
    for &pattern in &spec.patterns {
        let glibc = results
            .iter()
            .find(|r| r.sample.pattern == pattern && r.sample.allocator == "glibc")
            .map(|r| r.stats.mean);
        for r in results.iter_mut().filter(|r| r.sample.pattern == pattern) {
            r.sample.vs_glibc = glibc.map(|g| r.stats.mean / g);
        }
    }
    if spec.allocators.iter().all(|a| a.name != "glibc") {
        warnings.push(Warning::sweep(
            WarningKind::NoBaseline,
            "no plain glibc in --allocator: no ratio to glibc",
        ));
    }
    warnings.extend(notes::screening(results.iter().map(|r| r.runs.as_slice()), spec.repeat.max_steal_pct));
    warnings.extend(notes::drift(
        spec.repeat.order == crate::engine::repeat::Order::Interleaved,
        results.iter().map(|r| r.runs.as_slice()),
    ));
    if let Some(sig) = rounds.interrupted {
        warnings.push(notes::interrupted(sig, results.len(), points.len(), ""));
    }
    Ok(AllocOutcome { results, warnings, interrupted: rounds.interrupted })
}
