//! `contend attach PID`: the futex view of a process that is already
//! running (`measure::futex_view::FutexView::attach`): every thread it has
//! and every task they start, followed with no LD_PRELOAD and no restart,
//! for `--duration` or until Ctrl-C or its exit, whichever comes first.
//! The result is a `contend run` profile with one sample and no pthread
//! profile (the interposer is not in the process), so the table, the
//! exports, `contend report`, `plot` and `compare` read it as they read a
//! run's.

use crate::experiment::Experiment;
use crate::family::program::data_names::DataNames;
use crate::family::program::report::ProgramReport;
use crate::family::program::run_mode::RunMode;
use crate::family::program::spec::{ProgramSpec, Success};
use crate::family::program::sweep::ProgramOutcome;
use crate::measure::cpu::CpuTicks;
use crate::measure::env::Environment;
use crate::measure::futex_view::FutexView;
use crate::model::program::{Leftovers, MutexInits, ProgramPoint, ProgramResult, ProgramSample, GLIBC};
use crate::model::run::{Repeated, RunInfo, Stopped};
use crate::model::warning::Warning;
use crate::output::args::OutputArgs;
use crate::output::document::Report;
use crate::session::signals::Readable;
use anyhow::Result;
use clap::Args;
use nix::sys::signal::Signal;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

/// `contend attach`'s flags.
#[derive(Debug, Clone, Args)]
#[command(mut_args(crate::output::args::fit_to(
    "one line per futex word: pid, address, blocked and longest ms, waits, woken, EAGAIN, timeouts, wake \
     calls, woke, and its name last",
    None
)))]
#[command(next_help_heading = crate::output::args::MEASUREMENT)]
pub struct AttachArgs {
    /// The process to follow: its id (every thread it has, and every task
    /// they start while it is followed).
    #[arg(value_name = "PID")]
    pub pid: u32,

    /// How long to follow it (Ctrl-C, or its exit, ends it sooner);
    /// without it, until one of those.
    #[arg(long, value_parser = crate::model::value::parse_duration, value_name = "DURATION")]
    pub duration: Option<Duration>,

    /// Futex words shown, the longest-blocked first.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top: usize,

    /// Do not split the words' waits by what their holders were doing
    /// (the split follows every context switch of the process's threads,
    /// which costs it a little more).
    #[arg(long)]
    pub no_holder_state: bool,

    /// The futex view's user stacks (who waited and who woke, by code):
    /// at most N a second, each futex call's stack while under it, the
    /// first calls of each tenth of a second above it (0: none).
    #[arg(long, default_value_t = crate::measure::futex_view::stacks::PER_S, value_name = "PER_S")]
    pub futex_stacks: u64,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub output: OutputArgs,
}

/// `contend attach` as an experiment: a run profile of one sample.
pub struct Attach;

/// The spec of an attachment, as a run's (the program is the process).
fn spec(args: &AttachArgs) -> ProgramSpec {
    let comm = crate::measure::futex_view::comm(args.pid, None);
    ProgramSpec {
        program: vec![format!("pid {} ({comm})", args.pid)],
        argv: Vec::new(),
        grace_ns: 0,
        locks: vec![GLIBC.to_string()],
        profile: true,
        holder_state: !args.no_holder_state,
        futex_stacks: args.futex_stacks,
        top: args.top,
        sort: crate::model::program::ProfileSort::Wait,
        process: None,
        parameter: None,
        mode: RunMode::Attach { pid: args.pid, duration_ns: args.duration.map(|d| d.as_nanos() as u64) },
        metric: None,
        program_output: crate::family::program::args::ProgramOutput::Inherit,
        hooks: Default::default(),
        interposer: Default::default(),
        output: args.output.clone(),
        repeat: crate::engine::repeat::Repeat::ONCE,
        progress: false,
        baseline_added: false,
        success: Success::Zero,
        max_slowdown: None,
        aslr: crate::family::program::args::Aslr::On,
        fixed_addresses: false,
    }
}

impl Experiment for Attach {
    type Args = AttachArgs;
    type Spec = ProgramSpec;
    type Outcome = ProgramOutcome;
    const PLOTS: bool = false;
    const COLUMNS: &'static [crate::output::columns::Group] = crate::family::program::report::table::GROUPS;
    const TABLE_ON_STDERR: bool = false;

    fn plan(args: &AttachArgs) -> Result<ProgramSpec> {
        if args.top == 0 {
            return Err(crate::model::SpecError("--top 0: show at least one futex word".into()).into());
        }
        if args.duration.is_some_and(|d| d.is_zero()) {
            return Err(crate::model::SpecError(
                "--duration 0: follow it for some time, or leave --duration out".into(),
            )
            .into());
        }
        if !std::path::Path::new(&format!("/proc/{}", args.pid)).exists() {
            return Err(crate::model::SpecError(format!(
                "no process {} (it is not running, or not visible here)",
                args.pid
            ))
            .into());
        }
        Ok(spec(args))
    }
    fn output(spec: &ProgramSpec) -> &OutputArgs {
        &spec.output
    }
    fn measure(spec: &ProgramSpec) -> Result<ProgramOutcome> {
        let RunMode::Attach { pid, duration_ns } = spec.mode else { unreachable!("attach's spec") };
        follow(spec, pid, duration_ns.map(Duration::from_nanos))
    }
    fn ending(o: &ProgramOutcome) -> (&[Warning], Option<Signal>) {
        (&o.warnings, o.interrupted)
    }
    fn report<'a>(
        spec: &'a ProgramSpec,
        env: &'a Environment,
        outcome: &'a ProgramOutcome,
    ) -> impl Report + 'a {
        ProgramReport { spec, environment: env, outcome }
    }
}

/// Follows `pid` until `duration` passes, a signal comes, or it exits.
fn follow(spec: &ProgramSpec, pid: u32, duration: Option<Duration>) -> Result<ProgramOutcome> {
    let view = FutexView::attach(pid, spec.follow()).map_err(anyhow::Error::msg)?;
    let start = Instant::now();
    let start_unix_ns =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let ticks = CpuTicks::read().ok();
    crate::session::terminal::status(&format!(
        "contend attach: following process {pid}{}; Ctrl-C ends it with what was seen",
        duration.map_or(String::new(), |d| format!(
            " for {}",
            crate::model::value::format_nanos(d.as_nanos() as u64)
        ))
    ));
    // A pidfd turns readable when the process exits, reaped or not (a
    // zombie keeps its /proc entry until its parent waits for it).
    let pidfd = rustix::process::Pid::from_raw(pid as i32)
        .and_then(|p| rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok());
    let Some(pidfd) = pidfd else {
        anyhow::bail!("no process {pid} (it exited as it was being followed)");
    };
    let (interrupted, exited) =
        match crate::session::signals::wait_readable_until(pidfd.as_fd(), duration.map(|d| start + d)) {
            Readable::Signal(sig) => (Some(sig), false),
            Readable::Ready => (None, true),
            Readable::TimedOut => (None, false),
        };
    // Before the view ends: closing its perf events takes the kernel
    // tens of ms each (an RCU grace period), which is not time followed.
    let wall_s = start.elapsed().as_secs_f64();
    let seen = view.finish();
    let cpu = ticks.zip(CpuTicks::read().ok()).map(|(a, b)| a.split_until(&b));
    let (futex_view, kernel_waits) = crate::family::program::futex_words::words(
        &seen,
        &mut [],
        spec.top,
        &mut DataNames::default(),
        &mut crate::family::program::symbols::Symbolizer::default(),
        false,
    );
    let mut warnings = Vec::new();
    if exited {
        warnings.push(Warning::sweep(
            crate::model::warning::WarningKind::Unexercised,
            format!("process {pid} exited after {wall_s:.3} s: the view ends there"),
        ));
    }
    let sample = ProgramSample {
        run: RunInfo { round: 0, start_unix_ns, status: Default::default() },
        lock: GLIBC.to_string(),
        wall_s,
        metric: None,
        user_s: 0.0,
        sys_s: 0.0,
        voluntary_context_switches: 0,
        involuntary_context_switches: 0,
        futex: None,
        loaded: 0,
        processes: 0,
        program_reported: false,
        swapped: 0,
        to_glibc: 0,
        inits: MutexInits::default(),
        mutexes: Vec::new(),
        kernel_waits: Some(kernel_waits),
        futex_view: Some(futex_view),
        rwlocks: Vec::new(),
        symbol_hints: Vec::new(),
        cpu,
        leftovers: Leftovers::default(),
        delayed: None,
        sped: None,
        exit_code: None,
        signal: interrupted.map(|s| s.as_str().to_string()),
        said: Vec::new(),
        failure: None,
    };
    let stopped = if interrupted.is_some() { Stopped::Interrupted } else { Stopped::Runs };
    let repeated = Repeated::new(vec![sample.clone()], stopped).expect("one measured run");
    let results: Vec<ProgramResult> =
        vec![crate::model::Measured::with_sample(ProgramPoint::new(GLIBC, true), sample, repeated)];
    warnings.extend(crate::family::program::run_warnings::lost_samples(&results));
    Ok(ProgramOutcome {
        results,
        vs_glibc: vec![None],
        profile_cost: None,
        warnings,
        interrupted,
        recommendation: None,
        what_if: None,
        speedup: None,
        failed: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zombie_has_ended_and_a_running_process_has_not() {
        let pidfd = |pid: u32| {
            let p = rustix::process::Pid::from_raw(pid as i32).unwrap();
            rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).unwrap()
        };
        let soon = || Some(Instant::now() + Duration::from_millis(50));
        let own = pidfd(std::process::id());
        assert!(matches!(
            crate::session::signals::wait_readable_until(own.as_fd(), soon()),
            Readable::TimedOut
        ));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let fd = pidfd(child.id());
        // Not reaped: a zombie once it exits, its /proc entry still there.
        let far = Some(Instant::now() + Duration::from_secs(600));
        assert!(matches!(crate::session::signals::wait_readable_until(fd.as_fd(), far), Readable::Ready));
        assert!(std::path::Path::new(&format!("/proc/{}", child.id())).exists(), "a zombie, not gone");
        child.wait().unwrap();
    }
}
