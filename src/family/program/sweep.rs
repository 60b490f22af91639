//! `contend run` in the parent: for each lock, run the program with the
//! interposer preloaded (in its own process group, its output captured in
//! a private directory), time it from spawn to exit with a pidfd so that
//! Ctrl-C is noticed, reap it with wait4 for its rusage, and read what the
//! interposer of each of its processes reported. Locks are interleaved
//! over the rounds, and each lock's metric is compared with pthread's of
//! the same round.

use crate::engine::rounds::{run_rounds, Purpose};
use crate::engine::Interrupted;
use crate::family::program::interposer::{read_all, Report};
use crate::family::program::spec::RunSpec;
use crate::family::program::symbols::Symbolizer;
use crate::measure::cpu::CpuTicks;
use crate::measure::futex::{FutexCounters, FutexPlan};
use crate::measure::warnings as notes;
use crate::model::program::{MutexInits, MutexProfile, ProgramPoint, ProgramResult, ProgramSample, VsGlibc};
use crate::model::run::RunInfo;
use crate::model::warning::{Warning, WarningKind};
use anyhow::{anyhow, bail, Context, Result};
use locks::sys::process::wait4;
use nix::sys::signal::Signal;
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// A finished `contend run`.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// One per lock, pthread first.
    pub results: Vec<ProgramResult>,
    /// Each lock against pthread (None for pthread itself).
    pub vs_glibc: Vec<Option<VsGlibc>>,
    /// One line each.
    pub warnings: Vec<Warning>,
    /// The signal that ended it early.
    pub interrupted: Option<Signal>,
}

/// The run's private directory, removed with what is in it on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Self> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "contend-run-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The last `n` lines of a captured file, for an error message.
fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
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

fn run_one(
    spec: &RunSpec,
    lock: &str,
    futex: Option<&FutexCounters>,
    symbols: &mut Symbolizer,
    metric: Option<&regex::Regex>,
    echo: bool,
) -> Result<ProgramSample> {
    let scratch = Scratch::new()?;
    let (out_path, err_path) = (scratch.0.join("stdout"), scratch.0.join("stderr"));
    let preload = match std::env::var("LD_PRELOAD") {
        // The interposer first, so its pthread symbols win; the user's
        // preloads (an allocator, say) stay.
        Ok(theirs) if !theirs.trim().is_empty() => format!("{} {theirs}", spec.interposer.display()),
        _ => spec.interposer.display().to_string(),
    };
    let mut cmd = Command::new(&spec.program[0]);
    cmd.args(&spec.program[1..])
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path)?)
        .stderr(std::fs::File::create(&err_path)?)
        .env("LD_PRELOAD", preload)
        .env("CONTEND_RUN_LOCK", lock)
        .env("CONTEND_RUN_PROFILE", if spec.profile { "1" } else { "0" })
        .env("CONTEND_RUN_DIR", &scratch.0)
        // Its own group: Ctrl-C reaches contend, which ends the whole
        // group, children included.
        .process_group(0);
    if let Some(ns) = locks::sys::wake_cost::measured() {
        cmd.env("CONTEND_WAKE_NS", ns.as_nanos().to_string());
    }
    let before = futex.map(|f| f.read()).transpose()?;
    let ticks = CpuTicks::read().ok();
    let started = Instant::now();
    let child = cmd.spawn().with_context(|| format!("starting {}", spec.program[0]))?;
    let pid = child.id() as i32;
    let pidfd = rustix::process::pidfd_open(
        rustix::process::Pid::from_child(&child),
        rustix::process::PidfdFlags::empty(),
    )
    .context("pidfd_open on the program")?;
    if let Some(sig) = crate::session::signals::wait_readable(pidfd.as_fd()) {
        // SAFETY-free: kill(2) of our child's own process group.
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
        let _ = wait4(pid);
        return Err(anyhow!(Interrupted(sig)));
    }
    let wall_s = started.elapsed().as_secs_f64();
    let usage = wait4(pid).context("reaping the program")?;
    let after = futex.map(|f| f.read()).transpose()?;
    let cpu = ticks.zip(CpuTicks::read().ok()).map(|(a, b)| a.split_until(&b));
    // Children it left behind go with the run.
    let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
    if echo {
        eprint!("{}", std::fs::read_to_string(&out_path).unwrap_or_default());
        eprint!("{}", std::fs::read_to_string(&err_path).unwrap_or_default());
    }
    if usage.exit_code() != Some(0) {
        let how = match usage.signal() {
            Some(signal) => format!("was killed by signal {signal}"),
            None => format!("exited {}", usage.exit_code().unwrap_or(-1)),
        };
        bail!("{} {how} under lock {lock}; its last output:\n{}", spec.program[0], tail(&err_path, 20));
    }
    let reports = read_all(&scratch.0).map_err(|e| anyhow!("the interposer's report: {e}"))?;
    if !reports.iter().any(|r| r.pid == pid as u32) {
        bail!(
            "the interposer reported nothing from {}: it was not loaded (a statically linked or set-uid \
             program ignores LD_PRELOAD) or the program ended in _exit",
            spec.program[0]
        );
    }
    if let Some(r) = reports.iter().find(|r| r.lock != lock) {
        bail!("process {} ran lock {} instead of {lock}", r.pid, r.lock);
    }
    let metric = match metric {
        None => None,
        Some(re) => {
            let text = std::fs::read_to_string(&out_path).unwrap_or_default();
            let found = metric_in(re, &text)
                .or_else(|| metric_in(re, &std::fs::read_to_string(&err_path).unwrap_or_default()));
            Some(found.ok_or_else(|| {
                anyhow!("--metric {re}: no line of the program's output matched with a number")
            })?)
        }
    };
    Ok(ProgramSample {
        run: RunInfo::default(),
        lock: lock.to_string(),
        wall_s,
        metric,
        user_s: usage.user_s,
        sys_s: usage.sys_s,
        voluntary_context_switches: usage.voluntary,
        involuntary_context_switches: usage.involuntary,
        futex: before.zip(after).map(|(b, a)| a - b),
        processes: reports.len() as u32,
        to_glibc: reports.iter().map(|r| r.to_glibc).sum(),
        inits: sum_inits(&reports),
        mutexes: profiles(&reports, symbols),
        cpu,
    })
}

fn sum_inits(reports: &[Report]) -> MutexInits {
    let mut t = MutexInits::default();
    for r in reports {
        let i = &r.inits;
        t.swapped += i.swapped;
        t.recursive += i.recursive;
        t.errorcheck += i.errorcheck;
        t.robust += i.robust;
        t.pi_or_pp += i.pi_or_pp;
        t.pshared += i.pshared;
    }
    t
}

/// Every mutex of every process, named, most waited-on first.
fn profiles(reports: &[Report], symbols: &mut Symbolizer) -> Vec<MutexProfile> {
    let mut out: Vec<MutexProfile> = reports
        .iter()
        .flat_map(|r| r.mutexes.iter().map(move |m| (r, m)))
        .map(|(r, m)| {
            let dynamic = m.symbol.as_deref().map(|s| (s, m.symbol_address));
            let (site, offset) = symbols.name(m.site, &m.module, m.module_base, dynamic);
            MutexProfile {
                pid: r.pid,
                address: m.address,
                site,
                module: m.module.clone(),
                offset,
                kind: m.kind,
                swapped: r.lock != "pthread" && locks::in_mutex::swappable_kind(m.kind),
                counts: m.counts,
                mean_hold_ns: if m.holds > 0 { m.hold_ns as f64 / m.holds as f64 } else { 0.0 },
            }
        })
        .collect();
    out.sort_by(|a, b| {
        (b.counts.wait_ns, b.counts.acquisitions).cmp(&(a.counts.wait_ns, a.counts.acquisitions))
    });
    out
}

/// Each lock's metric against pthread's of the same round.
fn vs_glibc(results: &[ProgramResult]) -> Vec<Option<VsGlibc>> {
    let Some(base) = results.iter().find(|r| r.point.lock == "pthread") else {
        return vec![None; results.len()];
    };
    let rounds = |r: &ProgramResult| -> Vec<(u32, f64)> {
        crate::engine::repeat::measured(&r.runs)
            .map(|s| (s.run.round, crate::model::run::RunRecord::metric(s)))
            .collect()
    };
    let b = rounds(base);
    results
        .iter()
        .map(|r| {
            if r.point.lock == "pthread" {
                return None;
            }
            let pairs: Vec<(f64, f64)> = rounds(r)
                .into_iter()
                .filter_map(|(round, v)| b.iter().find(|(x, _)| *x == round).map(|&(_, base)| (v, base)))
                .collect();
            let (ratio, ci95) = crate::measure::stats::paired_ratio(&pairs)?;
            Some(VsGlibc { ratio, ci95, rounds: pairs.len() })
        })
        .collect()
}

/// Runs the program under every lock, in rounds.
pub fn run_program(spec: &RunSpec) -> Result<RunOutcome> {
    let mut warnings = Vec::new();
    if spec.baseline_added {
        warnings.push(Warning::sweep(
            WarningKind::NoBaseline,
            "pthread (glibc's mutex) was added as the baseline the ratios are to",
        ));
    }
    let (futex, inline) = FutexPlan::resolve(spec.repeat.count_futex, &mut warnings).split_inline();
    let planned = crate::engine::progress::planned_runs(spec.locks.len(), &spec.repeat, futex.separate());
    // One measured execution: its output is shown (not the counting
    // run's, which repeats it).
    let echo = spec.locks.len() == 1 && spec.repeat.runs == 1 && spec.repeat.precision_pct.is_none();
    let bar = crate::engine::progress::progress_bar(
        spec.progress && !echo,
        planned,
        std::time::Duration::from_secs(1),
        None,
    );
    let mut symbols = Symbolizer::default();
    // Compiled once for every execution (the spec checked that it compiles).
    let metric = spec.metric.as_deref().map(regex::Regex::new).transpose()?;
    let rounds = run_rounds(
        spec.locks.len(),
        &spec.repeat,
        futex.separate(),
        |i, purpose| {
            let lock = &spec.locks[i];
            bar.set_message(lock.clone());
            let counted = match purpose {
                Purpose::Count => futex.open_for_count()?,
                Purpose::Measure => None,
            };
            let shown = echo && purpose == Purpose::Measure;
            run_one(spec, lock, counted.as_ref().or(inline.as_ref()), &mut symbols, metric.as_ref(), shown)
                .with_context(|| format!("lock {lock}"))
        },
        |_, _| crate::engine::progress::tick(&bar),
    )?;
    bar.finish_and_clear();
    let mut results = Vec::new();
    let what = if spec.metric.is_some() { "metric" } else { "wall s" };
    for (lock, r) in spec.locks.iter().zip(rounds.points) {
        let Some(r) = r else { continue };
        let values: Vec<f64> =
            crate::engine::repeat::measured(&r.runs).map(crate::model::run::RunRecord::metric).collect();
        warnings.extend(notes::outliers(lock, what, &r.stats, &values));
        results.push(ProgramResult::median(ProgramPoint { lock: lock.clone() }, r));
    }
    let vs = vs_glibc(&results);
    warnings.extend(notes::screening(results.iter().map(ProgramResult::rejected), spec.repeat.max_steal_pct));
    warnings.extend(notes::drift(
        spec.repeat.order == crate::engine::repeat::Order::Interleaved,
        results.iter().map(|r| r.runs.as_slice()),
    ));
    if let Some(sig) = rounds.interrupted {
        warnings.push(notes::interrupted(sig, results.len(), spec.locks.len(), ""));
    }
    Ok(RunOutcome { results, vs_glibc: vs, warnings, interrupted: rounds.interrupted })
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
