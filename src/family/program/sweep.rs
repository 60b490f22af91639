//! `contend run` in the parent: for each lock, run the program with the
//! interposer preloaded, through a keeper process that times it and ends
//! everything it started (`launch.rs`, `keeper.rs`), and read what the
//! interposer of each of its processes reported into the run's private
//! directory (`scratch.rs`). Locks are interleaved over the rounds, and
//! each lock's metric is compared with pthread's of the same round.

use crate::engine::futex_plan::FutexPlan;
use crate::engine::rounds::{run_rounds_from, Purpose};
use crate::family::program::interposer;
use crate::family::program::launch::{self, Launch};
use crate::family::program::scratch::RunDir;
use crate::family::program::spec::ProgramSpec;
use crate::family::program::symbols::Symbolizer;
use crate::measure::cpu::CpuTicks;
use crate::measure::futex::FutexCounters;
use crate::measure::kernel_waits::{KernelWaits, Waits};
use crate::model::program::{
    FailedPoint, KernelWaitTotals, MutexProfile, ProgramPoint, ProgramResult, ProgramSample, VsGlibc,
};
use crate::model::run::RunInfo;
use crate::model::run::Stopped;
use crate::model::warning::common as notes;
use crate::model::warning::{Warning, WarningKind};
use anyhow::{anyhow, bail, Context, Result};
use locks::in_mutex::{input, Swap};
use nix::sys::signal::Signal;
use std::ffi::OsString;

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

/// The metric in `text`: the last line `re` matches, its first group (or
/// the whole match), as a number.
pub fn metric_in(re: &regex::Regex, text: &str) -> Option<f64> {
    text.lines().rev().find_map(|line| {
        let c = re.captures(line)?;
        let m = c.get(1).or_else(|| c.get(0))?;
        m.as_str().trim().replace(',', "").parse::<f64>().ok()
    })
}

/// Copies a captured stream to where the program's own would have gone,
/// unchanged, and returns the metric found in it (the last matching line).
fn pass_through(
    mut file: std::fs::File,
    to: &mut dyn std::io::Write,
    metric: Option<&regex::Regex>,
) -> Result<Option<f64>> {
    use std::io::{BufRead, Seek};
    file.rewind()?;
    let mut found = None;
    let mut reader = std::io::BufReader::new(file);
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        match to.write_all(&line) {
            // A closed pipe downstream (`| head`) loses nothing of ours.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            other => other.context("passing the program's output on")?,
        }
        if let Some(re) = metric {
            if let Some(v) = metric_in(re, &String::from_utf8_lossy(&line)) {
                found = Some(v);
            }
        }
    }
    let _ = to.flush();
    Ok(found)
}

/// Everything one execution needs besides its lock.
pub(crate) struct Setting<'a> {
    pub(crate) spec: &'a ProgramSpec,
    dir: &'a mut RunDir,
    symbols: &'a mut Symbolizer,
    metric: Option<&'a regex::Regex>,
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
    point.lock == "pthread" && point.chosen.is_none() && point.delay.is_none() && point.speedup.is_none()
}

/// Runs one execution of `point`, with the time limit that applies to it:
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
    let sample = run_one(cx, point, futex)?;
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
    fn count_kernel_waits(&mut self) -> Option<KernelWaits> {
        if self.kernel_waits_failed.is_some() {
            return None;
        }
        KernelWaits::open().map_err(|e| self.kernel_waits_failed = Some(e)).ok()
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

/// Each mutex's kernel waits, from the counts by address; the totals over
/// the program's processes.
fn join_kernel_waits(mutexes: &mut [MutexProfile], waits: &Waits, pids: &[u32]) -> KernelWaitTotals {
    let mut on_mutexes = 0;
    for m in mutexes.iter_mut() {
        let n = waits.by_address.get(&(m.pid, m.address)).copied().unwrap_or(0);
        m.kernel_waits = Some(n);
        on_mutexes += n;
    }
    let all = waits.by_address.iter().filter(|((pid, _), _)| pids.contains(pid)).map(|(_, n)| n).sum();
    KernelWaitTotals { all, on_mutexes, lost: waits.lost }
}

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
    // Captured only when the metric must be read from them; passed on
    // unchanged afterwards.
    let capture = match cx.metric {
        Some(_) => Some((exec.create("stdout")?, exec.create("stderr")?)),
        None => None,
    };
    let kept = capture.as_ref().map(|(o, e)| (o.try_clone(), e.try_clone()));
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
    let launch = Launch {
        program: &spec.argv,
        env,
        capture,
        grace: std::time::Duration::from_nanos(spec.grace_ns),
        fixed_addresses: spec.fixed_addresses,
        limit: cx.limit,
    };
    // Read when the program exits, before its leftovers are ended.
    let dir = &mut *cx.dir;
    let mut ledger = Ok(());
    let done = launch::execute(launch, |told| match told {
        launch::Told::Started(pid) => ledger = dir.running(Some(pid)),
        launch::Told::Exited => {
            after.get_or_insert_with(|| (futex.map(|f| f.read()), CpuTicks::read().ok()));
            kernel_waits = kernel.take().map(KernelWaits::finish);
        }
    });
    // The keeper has ended everything the program started, whatever
    // happened: nothing for cleanup to end.
    cx.dir.running(None)?;
    let done = done?;
    ledger?;
    let (futex_after, ticks_after) = after.expect("the keeper reported the exit");
    let after = futex_after.transpose()?;
    let cpu = ticks.zip(ticks_after).map(|(a, b)| a.split_until(&b));
    let usage = done.usage;
    let said = interposer::said(&exec)?;
    let mut failure = failure(spec, &done, &said);
    let metric = match kept {
        None => None,
        Some((out, err)) => {
            let from_out = pass_through(out?, &mut std::io::stdout().lock(), cx.metric)?;
            let from_err = pass_through(err?, &mut std::io::stderr().lock(), cx.metric)?;
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
    if !program_reported && !loaded.contains(&(done.pid as u32)) {
        bail!(
            "the interposer was not loaded into {}: a statically linked or set-uid program ignores \
             LD_PRELOAD (so do programs that clear their environment before they exec)",
            spec.program[0]
        );
    }
    if let Some(r) = reports.iter().find(|r| r.lock != reported_as) {
        bail!("process {} ran lock {} instead of {reported_as}", r.pid, r.lock);
    }
    let (mut mutexes, symbol_hints) = interposer::profiles(&reports, cx.symbols, cx.spec.top);
    let pids: Vec<u32> = loaded.iter().copied().chain(reports.iter().map(|r| r.pid)).collect();
    let kernel_waits = kernel_waits.map(|w| join_kernel_waits(&mut mutexes, &w, &pids));
    let rwlocks = interposer::rwlocks(&reports, cx.symbols);
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

/// Whether the lock of `r` ran at all: some measured run made an
/// acquisition by it (pthread always "runs": it is glibc's, and so do
/// the what-if's delayed points).
fn exercised(r: &ProgramResult) -> bool {
    r.point.lock == "pthread"
        || r.point.delay.is_some()
        || r.point.speedup.is_some()
        || crate::engine::repeat::measured(&r.runs).any(|s| s.swapped > 0)
}

/// What the interposer saw that the ratios cannot rest on, for the user:
/// locks that never ran, a program with no pthread mutex, processes that
/// did not report, processes left running.
fn seen(program: &str, results: &[ProgramResult]) -> Vec<Warning> {
    let mut out = Vec::new();
    let glibc_total: u64 =
        results.iter().filter(|r| r.point.lock == "pthread").map(|r| r.sample.to_glibc).sum();
    let runs = || results.iter().flat_map(|r| crate::engine::repeat::measured(&r.runs));
    // Without the program's own report its counts are unknown: nothing is
    // claimed about them but that.
    let unreported = runs().any(|s| !s.program_reported);
    // Not said of a run cut short before any execution completed.
    let none_at_all = runs().next().is_some() && runs().all(|s| s.swapped == 0 && s.to_glibc == 0);
    if unreported {
        out.push(Warning::sweep(
            WarningKind::Unexercised,
            format!(
                "the interposer was loaded into {program} but it wrote no report: it left without running \
                 library destructors (Go's runtime ends with a raw exit_group; so does a process killed by \
                 a signal), so its acquisitions are unknown and no ratio is given for a lock that shows \
                 none"
            ),
        ));
    } else if none_at_all {
        out.push(Warning::sweep(
            WarningKind::Unexercised,
            format!(
                "{program} took no pthread mutex through the interposer, so no lock was swapped and no \
                 ratio is given. Its locks are elsewhere (Rust's std and Go's runtime lock with futexes \
                 directly; pthread rwlocks and spinlocks are never swapped; C11 mtx_* and glibc's internal \
                 locks are not interposed), or its work ran in a process started without the preload (LD_PRELOAD \
                 cleared)"
            ),
        ));
    } else {
        for r in results.iter().filter(|r| !exercised(r)) {
            let why = match &r.point.chosen {
                Some(chosen) => format!(
                    "no chosen mutex ({}) was taken: in this execution none was at that address (a mutex \
                     allocated in another order by racing threads moves; choose it by name), or it is of a \
                     kind a swapped lock leaves to glibc",
                    chosen.replace(';', ", ")
                ),
                None => "the program's mutexes are of kinds a swapped lock leaves to glibc (recursive, \
                         error-checking, robust, PI, shared), or it started its work without the preload \
                         (LD_PRELOAD cleared)"
                    .into(),
            };
            out.push(Warning::point(
                WarningKind::Unexercised,
                &r.point.lock,
                format!(
                    "never used: no acquisition went through it ({} went to glibc's mutex; under pthread, \
                     {glibc_total}). {why}; no ratio is given",
                    r.sample.to_glibc
                ),
            ));
        }
    }
    out.extend(exits_and_notes(program, results));
    let left: Vec<_> =
        results.iter().flat_map(|r| &r.runs).map(|s| s.leftovers).filter(|l| l.found > 0).collect();
    if let Some(worst) = left.iter().map(|l| l.found).max() {
        let survivors: u64 = left.iter().map(|l| l.survivors).sum();
        let killed: u64 = left.iter().map(|l| l.killed).sum();
        out.push(Warning::sweep(
            WarningKind::LeftRunning,
            format!(
                "{program} left processes running at its exit in {} execution(s) (up to {worst}: daemons \
                 or background jobs); contend ended them with SIGTERM ({killed} needed SIGKILL after \
                 --grace){}",
                left.len(),
                if survivors > 0 {
                    format!("; {survivors} did not die even then (uninterruptible sleep) and outlive the run")
                } else {
                    String::new()
                }
            ),
        ));
    }
    out
}

/// The executions whose non-zero exit status `--ignore-failure` accepted
/// (which, and how many), and what the interposer noted: said, since
/// neither fails a point.
fn exits_and_notes(program: &str, results: &[ProgramResult]) -> Vec<Warning> {
    let mut out = Vec::new();
    let mut accepted: std::collections::BTreeMap<i32, Vec<String>> = Default::default();
    let mut notes: Vec<String> = Vec::new();
    for r in results {
        for s in &r.runs {
            if let Some(code) = s.exit_code.filter(|&c| c != 0) {
                accepted.entry(code).or_default().push(format!("{} round {}", s.lock, s.run.round));
            }
            for n in s.said.iter().filter(|n| !n.fault) {
                if !notes.contains(&n.text) {
                    notes.push(n.text.clone());
                }
            }
        }
    }
    for (code, which) in accepted {
        let shown: Vec<&str> = which.iter().take(6).map(String::as_str).collect();
        let more = if which.len() > shown.len() {
            format!(" and {} more", which.len() - shown.len())
        } else {
            String::new()
        };
        out.push(Warning::sweep(
            WarningKind::AcceptedExit,
            format!(
                "{program} exited {code} in {} execution(s) ({}{more}), accepted by --ignore-failure: their \
                 times are in the statistics",
                which.len(),
                shown.join(", ")
            ),
        ));
    }
    for n in notes {
        out.push(Warning::sweep(WarningKind::InterposerNote, format!("the interposer noted: {n}")));
    }
    out
}

/// Each lock's metric against pthread's of the same round; none for a
/// lock that never ran.
pub(crate) fn vs_glibc(results: &[ProgramResult]) -> Vec<Option<VsGlibc>> {
    // The baseline runs as the locks do (profiled or not); the unprofiled
    // pthread of `--profile` measures the profile, not a lock.
    let profiled = results.first().is_some_and(|r| r.point.profiled);
    let Some(base) = results.iter().find(|r| r.point.lock == "pthread" && r.point.profiled == profiled)
    else {
        return vec![None; results.len()];
    };
    results
        .iter()
        .map(|r| {
            if r.point.lock == "pthread" || !exercised(r) {
                return None;
            }
            paired(r, base)
        })
        .collect()
}

/// `r` against `base`, round by round: the geometric mean of the ratios
/// of their metrics, with its interval.
pub(crate) fn paired(r: &ProgramResult, base: &ProgramResult) -> Option<VsGlibc> {
    let rounds = |r: &ProgramResult| -> Vec<(u32, f64)> {
        crate::engine::repeat::measured(&r.runs)
            .map(|s| (s.run.round, crate::model::run::RunRecord::metric(s)))
            .collect()
    };
    let b = rounds(base);
    let pairs: Vec<(f64, f64)> = rounds(r)
        .into_iter()
        .filter_map(|(round, v)| b.iter().find(|(x, _)| *x == round).map(|&(_, base)| (v, base)))
        .collect();
    let (ratio, ci95) = crate::measure::stats::paired_ratio(&pairs)?;
    Some(VsGlibc { ratio, ci95, rounds: pairs.len() })
}

/// The profiled pthread against the unprofiled one (None without both).
fn profile_cost(results: &[ProgramResult]) -> Option<VsGlibc> {
    let pthread =
        |profiled: bool| results.iter().find(|r| r.point.lock == "pthread" && r.point.profiled == profiled);
    paired(pthread(true)?, pthread(false)?)
}

/// One profiled execution under glibc's mutex, said first (`why`), to
/// find the program's mutexes: what a choice by name, the recommendation
/// and the what-if start from.
pub(crate) fn profile_once(cx: &mut Setting<'_>, why: &str) -> Result<ProgramSample> {
    if cx.spec.progress {
        crate::session::terminal::status(&format!("contend run {why}"));
    }
    run_point(cx, &ProgramPoint::new("pthread", true), None).context("profiling the program")
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
                    "contend run: {lock}, execution {started} of {planned}{what}"
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
        metric: metric.as_ref(),
        kernel_waits_failed: None,
        limit: None,
        slowest_glibc: None,
    };
    run(&mut cx, &futex, inline.as_ref(), warnings)
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
    // the profile's cost to this program, measured beside it.
    let mut points: Vec<ProgramPoint> =
        spec.locks.iter().map(|l| ProgramPoint::new(l, spec.profile)).collect();
    if spec.profile {
        points.push(ProgramPoint::new("pthread", false));
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
    let lost: u64 = results.iter().flat_map(|r| &r.runs).filter_map(|s| s.kernel_waits).map(|k| k.lost).sum();
    if lost > 0 {
        warnings.push(Warning::sweep(
            WarningKind::FutexCounting,
            format!(
                "the kernel dropped {lost} futex wait samples (its buffers filled faster than contend read \
                 them): the kernel waits per mutex are lower bounds"
            ),
        ));
    }
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
    fn the_metric_is_the_last_matching_line() {
        let re = regex::Regex::new(r"events/s \(eps\): *([0-9.,]+)").unwrap();
        let text = "events/s (eps): 10.5\nnoise\n    events/s (eps): 1,234.5\nend\n";
        assert_eq!(super::metric_in(&re, text), Some(1234.5));
        assert_eq!(super::metric_in(&re, "nothing"), None);
        let whole = regex::Regex::new(r"[0-9]+ MB/s").unwrap();
        assert_eq!(super::metric_in(&whole, "x 12 MB/s"), None, "the whole match is not a number");
    }
}
