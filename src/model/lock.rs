//! What one point of `contend lock` measured: the result schema.

use crate::measure::cpu::CpuSplit;
use crate::measure::fairness::Fairness;
use crate::measure::futex::FutexCounts;
use crate::measure::latency::{Distribution, Latencies};
use crate::measure::rusage::ProcessUsage;
use crate::measure::stats::Stats;
use crate::model::family::{Cell, Column, Family, Figure, Key, KeyIn, Metric};
use crate::model::run::{Repeated, Stopped};
use crate::model::run::{RunInfo, RunRecord};
use crate::model::value::{SpinPolicy, Work, WorkerAffinity};
use crate::model::Mode;
use serde::Serialize;
use std::ops::Sub;
use std::time::Duration;

/// One worker's cumulative counters, as it publishes them after every
/// critical section.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct WorkerCounts {
    /// Critical sections completed.
    pub acquisitions: u64,
    /// Nanoseconds spent in the hold work (busy or sleeping).
    pub hold_ns: u64,
    /// Holds that lasted over twice the request plus 5 µs: the holder was
    /// preempted (or overslept) inside the critical section.
    pub stretched_holds: u64,
    /// Failed user-space attempts (the lock's own counter).
    pub spins: u64,
    /// Futex waits the lock issued.
    pub waits: u64,
    /// Futex wakes the lock issued.
    pub wakes: u64,
    /// Acquisitions that recovered a lock whose owner died (robust locks).
    pub recoveries: u64,
    /// Of the acquisitions, the shared (read) ones, with `--read`; left
    /// out of exports at 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reads: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Sub for WorkerCounts {
    type Output = WorkerCounts;
    fn sub(self, earlier: WorkerCounts) -> WorkerCounts {
        WorkerCounts {
            acquisitions: self.acquisitions.saturating_sub(earlier.acquisitions),
            hold_ns: self.hold_ns.saturating_sub(earlier.hold_ns),
            stretched_holds: self.stretched_holds.saturating_sub(earlier.stretched_holds),
            spins: self.spins.saturating_sub(earlier.spins),
            waits: self.waits.saturating_sub(earlier.waits),
            wakes: self.wakes.saturating_sub(earlier.wakes),
            recoveries: self.recoveries.saturating_sub(earlier.recoveries),
            reads: self.reads.saturating_sub(earlier.reads),
        }
    }
}

/// The lock's own slow-path counters, summed over workers.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct LockCounters {
    /// Failed user-space attempts.
    pub spins: u64,
    /// Futex waits issued.
    pub waits: u64,
    /// Futex wakes issued.
    pub wakes: u64,
}

/// How long workers waited to acquire the lock: from the call to lock()
/// to the first instruction of the critical section, for one acquisition
/// in `every` per worker, pooled over the workers.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct AcquireLatency {
    /// One acquisition in this many was timed, per worker.
    pub every: u32,
    /// The timed acquisitions in the window (buckets 3.1% wide at most:
    /// each value is within 1.6% of the one reported).
    pub distribution: Distribution,
    /// The acquisitions, all workers, that the timed window spans are at
    /// least this many and at most `spans_at_most`: at each edge the
    /// histograms are read between two reads of the counters, a moment
    /// apart (longer if the reader is preempted). 0 in older exports.
    #[serde(default)]
    pub spans_at_least: u64,
    /// The most acquisitions the timed window can span (see
    /// `spans_at_least`).
    #[serde(default)]
    pub spans_at_most: u64,
}

/// A reader-writer lock's run (`--read`): reads and writes apart.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct RwSample {
    /// Shared (read) acquisitions in the window, all workers.
    pub reads: u64,
    /// Exclusive (write) acquisitions in the window, all workers.
    pub writes: u64,
    /// `reads / window_s`.
    pub reads_per_s: f64,
    /// `writes / window_s`.
    pub writes_per_s: f64,
    /// The timed waits of reads (one acquisition in `every` is timed,
    /// read or write, so each kind is sampled by its share); `None` with
    /// `--latency-every off`.
    pub read_wait: Option<Distribution>,
    /// The timed waits of writes, as for `read_wait`: its max is the
    /// longest a timed writer waited (a starved writer's wait).
    pub write_wait: Option<Distribution>,
}

/// What `--kill-holder-after` did: a worker killed inside its critical
/// section, and how the lock recovered.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct FaultReport {
    /// The worker that was killed while holding the lock.
    pub victim: usize,
    /// Its pid.
    pub victim_pid: i32,
    /// When, in seconds after the start of the window (the fault is armed
    /// at --kill-holder-after, checked every 250 ms).
    pub killed_after_s: f64,
    /// The worker that acquired the lock first after the kill, if one did.
    pub recovered_by: Option<usize>,
    /// From the kill to that acquisition, µs.
    pub recovery_us: Option<f64>,
    /// How the lock can come back: "eownerdead" (a robust mutex: the next
    /// locker is told and recovers it), "kernel_release" (a file lock: the
    /// kernel drops it with the dead process), or "none".
    pub recovered_how: &'static str,
}

/// Memory use of a run, kB.
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct MemoryUse {
    /// The coordinator's peak resident set (VmHWM) so far.
    pub coordinator_peak_kib: Option<u64>,
    /// Mean resident set of the worker processes at the end of the window.
    pub worker_rss_mean_kib: Option<f64>,
    /// Largest resident set among the worker processes.
    pub worker_rss_max_kib: Option<u64>,
}

/// One run of a point.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct LockSample {
    /// Its round, start time and status (measured, rejected, counting).
    #[serde(flatten)]
    pub run: RunInfo,
    /// Measured window length in seconds (t1 - t0).
    pub window_s: f64,
    /// Critical sections completed in the window, all workers.
    pub acquisitions: u64,
    /// `acquisitions / window_s`.
    pub cs_per_s: f64,
    /// Achieved mean hold time in ns, `None` when the hold is 0.
    pub mean_hold_ns: Option<f64>,
    /// Holds stretched by preemption (see [`WorkerCounts::stretched_holds`]),
    /// all workers.
    pub stretched_holds: u64,
    /// How evenly the workers shared the lock.
    pub fairness: Fairness,
    /// System-wide CPU split over the window.
    pub cpu: CpuSplit,
    /// The workers' CPU time and context switches over the window (this
    /// process for threads, the worker processes for `--procs`).
    pub process: ProcessUsage,
    /// Memory use.
    pub memory: MemoryUse,
    /// The injected fault, with --kill-holder-after (never in a child
    /// run, the only place a sample is read back).
    #[serde(skip_deserializing)]
    pub fault: Option<FaultReport>,
    /// The signal (SIGINT, SIGTERM) that cut the window short, if one did:
    /// the rates still divide by the measured (shorter) window.
    pub interrupted: Option<String>,
    /// Futex syscalls over the window, `None` when not counted in this
    /// run (measured runs under `--count-futex separate`, or counting off).
    pub futex: Option<FutexCounts>,
    /// The harness's own cost: CPU time the coordinator thread used inside
    /// the window (polling the workers every 250 ms, the probes' end
    /// reads), s. With threads it is part of `process.cpu_s`.
    pub coordinator_cpu_s: f64,
    /// The lock's own counters, `None` for locks whose internals are opaque.
    pub lock_counters: Option<LockCounters>,
    /// Acquisition latency, `None` with `--latency-every off`.
    pub acquire_latency: Option<AcquireLatency>,
    /// The private futex hash the process had at the end of the window
    /// (read back with PR_FUTEX_HASH_GET_SLOTS; 0: the global hash), when
    /// the point set one.
    #[serde(default)]
    pub futex_hash_slots: Option<u32>,
    /// Reads and writes apart, for a reader-writer lock's point
    /// (`--read`); left out otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rw: Option<RwSample>,
    /// Per-worker counts in the window, in worker order.
    pub workers: Vec<WorkerCounts>,
    /// Acquisitions over the whole run (warm-up and drain included); equal
    /// to the mutual-exclusion witness counter, or the run would have failed.
    pub total_acquisitions: u64,
}

impl RunRecord for LockSample {
    fn info(&self) -> &RunInfo {
        &self.run
    }
    fn info_mut(&mut self) -> &mut RunInfo {
        &mut self.run
    }
    fn metric(&self) -> f64 {
        self.cs_per_s
    }
    fn cut_short(&self) -> Option<nix::sys::signal::Signal> {
        self.interrupted.as_deref().and_then(|s| s.parse().ok())
    }
    fn disturbance_pct(&self) -> Option<f64> {
        // A worker killed by --kill-holder-after takes its CPU time with
        // it, so the rest would read as other processes' load: not
        // judged (and a fault run is not one to repeat anyway).
        if self.fault.is_some() {
            return None;
        }
        self.cpu.disturbance_pct(self.window_s, self.process.cpu_s)
    }
}

impl LockSample {
    /// `count` per critical section in the window, `None` with none.
    pub fn per_cs(&self, count: u64) -> Option<f64> {
        (self.acquisitions > 0).then(|| count as f64 / self.acquisitions as f64)
    }
}

/// One point of a sweep: everything a single run needs.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Point {
    /// Registry name of the lock.
    #[serde(deserialize_with = "lock_name")]
    pub lock: LockName,
    /// Threads or processes.
    pub mode: Mode,
    /// Number of workers.
    pub workers: u32,
    /// Locks the workers are spread over (worker i takes lock i mod N).
    /// Left out at 1, like the knobs below when unset, so a point reads
    /// as before they existed and compare pairs it with older exports.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub locks: u32,
    /// The process's private futex hash for the run, buckets (threads;
    /// PR_FUTEX_HASH); None: the kernel's own choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub futex_hash: Option<u32>,
    /// Spin budget, for locks that have one.
    pub spin: Option<u32>,
    /// Waiting policy, for locks that have one.
    pub spinners: Option<SpinPolicy>,
    /// glibc's `glibc.pthread.mutex_spin_count` for the run (locks that
    /// spin it: pthread-adaptive), set through GLIBC_TUNABLES in a child
    /// contend; None: glibc's own (100), in this process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glibc_spin: Option<u32>,
    /// Share of acquisitions that are reads (shared), percent, for
    /// reader-writer locks; each worker draws read or write per
    /// acquisition from its own seeded generator. None for mutexes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_pct: Option<u32>,
    /// Where the workers run (`--affinity`); unpinned (none) is left out.
    #[serde(default, skip_serializing_if = "WorkerAffinity::is_none")]
    pub affinity: WorkerAffinity,
    /// Work inside the lock.
    pub hold: Work,
    /// Work outside the lock.
    pub idle: Work,
    /// Requested window, ns.
    pub duration_ns: u64,
    /// Warm-up before the window, ns.
    pub warmup_ns: u64,
    /// Abort when no worker completes a critical section for this long, ns
    /// (0: the default, the larger of 10 s and 100 holds).
    pub stall_timeout_ns: u64,
    /// Kill the lock holder this long into the window, ns (0: no fault).
    pub kill_holder_after_ns: u64,
    /// Each worker times one acquisition in this many (0: none).
    pub latency_every: u32,
    /// Which copy of an otherwise identical point (1, 2, ...) with
    /// --replicate; None without. An A/A check compares copies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replica: Option<u32>,
}

impl Point {
    /// A point with no spin budget, policy, hold, idle or fault, a 1 s
    /// window and 100 ms warm-up; callers set what they need with struct
    /// update syntax.
    pub fn new(lock: &'static str, mode: Mode, workers: u32) -> Self {
        Point {
            lock,
            mode,
            workers,
            locks: 1,
            futex_hash: None,
            spin: None,
            spinners: None,
            glibc_spin: None,
            read_pct: None,
            affinity: WorkerAffinity::None,
            hold: Work::NONE,
            idle: Work::NONE,
            duration_ns: 1_000_000_000,
            warmup_ns: 100_000_000,
            stall_timeout_ns: 0,
            kill_holder_after_ns: 0,
            latency_every: 0,
            replica: None,
        }
    }

    /// The point in a few words, for progress, notes and warnings:
    /// `adaptive ×4 threads spinners one spin 100 hold 1µs idle 0`.
    pub fn label(&self) -> String {
        let spinners = self.spinners.map_or(String::new(), |s| format!(" spinners {s}"));
        let spin = self.spin.map_or(String::new(), |s| format!(" spin {s}"));
        let spin = spin + &self.glibc_spin.map_or(String::new(), |s| format!(" glibc-spin {s}"));
        let replica = self.replica.map_or(String::new(), |r| format!(" replica {r}"));
        let locks = if self.locks > 1 { format!(" over {} locks", self.locks) } else { String::new() };
        let hash = self.futex_hash.map_or(String::new(), |h| format!(" futex-hash {h}"));
        let read = self.read_pct.map_or(String::new(), |r| format!(" read {r}%"));
        let pinned =
            Some(self.affinity).filter(|a| !a.is_none()).map_or(String::new(), |a| format!(" affinity {a}"));
        format!(
            "{} ×{} {}{locks}{hash}{pinned}{spinners}{spin}{read} hold {} idle {}{replica}",
            self.lock,
            self.workers,
            self.mode.label(),
            self.hold,
            self.idle
        )
    }

    /// The stall timeout in force.
    pub fn stall(&self) -> Duration {
        match self.stall_timeout_ns {
            0 => Duration::from_secs(10).max(Duration::from_nanos(self.hold.ns.saturating_mul(100))),
            ns => Duration::from_nanos(ns),
        }
    }

    /// How long stopped workers get to leave the lock: a worker may be in
    /// one last hold, or asleep behind others that each hold once more.
    pub fn drain_grace(&self) -> Duration {
        let per_turn = Duration::from_nanos(self.hold.ns.saturating_add(self.idle.ns));
        Duration::from_secs(10).max(per_turn.saturating_mul(self.workers.saturating_mul(4)))
    }

    /// Requested window.
    pub fn duration(&self) -> Duration {
        Duration::from_nanos(self.duration_ns)
    }

    /// Warm-up.
    pub fn warmup(&self) -> Duration {
        Duration::from_nanos(self.warmup_ns)
    }
}

/// One: the lock count of a point that has no `locks` field (it
/// predates `--locks`), here and in the figure's reading of exports.
pub(crate) fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// A lock's registry name. (An alias, not `&'static str` written out:
/// serde's derive borrows every field it sees spelled `&str` from the
/// input, which a point read back from a child's JSON cannot allow.)
pub type LockName = &'static str;

/// A point's lock name read back (by a child run, which gets its point as
/// JSON): the name must outlive the point, and a child reads one point in
/// its life, so it is leaked rather than looked up in a registry the
/// model cannot see (the child checks it against the registry).
fn lock_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    let name: String = serde::Deserialize::deserialize(d)?;
    Ok(Box::leak(name.into_boxed_str()))
}

/// The lock family in exports (see [`crate::model::family`]).
pub const FAMILY: Family = Family {
    name: "lock",
    key_in: KeyIn::Point,
    identity: &[
        Key::Field("lock"),
        Key::Field("mode"),
        Key::Field("workers"),
        Key::Field("locks"),
        Key::Field("futex_hash"),
        Key::Field("spin"),
        Key::Field("spinners"),
        Key::Field("glibc_spin"),
        Key::Field("read_pct"),
        Key::Field("affinity"),
        Key::Field("hold"),
        Key::Field("idle"),
        Key::Field("replica"),
    ],
    // A fault-injection deadline is how the run was driven, as the window
    // is: compare pairs a point with and without it (as it always has).
    settings: &["duration_ns", "warmup_ns", "stall_timeout_ns", "kill_holder_after_ns", "latency_every"],
    metric: cs_per_s,
    columns: &[
        Column { header: "lock", path: &["point", "lock"], cell: Cell::Text },
        Column { header: "workers", path: &["point", "workers"], cell: Cell::Text },
        Column { header: "spin", path: &["point", "spin"], cell: Cell::Text },
        Column { header: "spinners", path: &["point", "spinners"], cell: Cell::Text },
        Column { header: "hold", path: &["point", "hold"], cell: Cell::Work },
        Column { header: "idle", path: &["point", "idle"], cell: Cell::Work },
        Column { header: "cs/s", path: &["stats", "mean"], cell: Cell::Si },
        Column { header: "±95%", path: &["stats", "ci95"], cell: Cell::Si },
        Column { header: "runs", path: &["stats", "n"], cell: Cell::Text },
        Column { header: "Jain", path: &["sample", "fairness", "jain"], cell: Cell::Fixed(4) },
    ],
    figure: Some(Figure::Throughput),
    details: crate::model::family::no_details,
};

fn cs_per_s(_spec: &serde_json::Value) -> Metric {
    Metric { name: "cs/s", path: &["cs_per_s"], higher_is_better: true }
}

/// A lock point and what its runs measured (cs/s).
pub type PointResult = super::Measured<Point, LockSample>;

impl PointResult {
    /// Builds the result from a point's runs: the detail sample is the
    /// run with the median cs/s.
    pub fn new(point: Point, repeated: Repeated<LockSample>) -> Self {
        Self::median(point, repeated)
    }

    /// The acquisition latency of the runs the statistics use, pooled
    /// (tails need every timed wait there is), with the spacing the runs
    /// timed at; `None` when latency was off.
    pub fn acquire_latency(&self) -> Option<(u32, Latencies)> {
        let mut pooled: Option<(u32, Latencies)> = None;
        for a in crate::model::run::stats_runs(&self.runs).filter_map(|r| r.acquire_latency.as_ref()) {
            let (_, h) = pooled.get_or_insert_with(|| (a.every, Latencies::new()));
            h.merge(&a.distribution.histogram());
        }
        pooled
    }

    /// The waits of reads and of writes of the runs the statistics use,
    /// pooled (as [`PointResult::acquire_latency`]); `None` for a mutex's
    /// point or with latency off.
    pub fn rw_waits(&self) -> Option<(Latencies, Latencies)> {
        let mut pooled: Option<(Latencies, Latencies)> = None;
        for rw in crate::model::run::stats_runs(&self.runs).filter_map(|r| r.rw.as_ref()) {
            let (Some(read), Some(write)) = (&rw.read_wait, &rw.write_wait) else { continue };
            let (r, w) = pooled.get_or_insert_with(|| (Latencies::new(), Latencies::new()));
            r.merge(&read.histogram());
            w.merge(&write.histogram());
        }
        pooled
    }

    /// A result of a single run (tests, and code that measures once).
    pub fn single(point: Point, sample: LockSample) -> Self {
        Self::new(
            point,
            Repeated { stats: Stats::of(&[sample.cs_per_s]), runs: vec![sample], stopped: Stopped::Runs },
        )
    }
}

#[cfg(test)]
mod family_tests {
    #[test]
    fn every_field_of_a_lock_point_is_identity_or_setting() {
        // Every field that can be left out set, so that all appear.
        let mut p = super::Point::new("futex", super::Mode::Threads, 2);
        p.replica = Some(1);
        p.locks = 2;
        p.futex_hash = Some(16);
        p.glibc_spin = Some(100);
        p.read_pct = Some(90);
        p.affinity = crate::model::value::WorkerAffinity::Spread;
        crate::model::family::check::classifies_every_field(
            &super::FAMILY,
            &serde_json::to_value(&p).unwrap(),
        );
    }
}
