//! One execution of the program under one point of `contend run`: the
//! environment the interposer reads (`locks::in_mutex::input`), the
//! keeper that runs and times it (`launch.rs`), its output passed on with
//! the metric read from it, the interposer's reports read back and
//! checked, and why it failed, if it did. [`Setting`] is what every
//! execution of a run shares; [`run_point`] adds the time limit and
//! treats a failure under glibc's own mutex as the program's.

use crate::family::program::hooks;
use crate::family::program::interposer;
use crate::family::program::launch::{self, Launch};
use crate::family::program::scratch::RunDir;
use crate::family::program::spec::ProgramSpec;
use crate::family::program::symbols::Symbolizer;
use crate::measure::cpu::CpuTicks;
use crate::measure::futex::FutexCounters;
use crate::measure::futex_view::FutexView;
use crate::model::program::{ProgramPoint, ProgramSample, GLIBC};
use crate::model::run::RunInfo;
use anyhow::{bail, Result};
use locks::in_mutex::report::ProcessReport as Report;
use locks::in_mutex::{input, Swap};
use nix::sys::signal::Signal;
use std::ffi::OsString;

/// Everything one execution needs besides its lock.
pub(crate) struct Setting<'a> {
    pub(crate) spec: &'a ProgramSpec,
    pub(crate) dir: &'a mut RunDir,
    pub(crate) symbols: &'a mut Symbolizer,
    /// The futex view's words, named by the data symbols that hold them.
    pub(crate) data_names: crate::family::program::data_names::DataNames,
    pub(crate) metric: Option<&'a regex::Regex>,
    /// Where the program's output goes (`--output`).
    pub(crate) streams: &'a mut crate::family::program::streams::Streams,
    /// Why a profiled execution that counts futex calls could not also
    /// count its kernel waits per mutex, once it failed.
    pub(crate) kernel_waits_failed: Option<String>,
    /// An execution running longer is ended ([`launch::Finished::ended_at`]).
    pub(crate) limit: Option<std::time::Duration>,
    /// The longest execution under glibc's mutex alone so far: what
    /// `--max-slowdown` multiplies.
    pub(crate) slowest_glibc: Option<std::time::Duration>,
}

/// The least time an execution under a swapped lock is given.
pub const MIN_LIMIT: std::time::Duration = std::time::Duration::from_secs(2);

impl Setting<'_> {
    /// Where `--prepare`, `--conclude` and `--cleanup` run.
    pub(crate) fn hook_place(&mut self) -> hooks::Place<'_> {
        hooks::Place {
            dir: self.dir,
            streams: self.streams,
            grace: std::time::Duration::from_nanos(self.spec.grace_ns),
        }
    }

    /// The limit for an execution under a swapped lock: `--max-slowdown`
    /// times glibc's slowest execution, at least [`MIN_LIMIT`]; none
    /// before glibc's mutex has run, or with `--max-slowdown 0`.
    pub(crate) fn swapped_limit(&self) -> Option<std::time::Duration> {
        let factor = self.spec.max_slowdown?;
        Some(self.slowest_glibc?.mul_f64(factor).max(MIN_LIMIT))
    }

    /// Notes an execution under glibc's mutex alone.
    fn glibc_ran(&mut self, wall_s: f64) {
        let wall = std::time::Duration::from_secs_f64(wall_s);
        self.slowest_glibc = Some(self.slowest_glibc.map_or(wall, |s| s.max(wall)));
    }
}

/// Whether `point` runs glibc's mutex alone: nothing swapped, nothing
/// delayed. Its failure is the program's own.
pub(crate) fn is_glibc(point: &ProgramPoint) -> bool {
    point.lock == GLIBC && point.chosen.is_none() && point.delay.is_none() && point.speedup.is_none()
}

/// Runs one execution of `point`, between `--prepare` and `--conclude`,
/// with the time limit that applies to it:
/// a failure under glibc's mutex alone ends the run (an error that says
/// how to accept an expected exit status); under anything else it is the
/// sample's `failure`, for the caller to report.
pub(crate) fn run_point(
    cx: &mut Setting<'_>,
    point: &ProgramPoint,
    futex: Option<&FutexCounters>,
) -> Result<ProgramSample> {
    let glibc = is_glibc(point);
    cx.limit = if glibc { None } else { cx.swapped_limit() };
    let around = &cx.spec.hooks;
    // The hooks see the lock in $CONTEND_LOCK and a scan's value in place
    // of its {NAME}.
    let lock = ProgramPoint { parameter: None, ..point.clone() }.label(cx.spec.profile);
    let command = |cmd: &str| crate::family::program::parameter::command(cmd, point.parameter.as_ref());
    if let Some(cmd) = &around.prepare {
        hooks::shell(cx.hook_place(), "--prepare", &command(cmd), &lock)?;
    }
    let sample = run_one(cx, point, futex)?;
    if let Some(cmd) = &around.conclude {
        hooks::shell(cx.hook_place(), "--conclude", &command(cmd), &lock)?;
    }
    if glibc {
        if let Some(why) = &sample.failure {
            // Only an exit status can be accepted; a signal or a metric
            // that is not there cannot.
            let exited = sample.exit_code.is_some_and(|c| !cx.spec.success.accepts(c));
            let advice = if exited {
                " If that exit status is expected (grep finding nothing), accept it: --ignore-failure, or \
                 --ignore-failure=CODES"
            } else {
                ""
            };
            bail!(
                "{} failed under pthread, glibc's own mutex with nothing swapped ({why}): the program fails \
                 without contend's locks (its output, if any, is above).{advice}",
                cx.spec.program[0]
            );
        }
        cx.glibc_ran(sample.wall_s);
    }
    Ok(sample)
}

impl Setting<'_> {
    /// Starts counting the kernel waits of the next execution, if possible
    /// (a failure is kept for the warning, and not retried).
    fn count_kernel_waits(&mut self) -> Option<FutexView> {
        if self.kernel_waits_failed.is_some() {
            return None;
        }
        FutexView::open(self.spec.follow()).map_err(|e| self.kernel_waits_failed = Some(e)).ok()
    }
}

/// The environment contend adds, padded to the same size in every
/// execution: the kernel copies the environment onto the top of the main
/// thread's stack, so a program whose mutex lives on that stack (db_bench
/// keeps one in main's frame) would find it at another address whenever
/// the lock's name or the execution's directory changed length, and a
/// per-mutex choice by address would miss it.
const ENV_BYTES: usize = 2048;

fn pad(env: &[(OsString, OsString)]) -> (OsString, OsString) {
    const NAME: &str = input::PAD.name;
    // Each entry is `NAME=VALUE\0`.
    let used: usize = env.iter().map(|(k, v)| k.len() + v.len() + 2).sum::<usize>() + NAME.len() + 2;
    (NAME.into(), "x".repeat(ENV_BYTES.saturating_sub(used)).into())
}

/// Runs the program once under `point`: sets the environment the
/// interposer reads (padded to one size, so stack addresses do not move),
/// starts it through the keeper with the time limit in `cx`, counts its
/// futex calls and kernel waits where `futex` is given, passes its output
/// on (reading the metric from it), then reads the interposer's reports
/// and refuses an execution whose processes did not load it or ran
/// another lock. A failure of the program is not an error here: it is
/// the sample's `failure`, for [`run_point`] to judge.
pub(crate) fn run_one(
    cx: &mut Setting<'_>,
    point: &ProgramPoint,
    futex: Option<&FutexCounters>,
) -> Result<ProgramSample> {
    let spec = cx.spec;
    let (lock, profiled) = (point.lock.as_str(), point.profiled);
    let exec = cx.dir.execution()?;
    let preload = match std::env::var_os("LD_PRELOAD") {
        // The interposer first, so its pthread symbols win; the user's
        // preloads (an allocator, say) stay.
        Some(theirs) if !theirs.is_empty() => {
            let mut p = spec.interposer.clone().into_os_string();
            p.push(" ");
            p.push(theirs);
            p
        }
        _ => spec.interposer.clone().into_os_string(),
    };
    // A per-mutex choice swaps only its mutexes; the rest are glibc's.
    // A what-if point runs glibc's mutex.
    let (whole, reported_as) = match (&point.chosen, point.delay.is_some() || point.speedup.is_some()) {
        (Some(chosen), _) => ("", chosen.as_str()),
        (None, true) => (Swap::Pthread.name(), Swap::Pthread.name()),
        (None, false) => (lock, lock),
    };
    let mut env: Vec<(OsString, OsString)> = vec![
        ("LD_PRELOAD".into(), preload),
        (input::LOCK.name.into(), whole.into()),
        (input::MUTEXES.name.into(), point.chosen.clone().unwrap_or_default().into()),
        (input::DELAY.name.into(), point.delay.clone().unwrap_or_default().into()),
        (input::SPEEDUP.name.into(), point.speedup.clone().unwrap_or_default().into()),
        (input::PROFILE.name.into(), if profiled { input::PROFILE_ON } else { "0" }.into()),
    ];
    env.extend(exec.env());
    if let Some(ns) = locks::sys::wake_cost::measured() {
        env.push((input::WAKE_NS.name.into(), ns.as_nanos().to_string().into()));
    }
    env.push(pad(&env));
    // Captured in files only when the metric must be read from them, then
    // passed on unchanged to where --output sends it; without a metric,
    // started with --output's streams.
    let capture = match cx.metric {
        Some(_) => Some((exec.create("stdout")?, exec.create("stderr")?)),
        None => cx.streams.for_child()?,
    };
    let capture_read = cx.metric.is_some();
    let kept = capture.as_ref().filter(|_| capture_read).map(|(o, e)| (o.try_clone(), e.try_clone()));
    // Counted where the futex syscalls are (the counting run, or every run
    // with --count-futex inline): the tracepoint slows every syscall, so
    // the measured runs of the default plan stay without it. Opened here,
    // on the thread that starts the keeper, so that the program inherits
    // the sampling.
    let mut kernel = if profiled && futex.is_some() { cx.count_kernel_waits() } else { None };
    let mut kernel_waits = None;
    let before = futex.map(|f| f.read()).transpose()?;
    let ticks = CpuTicks::read().ok();
    let mut after = None;
    let argv = crate::family::program::parameter::argv(&spec.argv, point.parameter.as_ref());
    let launch = Launch {
        program: &argv,
        env,
        capture,
        grace: std::time::Duration::from_nanos(spec.grace_ns),
        fixed_addresses: spec.fixed_addresses,
        limit: cx.limit,
    };
    // Read when the program exits, before its leftovers are ended.
    let done = launch::execute_recorded(cx.dir, launch, || {
        after.get_or_insert_with(|| (futex.map(|f| f.read()), CpuTicks::read().ok()));
        kernel_waits = kernel.take().map(FutexView::finish);
    })?;
    let (futex_after, ticks_after) = after.expect("the keeper reported the exit");
    let after = futex_after.transpose()?;
    let cpu = ticks.zip(ticks_after).map(|(a, b)| a.split_until(&b));
    let usage = done.usage;
    let said = interposer::said(&exec)?;
    let mut failure = failure(spec, &done, &said);
    let metric = match kept {
        None => None,
        Some((out, err)) => {
            let from_out = cx.streams.pass(out?, false, cx.metric)?;
            let from_err = cx.streams.pass(err?, true, cx.metric)?;
            let found = from_out.or(from_err);
            if found.is_none() && failure.is_none() {
                let re = cx.metric.expect("captured for the metric");
                failure = Some(format!("no line of its output matched --metric {re} with a number"));
            }
            found
        }
    };
    let reports = interposer::read(&exec)?;
    let loaded = interposer::loaded(&exec)?;
    let program_reported = reports.iter().any(|r| r.pid == done.pid as u32);
    // With --profile alone nothing needs swapping, and the futex view
    // sees a program the interposer cannot enter: its report says so.
    let profile_only = spec.profile
        && matches!(spec.mode, crate::family::program::run_mode::RunMode::Locks)
        && spec.locks.iter().all(|l| l == GLIBC);
    if !program_reported && !loaded.contains(&(done.pid as u32)) && !profile_only {
        bail!(
            "the interposer was not loaded into {}: a statically linked or set-uid program ignores \
             LD_PRELOAD (so do programs that clear their environment before they exec); --profile \
             alone still shows its futex view, from the kernel's side",
            spec.program[0]
        );
    }
    if let Some(r) = reports.iter().find(|r| r.lock != reported_as) {
        bail!("process {} ran lock {} instead of {reported_as}", r.pid, r.lock);
    }
    let kept = shown(spec, &reports)?;
    let (mut mutexes, symbol_hints) = interposer::profiles(&kept, cx.symbols, spec.top, spec.sort);
    let (futex_view, kernel_waits) = match kernel_waits {
        Some(seen) => {
            let (view, totals) = crate::family::program::futex_words::words(
                &seen,
                &mut mutexes,
                spec.top,
                &mut cx.data_names,
                cx.symbols,
                true,
            );
            (Some(view), Some(totals))
        }
        None => (None, None),
    };
    let rwlocks = interposer::rwlocks(&kept, cx.symbols);
    Ok(ProgramSample {
        run: RunInfo::default(),
        lock: lock.to_string(),
        wall_s: done.wall.as_secs_f64(),
        metric,
        user_s: usage.user_s,
        sys_s: usage.sys_s,
        voluntary_context_switches: usage.voluntary,
        involuntary_context_switches: usage.involuntary,
        futex: before.zip(after).map(|(b, a)| a - b),
        loaded: loaded.len() as u32,
        processes: reports.len() as u32,
        program_reported,
        swapped: reports.iter().map(|r| r.swapped).sum(),
        to_glibc: reports.iter().map(|r| r.glibc).sum(),
        inits: interposer::inits(&reports),
        mutexes,
        kernel_waits,
        futex_view,
        rwlocks,
        symbol_hints,
        cpu,
        leftovers: done.leftovers,
        delayed: reports
            .iter()
            .filter_map(|r| r.delayed)
            .reduce(|a, b| (a.0 + b.0, a.1 + b.1))
            .map(|(count, ns)| crate::model::program::Delayed { count, ns }),
        sped: reports.iter().filter_map(|r| r.sped).max_by_key(|s| s[3]).map(|s| {
            crate::model::program::Sped {
                percent: s[0],
                sections: s[1],
                section_ns: s[2],
                owed_ns: s[3],
                paid_ns: s[4],
            }
        }),
        exit_code: usage.exit_code(),
        signal: usage.signal().map(signal_name),
        said,
        failure,
    })
}

/// The reports whose mutexes the profile shows: every process's, or
/// those `--process` names; an error names the processes there were when
/// it names none of them.
fn shown(spec: &ProgramSpec, reports: &[Report]) -> Result<Vec<Report>> {
    let Some(name) = &spec.process else { return Ok(reports.to_vec()) };
    let out: Vec<Report> = reports
        .iter()
        .filter(|r| crate::family::program::spec::process_named(name, &r.comm))
        .cloned()
        .collect();
    if out.is_empty() && reports.iter().any(|r| !r.mutexes.is_empty() || !r.rwlocks.is_empty()) {
        let mut seen: Vec<&str> = reports.iter().map(|r| r.comm.as_str()).collect();
        seen.sort_unstable();
        seen.dedup();
        bail!(
            "--process {name}: no process of that name reported; these did: {} (their names as ps shows them)",
            seen.join(", ")
        );
    }
    Ok(out)
}

/// A signal's name (`SIGSEGV`), or its number.
fn signal_name(n: i32) -> String {
    Signal::try_from(n).map_or_else(|_| format!("signal {n}"), |s| s.as_str().to_string())
}

/// Why an execution failed, if it did: ended by its time limit, a signal,
/// an exit status `--ignore-failure` does not accept, or a fault the
/// interposer said (each that applies, in that order).
fn failure(
    spec: &ProgramSpec,
    done: &launch::Finished,
    said: &[crate::model::program::Said],
) -> Option<String> {
    let mut why = Vec::new();
    if let Some(limit) = done.ended_at {
        why.push(format!(
            "ended after {:.1} s, its limit (--max-slowdown times glibc's slowest execution)",
            limit.as_secs_f64()
        ));
    } else if let Some(sig) = done.usage.signal() {
        why.push(format!("killed by {}", signal_name(sig)));
    } else if let Some(code) = done.usage.exit_code().filter(|&c| !spec.success.accepts(c)) {
        why.push(format!("exited {code}"));
    }
    for s in said.iter().filter(|s| s.fault) {
        why.push(format!("process {}: {}", s.pid, s.text));
    }
    (!why.is_empty()).then(|| why.join("; "))
}
