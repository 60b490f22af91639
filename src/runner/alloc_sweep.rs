//! `contend alloc` in the parent: for each pattern and allocator, re-execute
//! contend as a child with the allocator preloaded (no shell: an absolute
//! path in LD_PRELOAD, the spec as one argument), read its JSON result from
//! the stdout pipe, reap it with wait4 for its rusage, and count its futex
//! syscalls with the inherited tracepoint counters.

use super::allocators::Allocator;
use super::repeat::{repeat, Stopped};
use super::Interrupted;
use crate::measure::futex::{FutexCounts, FutexTracepoints};
use crate::measure::stats::Stats;
use crate::spec::alloc::AllocSpec;
use crate::workloads::alloc::{ChildResult, ChildSpec, Pattern};
use anyhow::{bail, Context, Result};
use locks::sys::process::wait4;
use nix::sys::signal::Signal;
use serde::Serialize;
use std::io::Read;
use std::process::{Command, Stdio};

/// One pattern under one allocator.
#[derive(Debug, Clone, Serialize)]
pub struct AllocSample {
    /// The pattern.
    pub pattern: Pattern,
    /// The allocator as given (with tunables).
    pub allocator: String,
    /// The library preloaded, if any.
    pub preloaded: Option<String>,
    /// What the child saw mapped (proof the preload took).
    pub mapped_allocator: Option<String>,
    /// The child's workload wall time, s.
    pub wall_s: f64,
    /// The child's user CPU, s (wait4).
    pub user_s: f64,
    /// The child's system CPU, s (wait4).
    pub sys_s: f64,
    /// mallocs + frees.
    pub operations: u64,
    /// operations / wall_s.
    pub ops_per_s: f64,
    /// ops_per_s relative to glibc's for the same pattern in this run.
    pub vs_glibc: Option<f64>,
    /// Peak resident set, kB.
    pub max_rss_kib: i64,
    /// Voluntary context switches.
    pub voluntary_context_switches: i64,
    /// Involuntary context switches.
    pub involuntary_context_switches: i64,
    /// All futex syscalls of the child, when countable.
    pub futex: Option<FutexCounts>,
    /// Of those, the ones the pattern's own semaphores made.
    pub own_futex_calls: u64,
    /// The rest: the allocator's and libc's (`futex.calls - own`).
    pub allocator_futex_calls: Option<u64>,
}

/// One pattern under one allocator, over its runs.
#[derive(Debug, Clone, Serialize)]
pub struct AllocResult {
    /// The run with the median ops/s (its `vs_glibc` compares means).
    pub sample: AllocSample,
    /// ops/s over the runs.
    pub stats: Stats,
    /// Why no more runs were made.
    pub stopped: Stopped,
    /// Every run, in order.
    pub runs: Vec<AllocSample>,
}

/// A finished alloc sweep.
#[derive(Debug, Clone)]
pub struct AllocOutcome {
    /// One result per pattern and allocator.
    pub results: Vec<AllocResult>,
    /// One line each.
    pub warnings: Vec<String>,
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
    };
    let exe = std::env::current_exe().context("finding contend's own executable")?;
    let mut cmd = Command::new(exe);
    cmd.arg("__alloc-child")
        .arg(serde_json::to_string(&child_spec)?)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .env_remove("LD_PRELOAD")
        .env_remove("GLIBC_TUNABLES");
    if let Some(path) = &preload {
        cmd.env("LD_PRELOAD", path);
    }
    if let Some(t) = allocator.glibc_tunables() {
        cmd.env("GLIBC_TUNABLES", t);
    }
    let before = futex.map(|f| f.read()).transpose()?;
    let mut child = cmd.spawn().context("starting the allocator child")?;
    let mut out = String::new();
    child
        .stdout
        .take()
        .expect("stdout is piped")
        .read_to_string(&mut out)
        .context("reading the child's result")?;
    let usage = wait4(child.id() as i32).context("reaping the allocator child")?;
    let after = futex.map(|f| f.read()).transpose()?;
    // Ctrl-C reaches the child too (same process group); report it as the
    // interrupt it is, not as a failed child.
    if let Some(sig) = killed_by(usage.status).filter(|s| matches!(s, Signal::SIGINT | Signal::SIGTERM)) {
        return Err(anyhow::anyhow!(Interrupted(sig)));
    }
    if !(libc_exited_ok(usage.status)) {
        bail!(
            "the {} child failed (wait status {:#x})",
            allocator.label(),
            usage.status
        );
    }
    let result: ChildResult =
        serde_json::from_str(out.trim()).with_context(|| format!("the child's result: {out:?}"))?;
    if preload.is_some() && result.mapped_allocator.is_none() {
        bail!(
            "LD_PRELOAD of {} did not take effect in the child",
            allocator.label()
        );
    }
    let futex = before.zip(after).map(|(b, a)| a - b);
    Ok(AllocSample {
        pattern,
        allocator: allocator.label(),
        preloaded: preload.map(|p| p.display().to_string()),
        mapped_allocator: result.mapped_allocator,
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
    })
}

/// The signal that killed a child, from its wait status.
fn killed_by(status: i32) -> Option<Signal> {
    let sig = status & 0x7f;
    (sig != 0 && sig != 0x7f)
        .then(|| Signal::try_from(sig).ok())
        .flatten()
}

fn libc_exited_ok(status: i32) -> bool {
    // WIFEXITED && WEXITSTATUS == 0, spelled out: status is exit << 8.
    status & 0x7f == 0 && (status >> 8) & 0xff == 0
}

/// Runs every pattern under every allocator.
pub fn run_alloc_sweep(spec: &AllocSpec) -> Result<AllocOutcome> {
    let mut warnings = Vec::new();
    let futex = match FutexTracepoints::find().and_then(|tp| tp.open()) {
        Ok(c) => Some(c),
        Err(why) => {
            warnings.push(format!("futex syscall counts unavailable: {why}"));
            None
        }
    };
    let mut results: Vec<AllocResult> = Vec::new();
    for &pattern in &spec.patterns {
        let first = results.len();
        for allocator in &spec.allocators {
            let once = || {
                run_one(spec, pattern, allocator, futex.as_ref())
                    .with_context(|| format!("pattern {pattern:?} under {}", allocator.label()))
            };
            let (repeated, signal) = repeat(&spec.repeat, once, |s| s.ops_per_s, |_| None)?;
            if let Some(sig) = signal {
                return Err(anyhow::anyhow!(Interrupted(sig)));
            }
            let r = repeated.expect("a run that was not interrupted measured something");
            let ops: Vec<f64> = r.runs.iter().map(|s| s.ops_per_s).collect();
            let name = format!("{pattern:?} {}", allocator.label()).to_lowercase();
            warnings.extend(crate::measure::warnings::outliers(&name, "ops/s", &r.stats, &ops));
            let median = r.median_run(|s| s.ops_per_s);
            results.push(AllocResult {
                sample: r.runs[median].clone(),
                stats: r.stats,
                stopped: r.stopped,
                runs: r.runs,
            });
        }
        let glibc = results[first..]
            .iter()
            .find(|r| r.sample.allocator == "glibc")
            .map(|r| r.stats.mean);
        for r in &mut results[first..] {
            r.sample.vs_glibc = glibc.map(|g| r.stats.mean / g);
        }
    }
    if spec.allocators.iter().all(|a| a.name != "glibc") {
        warnings.push("no plain glibc in --allocator: no ratio to glibc".into());
    }
    Ok(AllocOutcome { results, warnings })
}
