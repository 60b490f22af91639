//! The validated experiment: what the CLI asked for, checked across flags
//! and expanded into the points of the sweep (the cartesian product of the
//! list flags). Everything here is serializable, so exports carry the spec.

use crate::engine::repeat::Repeat;
use crate::family::lock::args::{Format, LockArgs, DEFAULT_READ_PCT};
use crate::family::lock::registry;
pub use crate::model::lock::Point;
use crate::model::value::{LatencyEvery, SpinPolicy, Work, WorkerAffinity};
pub use crate::model::{Mode, SpecError};
use crate::session::limits::Limits;
use crate::session::resources::DEFAULT_LOCK_DIR;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;

/// `contend lock`, validated.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct LockSpec {
    /// Locks swept.
    pub locks: Vec<&'static str>,
    /// Threads or processes.
    pub mode: Mode,
    /// Worker counts swept.
    pub workers: Vec<u32>,
    /// Lock counts swept (--locks; [1] without).
    pub locks_per_point: Vec<u32>,
    /// Private futex hash sizes swept (empty: the kernel's choice).
    pub futex_hash: Vec<u32>,
    /// Where lock files go.
    pub lock_dir: PathBuf,
    /// File locks open and close the lock file around every acquisition,
    /// as lockscale does (`--reopen`).
    pub reopen: bool,
    /// Worker placements swept (--affinity; [none] without).
    pub affinities: Vec<WorkerAffinity>,
    /// The CPUs contend may use (its affinity mask when the spec was
    /// made), which pinned placements draw from in order.
    pub cpus: Vec<usize>,
    /// Spin budgets swept (empty: each lock's default).
    pub spins: Vec<u32>,
    /// Waiting policies swept (empty: the default, one).
    pub spinners: Vec<SpinPolicy>,
    /// glibc mutex spin counts swept (empty: glibc's own, in-process).
    pub glibc_spins: Vec<u32>,
    /// Read shares swept for reader-writer locks, percent (empty: 90).
    pub read_pcts: Vec<u32>,
    /// (hold, idle) pairs swept: the product of --hold and --idle, or one
    /// pair per --period x --duty.
    pub work: Vec<(Work, Work)>,
    /// Requested window per point, ns.
    pub duration_ns: u64,
    /// Warm-up per point, ns.
    pub warmup_ns: u64,
    /// Stall timeout, ns (0: per point, the larger of 10 s and 100 holds).
    pub stall_timeout_ns: u64,
    /// Fault injection: kill the holder this long into the window, ns.
    pub kill_holder_after_ns: u64,
    /// Output format on stdout.
    pub format: Format,
    /// Where results go (the export flags).
    #[serde(flatten)]
    pub output: crate::output::args::OutputArgs,
    /// Whether a progress bar may be shown.
    pub progress: bool,
    /// Runs per point.
    pub repeat: Repeat,
    /// Identical copies of every point (--replicate; 1: none).
    pub replicate: u32,
    /// Which acquisitions are timed (--latency-every).
    pub latency_every: LatencyEvery,
}

/// Worker threads when neither --threads nor --procs is given
/// (futex-scalability.c's default).
pub const DEFAULT_THREADS: u32 = 4;

/// The window of a run, without --precision.
pub const DEFAULT_WINDOW: Duration = Duration::from_secs(2);
/// The warm-up of a run, without --precision.
pub const DEFAULT_WARMUP: Duration = Duration::from_millis(250);
/// With --precision: many short runs narrow the interval faster here than
/// a few long ones (runs differ from each other by more than a longer
/// window averages away). On the seed table at ±2% with --max-time 5s
/// (scripts/experiments/seed-precision.py), pooled over two sets of tries, 300 ms
/// windows reached all 6 points in 6 of 8 tries, 100 ms in 4 of 6,
/// 200 ms in 2 of 6: between them, within the host's noise; 2 s windows
/// leave time for one run per point.
pub const PRECISION_WINDOW: Duration = Duration::from_millis(300);
/// With --precision: the warm-up that goes with the shorter window.
pub const PRECISION_WARMUP: Duration = Duration::from_millis(100);

fn err(msg: impl Into<String>) -> SpecError {
    SpecError(msg.into())
}

impl LockSpec {
    /// Validates the arguments of `contend lock`.
    pub fn from_args(args: &LockArgs) -> Result<Self, SpecError> {
        let mut locks = args.lock.0.clone();
        locks.dedup();
        let entries: Vec<_> = locks.iter().filter_map(|n| registry::find(n)).collect();

        for entry in &entries {
            (entry.available)()
                .map_err(|why| err(format!("lock `{}` cannot run here: {why}", entry.name)))?;
        }
        // A knob some of the chosen locks lack makes a mixed sweep: those
        // locks run once per remaining point, as reference series (pthread
        // next to adaptive's waiting policies). A knob none of them takes
        // is a mistake.
        let spins = args.spin.as_ref().map_or_else(Vec::new, |l| l.0.clone());
        if !spins.is_empty() && lacking(&entries, |e| e.caps.spin).len() == entries.len() {
            let refused = lacking(&entries, |e| e.caps.spin);
            return Err(err(format!(
                "--spin does not apply to {}: {} no spin budget (locks that take --spin: {})",
                refused.join(", "),
                if refused.len() == 1 { "it has" } else { "they have" },
                registry::names_with(|c| c.spin)
            )));
        }
        let glibc_spins = args.glibc_spin.as_ref().map_or_else(Vec::new, |l| l.0.clone());
        if !glibc_spins.is_empty() && lacking(&entries, |e| e.caps.glibc_spin).len() == entries.len() {
            return Err(err(format!(
                "--glibc-spin does not apply to {}: only glibc's adaptive mutex spins it (locks that take \
                 --glibc-spin: {})",
                lacking(&entries, |e| e.caps.glibc_spin).join(", "),
                registry::names_with(|c| c.glibc_spin)
            )));
        }
        let read_pcts = args.read.as_ref().map_or_else(Vec::new, |l| l.0.clone());
        if !read_pcts.is_empty() && lacking(&entries, |e| e.caps.rw).len() == entries.len() {
            return Err(err(format!(
                "--read does not apply to {}: {} no shared mode (reader-writer locks: {})",
                lacking(&entries, |e| e.caps.rw).join(", "),
                if entries.len() == 1 { "it has" } else { "they have" },
                registry::names_with(|c| c.rw)
            )));
        }
        let spinners = args.spinners.as_ref().map_or_else(Vec::new, |l| l.0.clone());
        if !spinners.is_empty() && lacking(&entries, |e| e.caps.spinners).len() == entries.len() {
            return Err(err(format!(
                "--spinners does not apply to {} (locks that take --spinners: {})",
                lacking(&entries, |e| e.caps.spinners).join(", "),
                registry::names_with(|c| c.spinners)
            )));
        }
        let (mode, workers) = match (&args.threads, &args.procs) {
            (_, Some(procs)) => (Mode::Processes, procs.0.clone()),
            (Some(threads), None) => (Mode::Threads, threads.0.clone()),
            (None, None) => (Mode::Threads, vec![DEFAULT_THREADS]),
        };
        let most = workers.iter().copied().max().unwrap_or(1);
        if let Some(e) = entries.iter().find(|e| most > e.caps.max_workers) {
            return Err(err(format!(
                "lock `{}` takes at most {} workers (its word counts the waiters); {most} asked",
                e.name, e.caps.max_workers
            )));
        }
        if let Some(e) = entries.iter().find(|e| !e.caps.exclusive) {
            if most > 1 {
                return Err(err(format!(
                    "lock `{}` provides no mutual exclusion; use it with one worker",
                    e.name
                )));
            }
        }
        match mode {
            Mode::Processes => {
                let refused = lacking(&entries, |e| e.run_procs.is_some());
                if !refused.is_empty() {
                    return Err(err(format!(
                        "--procs needs locks that work across processes; {} cannot (locks that can: {})",
                        refused.join(", "),
                        registry::names_with(|c| c.process_shared)
                    )));
                }
            }
            Mode::Threads => {
                if let Some(e) = entries.iter().find(|e| !e.caps.threads) {
                    if most > 1 {
                        return Err(err(format!(
                            "lock `{}` belongs to the process, so threads of one process never exclude \
                             each other; run it with --procs",
                            e.name
                        )));
                    }
                }
            }
        }
        let (locks_axis, futex_hash) = layout_axes(args, &entries, &workers, mode)?;
        let limits = Limits::read();
        let noun = if mode == Mode::Processes { "processes" } else { "threads" };
        limits.check_tasks(u64::from(most), noun).map_err(err)?;
        let needs_file = entries.iter().any(|e| e.caps.needs_file);
        if needs_file && mode == Mode::Threads {
            limits.check_files(u64::from(most)).map_err(err)?;
        }
        let lock_dir = args.lock_dir.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_LOCK_DIR));
        if needs_file {
            probe_lock_dir(&lock_dir).map_err(err)?;
        }
        if args.reopen && !needs_file {
            return Err(err(
                "--reopen opens and closes the lock file around every acquisition: it is for the file locks \
                 (flock, fcntl, lockf), and --lock names none",
            ));
        }
        let affinities = args.affinity.as_ref().map_or_else(|| vec![WorkerAffinity::None], |l| l.0.clone());
        let cpus = locks::sys::sched::allowed_cpus().unwrap_or_default();
        if cpus.is_empty() && affinities.iter().any(|a| !a.is_none()) {
            return Err(err(
                "--affinity pins the workers, but the kernel would not say which CPUs contend may use \
                 (sched_getaffinity failed); leave --affinity out",
            ));
        }
        let precision = args.repeat.precision.is_some();
        let duration = args.duration.unwrap_or(if precision { PRECISION_WINDOW } else { DEFAULT_WINDOW });
        let warmup = args.warmup.unwrap_or(if precision { PRECISION_WARMUP } else { DEFAULT_WARMUP });
        if let Some(after) = args.kill_holder_after {
            if mode != Mode::Processes {
                return Err(err("--kill-holder-after kills a worker process inside its critical section; \
                     it needs --procs (killing a thread would kill contend)"));
            }
            if after.is_zero() || after >= duration {
                return Err(err("--kill-holder-after must be above 0 and shorter than --duration"));
            }
        }
        if args.stall_timeout.is_some_and(|d| d.is_zero()) {
            return Err(err("--stall-timeout must be longer than 0 (e.g. --stall-timeout 10s)"));
        }
        if duration.is_zero() {
            return Err(err("--duration must be longer than 0 (e.g. --duration 2s)"));
        }

        let work = if let (Some(periods), Some(duties)) = (&args.period, &args.duty) {
            let mut pairs = Vec::new();
            for &period in &periods.0 {
                for &duty in &duties.0 {
                    let hold = (period as f64 * duty).round() as u64;
                    pairs.push((Work::busy(hold), Work::busy(period - hold)));
                }
            }
            pairs
        } else {
            let mut pairs = Vec::new();
            for &hold in &args.hold.0 {
                for &idle in &args.idle.0 {
                    pairs.push((hold, idle));
                }
            }
            pairs
        };

        let spec = LockSpec {
            locks,
            mode,
            workers,
            locks_per_point: locks_axis,
            futex_hash,
            lock_dir,
            reopen: args.reopen,
            affinities,
            cpus,
            spins,
            spinners,
            glibc_spins,
            read_pcts,
            work,
            duration_ns: duration.as_nanos() as u64,
            warmup_ns: warmup.as_nanos() as u64,
            stall_timeout_ns: args.stall_timeout.map_or(0, |d| d.as_nanos() as u64),
            kill_holder_after_ns: args.kill_holder_after.map_or(0, |d| d.as_nanos() as u64),
            format: args.format,
            output: args.output.clone(),
            progress: !args.output.no_progress,
            repeat: args.repeat.plan().map_err(err)?,
            replicate: args.replicate,
            latency_every: args.latency_every,
        };
        let n = spec.point_count();
        if n > MAX_POINTS {
            return Err(err(format!(
                "the sweep has {n} points (the product of the lists{}); at most {MAX_POINTS}: \
                 narrow the lists",
                if spec.replicate > 1 { " and --replicate" } else { "" }
            )));
        }
        Ok(spec)
    }

    /// How many points the sweep has, counted without building them.
    pub fn point_count(&self) -> u128 {
        let replicas = u128::from(self.replicate.max(1));
        // The same axes `points` builds, by the same rule (`axis`).
        let per_lock = |lock: &str| {
            let caps = registry::find(lock).map(|e| e.caps);
            let spins = axis(caps.is_some_and(|c| c.spin), &self.spins, 0).len();
            let policies = axis(caps.is_some_and(|c| c.spinners), &self.spinners, SpinPolicy::One).len();
            let glibc = optional_axis(caps.is_some_and(|c| c.glibc_spin), &self.glibc_spins).len();
            let reads = axis(caps.is_some_and(|c| c.rw), &self.read_pcts, DEFAULT_READ_PCT).len();
            (spins * policies * glibc * reads) as u128
        };
        let hashes = self.futex_hash.len().max(1);
        let shared = (self.workers.len()
            * self.locks_per_point.len()
            * hashes
            * self.affinities.len()
            * self.work.len()) as u128
            * replicas;
        self.locks.iter().map(|l| per_lock(l) * shared).sum()
    }

    /// The points of the sweep, lock-major, in the order given.
    pub fn points(&self) -> Vec<Point> {
        let mut points = Vec::new();
        let replicas: Vec<Option<u32>> = match self.replicate {
            0 | 1 => vec![None],
            n => (1..=n).map(Some).collect(),
        };
        for &lock in &self.locks {
            let caps = registry::find(lock).map(|e| e.caps);
            let spins = axis(caps.is_some_and(|c| c.spin), &self.spins, locks::LockConfig::DEFAULT_SPIN);
            let policies = axis(caps.is_some_and(|c| c.spinners), &self.spinners, SpinPolicy::One);
            let glibc_spins = optional_axis(caps.is_some_and(|c| c.glibc_spin), &self.glibc_spins);
            let reads = axis(caps.is_some_and(|c| c.rw), &self.read_pcts, DEFAULT_READ_PCT);
            let hashes: Vec<Option<u32>> = optional_axis(true, &self.futex_hash);
            let layouts: Vec<(u32, u32, Option<u32>, WorkerAffinity)> = self
                .workers
                .iter()
                .flat_map(|&w| self.locks_per_point.iter().map(move |&l| (w, l)))
                .flat_map(|(w, l)| hashes.iter().map(move |&h| (w, l, h)))
                .flat_map(|(w, l, h)| self.affinities.iter().map(move |&a| (w, l, h, a)))
                .collect();
            for &(workers, locks, futex_hash, affinity) in &layouts {
                for (&spinners, &glibc_spin) in
                    policies.iter().flat_map(|p| glibc_spins.iter().map(move |g| (p, g)))
                {
                    for (&spin, &read_pct) in spins.iter().flat_map(|s| reads.iter().map(move |r| (s, r))) {
                        for (&(hold, idle), &replica) in
                            self.work.iter().flat_map(|w| replicas.iter().map(move |r| (w, r)))
                        {
                            points.push(Point {
                                lock,
                                mode: self.mode,
                                workers,
                                locks,
                                futex_hash,
                                spin,
                                spinners,
                                glibc_spin,
                                read_pct,
                                affinity,
                                hold,
                                idle,
                                duration_ns: self.duration_ns,
                                warmup_ns: self.warmup_ns,
                                stall_timeout_ns: self.stall_timeout_ns,
                                kill_holder_after_ns: self.kill_holder_after_ns,
                                latency_every: self.latency_every.for_cycle(hold.ns, idle.ns),
                                replica,
                            });
                        }
                    }
                }
            }
        }
        points
    }
}

/// `--locks` and `--futex-hash`, checked against the locks, the worker
/// counts and the mode: (lock counts, hash sizes).
fn layout_axes(
    args: &LockArgs,
    entries: &[&registry::LockEntry],
    workers: &[u32],
    mode: Mode,
) -> Result<(Vec<u32>, Vec<u32>), SpecError> {
    let locks_axis = args.locks.as_ref().map_or_else(|| vec![1], |l| l.0.clone());
    let most_locks = locks_axis.iter().copied().max().unwrap_or(1);
    if most_locks > 1 {
        if let Some(e) = entries.iter().find(|e| e.caps.needs_file || e.caps.needs_sem_set) {
            return Err(err(format!(
                "--locks {most_locks}: lock `{}` lives in the run's one lock file or semaphore set, so it \
                 cannot be made {most_locks} times",
                e.name
            )));
        }
        if args.kill_holder_after.is_some() {
            return Err(err("--kill-holder-after kills the holder of the one lock; it takes no --locks"));
        }
        if let Some(e) = entries.iter().find(|e| e.caps.rw) {
            return Err(err(format!(
                "--locks {most_locks}: reader-writer locks (`{}`) run on one lock; their witness of \
                 readers against writers is the run's",
                e.name
            )));
        }
        let fewest = workers.iter().copied().min().unwrap_or(1);
        if most_locks > fewest {
            return Err(err(format!(
                "--locks {most_locks} with {fewest} {}: some locks would have no worker",
                if mode == Mode::Processes { "processes" } else { "threads" }
            )));
        }
    }
    let futex_hash = args.futex_hash.as_ref().map_or_else(Vec::new, |l| l.0.clone());
    if !futex_hash.is_empty() {
        if mode == Mode::Processes {
            return Err(err("--futex-hash sizes a process's private hash, which serves its threads' \
                 private futexes; worker processes share their locks through shared futexes, which \
                 the kernel's global hash serves (use --threads)"));
        }
        if let Err(e) = locks::sys::kernel_knobs::futex_hash_slots() {
            return Err(err(format!(
                "--futex-hash: this kernel has no private futex hash (PR_FUTEX_HASH, Linux 6.17): {e}"
            )));
        }
    }
    Ok((locks_axis, futex_hash))
}

/// The names of the chosen locks that do not pass `ok`, for refusing a flag
/// that only some locks take.
fn lacking(entries: &[&registry::LockEntry], ok: impl Fn(&registry::LockEntry) -> bool) -> Vec<&'static str> {
    entries.iter().filter(|e| !ok(e)).map(|e| e.name).collect()
}

/// The most points one sweep may have: every point runs at least once for
/// its window, so more is a typo (`--replicate 4000000000`), not a plan.
pub const MAX_POINTS: u128 = 10_000;

/// The values of an optional axis for one lock: none if the lock does not
/// take it, the default if the user gave none, else the user's list.
fn axis<T: Copy>(applies: bool, given: &[T], default: T) -> Vec<Option<T>> {
    match (applies, given.is_empty()) {
        (false, _) => vec![None],
        (true, true) => vec![Some(default)],
        (true, false) => given.iter().copied().map(Some).collect(),
    }
}

/// The values of an axis whose absence is a setting of its own (glibc's
/// spin count: none asked means glibc's, in this process): none if the
/// lock does not take it or none was given, else the user's list.
fn optional_axis<T: Copy>(applies: bool, given: &[T]) -> Vec<Option<T>> {
    match applies && !given.is_empty() {
        false => vec![None],
        true => given.iter().copied().map(Some).collect(),
    }
}

/// Checks that the run's private directory can be made in `dir`, by
/// making one and removing it: /proc is a directory too, and a read-only
/// mount or missing permission shows only when something is created.
pub fn probe_lock_dir(dir: &std::path::Path) -> Result<(), String> {
    if !dir.is_dir() {
        return Err(format!(
            "--lock-dir {} is not a directory (the lock file is created in a private directory there)",
            dir.display()
        ));
    }
    let template = dir.join(format!("{}probe-XXXXXX", crate::session::resources::DIR_PREFIX));
    let probe = nix::unistd::mkdtemp(&template).map_err(|e| {
        format!("--lock-dir {}: cannot create the run's private directory there ({e})", dir.display())
    })?;
    let _ = std::fs::remove_dir(probe);
    Ok(())
}

#[cfg(test)]
mod tests;
