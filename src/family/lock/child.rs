//! A lock point run in a child contend, for a setting glibc reads only
//! once, at start-up: `--glibc-spin N` puts
//! `glibc.pthread.mutex_spin_count=N` in the child's GLIBC_TUNABLES (and
//! nothing else there), the child runs the point as this process would
//! (threads or worker processes, its own futex counters when asked) and
//! prints the sample as JSON; engine::child carries it back.

use crate::engine::child::Child;
use crate::family::lock::registry;
use crate::family::lock::spec::{Mode, Point};
use crate::family::lock::workload::RunContext;
use crate::model::lock::LockSample;
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};

/// What the child is asked to run.
#[derive(Serialize, Deserialize)]
struct ChildSpec {
    point: Point,
    /// Count futex syscalls over the window (a counting run, or inline
    /// counting) with the child's own tracepoint counters.
    count_futex: bool,
}

/// The GLIBC_TUNABLES value for a spin count.
pub fn tunables(spin: u32) -> String {
    format!("glibc.pthread.mutex_spin_count={spin}")
}

/// Runs `point` (which has a glibc spin count) in a child contend.
pub fn run(point: &Point, count_futex: bool) -> Result<LockSample> {
    let spin = point.glibc_spin.ok_or_else(|| anyhow!("{} has no glibc spin count", point.label()))?;
    let spec = serde_json::to_string(&ChildSpec { point: point.clone(), count_futex })?;
    let what = format!("the child contend running {}", point.label());
    let (out, _) =
        Child::start("__lock-child", &spec, &[("GLIBC_TUNABLES", &tunables(spin))], &what)?.finish()?;
    serde_json::from_str(out.trim()).with_context(|| format!("{what}: its result {out:?}"))
}

/// `contend __lock-child SPEC`: runs the point, prints its sample as JSON
/// on stdout.
pub fn child_command(spec: &str) -> Result<std::process::ExitCode> {
    let sample = child_main(spec)?;
    crate::output::sink::print(&(serde_json::to_string(&sample)? + "\n"))?;
    Ok(std::process::ExitCode::SUCCESS)
}

/// The child's side: runs the point it was given, returns its sample.
pub fn child_main(spec: &str) -> Result<LockSample> {
    let spec: ChildSpec = serde_json::from_str(spec).context("the child's spec")?;
    let point = &spec.point;
    let entry = registry::find(point.lock).ok_or_else(|| anyhow!("unknown lock `{}`", point.lock))?;
    let wanted = tunables(point.glibc_spin.unwrap_or_default());
    if std::env::var("GLIBC_TUNABLES").ok().as_deref() != Some(wanted.as_str()) {
        bail!("the child's GLIBC_TUNABLES is not {wanted}");
    }
    let futex = match spec.count_futex {
        true => Some(
            crate::measure::futex::FutexTracepoints::find()
                .and_then(|t| t.open())
                .map_err(anyhow::Error::msg)?,
        ),
        false => None,
    };
    let ctx = RunContext { futex, ..RunContext::default() };
    let run = match point.mode {
        Mode::Threads => entry.run,
        Mode::Processes => entry.run_procs.ok_or_else(|| anyhow!("`{}` has no process form", entry.name))?,
    };
    run(point, &ctx)
}
