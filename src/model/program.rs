//! What `contend run` measured: one execution of the program under one
//! lock (its wall time, the rate it printed, its CPU time, what the
//! interposer counted), the per-mutex profile (its types in
//! `mutex_profile.rs`, re-exported here), and the ratio to glibc's
//! mutex over the rounds.

use crate::measure::cpu::CpuSplit;
use crate::measure::futex::FutexCounts;
use crate::model::run::{RunInfo, RunRecord};
use nix::sys::signal::Signal;
use serde::Serialize;

/// The name of glibc's own mutex as a point of `contend run` (the
/// baseline every ratio is to): the swappable table's `Swap::Pthread`.
pub const GLIBC: &str = "pthread";
pub use crate::model::mutex_profile::{
    HolderProfile, KernelWaitTotals, MutexCounts, MutexInits, MutexProfile, ProfileSort, RwKind,
    RwLockProfile, SideProfile, StackProfile,
};

/// What the program left running when it exited (daemons, background
/// jobs, anything that left its process group), and what became of it:
/// contend ends everything a run starts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Leftovers {
    /// Processes found running after the program exited (each was sent
    /// SIGTERM).
    pub found: u64,
    /// Of those, the ones still there after the grace, sent SIGKILL.
    pub killed: u64,
    /// Processes that did not die even then (uninterruptible sleep): they
    /// outlive the run, and a warning names them.
    pub survivors: u64,
}

/// One execution of the program under one lock.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ProgramSample {
    /// Its round, start time and status.
    #[serde(flatten)]
    pub run: RunInfo,
    /// The lock swapped in (`pthread`: glibc's mutex).
    pub lock: String,
    /// From the program's start to its exit, s.
    pub wall_s: f64,
    /// The rate `--metric` took from its output.
    pub metric: Option<f64>,
    /// User CPU of the program and its reaped children, s.
    pub user_s: f64,
    /// System CPU, s.
    pub sys_s: f64,
    /// Voluntary context switches.
    pub voluntary_context_switches: i64,
    /// Involuntary context switches.
    pub involuntary_context_switches: i64,
    /// Futex syscalls of the program, when counted.
    pub futex: Option<FutexCounts>,
    /// Processes the interposer was loaded into (by exec; forked children
    /// are not counted here).
    pub loaded: u32,
    /// Processes whose interposer reported (the program, and children that
    /// exited normally).
    pub processes: u32,
    /// Whether the program's own process reported; false when it left
    /// without running library destructors (Go's runtime ends with a raw
    /// exit_group), so its acquisitions are unknown.
    pub program_reported: bool,
    /// Acquisitions made by the swapped lock (0 under `pthread`; 0 under
    /// another lock means that lock never ran, and it gets no ratio).
    pub swapped: u64,
    /// Acquisitions of glibc's mutex through the interposer: every one
    /// under `pthread`; under a swapped lock, the kinds it leaves to glibc
    /// (recursive, error-checking, robust, PI, PP, process-shared).
    pub to_glibc: u64,
    /// `pthread_mutex_init` calls by outcome.
    pub inits: MutexInits,
    /// With `--profile`: every mutex, most waited-on first.
    pub mutexes: Vec<MutexProfile>,
    /// With `--profile`: the program's sleeping futex calls (FUTEX_WAIT,
    /// FUTEX_LOCK_PI) in all and on its mutexes, when they could be
    /// counted.
    pub kernel_waits: Option<KernelWaitTotals>,
    /// With `--profile`, in the execution that counts futex calls: every
    /// futex word the program slept on, from the kernel's futex syscalls
    /// (pthread mutexes and every other futex-based lock alike).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub futex_view: Option<crate::model::futex_word::FutexView>,
    /// With `--profile`: every pthread rwlock and spinlock, most waited-on
    /// first.
    pub rwlocks: Vec<RwLockProfile>,
    /// With `--profile`: how to get names for the modules the top
    /// mutexes could only be named in by offset.
    pub symbol_hints: Vec<String>,
    /// System-wide CPU split over the run.
    pub cpu: Option<CpuSplit>,
    /// What the program left running at its exit, ended by contend.
    pub leftovers: Leftovers,
    /// Under a what-if delay (`--what-if`): the critical sections
    /// lengthened, over the program's processes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delayed: Option<Delayed>,
    /// Under a virtual speedup (`--what-if`): what the interposer's
    /// accounts said, from the process that owed the most (the one whose
    /// mutex was sped up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sped: Option<Sped>,
    /// The program's exit code (None: a signal ended it).
    pub exit_code: Option<i32>,
    /// The signal that ended it, by name (`SIGSEGV`).
    pub signal: Option<String>,
    /// What the interposer said in any of the program's processes: faults
    /// (it could not go on as glibc would) and notes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub said: Vec<Said>,
    /// Why this execution failed: an exit status not accepted
    /// (`--exit-codes`, `--ignore-failure`), a signal, or the interposer's
    /// fault. None: it succeeded.
    pub failure: Option<String>,
}

/// One thing the interposer said in one process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Said {
    /// The process.
    pub pid: u32,
    /// A fault (the execution failed because of it) or a note.
    pub fault: bool,
    /// What it said.
    pub text: String,
}

/// A lock under which the program failed while it succeeds under glibc's
/// mutex: no statistics and no ratio, only why, and every execution made.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FailedPoint {
    /// The lock.
    pub point: ProgramPoint,
    /// The failing execution's reason (its `failure`).
    pub reason: String,
    /// The round the failure came in (0-based).
    pub round: u32,
    /// Every execution made of it, the failing one last.
    pub runs: Vec<ProgramSample>,
}

/// What a what-if delay added, as the interposer's clock saw it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Delayed {
    /// Critical sections lengthened.
    pub count: u64,
    /// The time added to them in all, ns.
    pub ns: u64,
}

/// What a virtual speedup did in one execution (crates/interpose
/// `speedup.rs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Sped {
    /// The speedup asked, percent of each critical section.
    pub percent: u64,
    /// Critical sections of the mutex ended (an estimate: each thread
    /// times a sample of them, each counting for as many as it was drawn
    /// among; crates/interpose `sampling.rs`).
    pub sections: u64,
    /// Their virtual length in all, ns (an estimate, likewise).
    pub section_ns: u64,
    /// The pause every thread owed in all, ns: what the program's time
    /// with the speedup is shorter than its measured time.
    pub owed_ns: u64,
    /// What its threads busy-waited to pay, ns (in all threads).
    pub paid_ns: u64,
}

impl Sped {
    /// The pause every thread owed in all, s (G).
    pub fn owed_s(&self) -> f64 {
        self.owed_ns as f64 * 1e-9
    }
}

impl Delayed {
    /// The mean added per critical section, ns.
    pub fn mean_ns(&self) -> Option<f64> {
        (self.count > 0).then(|| self.ns as f64 / self.count as f64)
    }
}

impl RunRecord for ProgramSample {
    fn info(&self) -> &RunInfo {
        &self.run
    }
    fn info_mut(&mut self) -> &mut RunInfo {
        &mut self.run
    }
    fn metric(&self) -> f64 {
        self.metric.unwrap_or(self.wall_s)
    }
    fn cut_short(&self) -> Option<Signal> {
        None
    }
    fn disturbance_pct(&self) -> Option<f64> {
        self.cpu.and_then(|cpu| cpu.disturbance_pct(self.wall_s, self.user_s + self.sys_s))
    }
    fn window(&self) -> Option<crate::measure::cpu::Window> {
        self.cpu.map(|split| crate::measure::cpu::Window {
            window_s: self.wall_s,
            own_cpu_s: self.user_s + self.sys_s,
            split,
        })
    }
    fn failed(&self) -> bool {
        self.failure.is_some()
    }
}

/// One lock's point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ProgramPoint {
    /// The lock.
    pub lock: String,
    /// Whether its executions were profiled: with `--profile`, glibc's
    /// mutex also runs unprofiled, so that the profile's cost to this
    /// program is measured in the same rounds. (Exports made before it
    /// existed read as false.)
    #[serde(default)]
    #[schemars(required)]
    pub profiled: bool,
    /// For a per-mutex choice (`LOCK@MUTEX`): the mutexes it swapped, by
    /// address, as the interposer was given them (`tas@0x4040c0;...`),
    /// after names were mapped to addresses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen: Option<String>,
    /// For a what-if point: the mutex whose critical sections were
    /// lengthened and by how much, as the interposer was given it
    /// (`0xADDRESS@NS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<String>,
    /// For a what-if point by virtual speedup: the mutex and the percent
    /// its sections were virtually shortened by, as the interposer was
    /// given them (`0xADDRESS@PERCENT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speedup: Option<String>,
    /// With a parameter scan (`--parameter-scan`, `--parameter-list`):
    /// the value the program ran with; its ratio is to glibc's mutex at
    /// the same value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameter: Option<ParameterValue>,
}

/// One value of a parameter scan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ParameterValue {
    /// The parameter, as `{NAME}` in the program's arguments.
    pub name: String,
    /// Its value here.
    pub value: String,
}

impl ParameterValue {
    /// How `name` stands in an argument: `{NAME}`.
    pub fn placeholder(name: &str) -> String {
        format!("{{{name}}}")
    }

    /// A point's or a ratio's `parameter` as an export keeps it (None when
    /// it has none).
    pub fn in_export(v: &serde_json::Value) -> Option<Self> {
        <Self as serde::Deserialize>::deserialize(v).ok()
    }
}

/// As tables name it: `threads=4`.
impl std::fmt::Display for ParameterValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}", self.name, self.value)
    }
}

impl ProgramPoint {
    /// A whole-program lock's point, or a choice's before its mapping.
    pub fn new(lock: &str, profiled: bool) -> Self {
        ProgramPoint {
            lock: lock.into(),
            profiled,
            chosen: None,
            delay: None,
            speedup: None,
            parameter: None,
        }
    }

    /// How tables and figures name it: the lock, "(unprofiled)" for the
    /// point that measures the profile's cost, and a scan's value
    /// (`adaptive threads=4`).
    pub fn label(&self, any_profiled: bool) -> String {
        let mut out = self.lock.clone();
        if any_profiled && !self.profiled {
            out += " (unprofiled)";
        }
        if let Some(p) = &self.parameter {
            out += &format!(" {p}");
        }
        out
    }
}

/// A lock against glibc's mutex: the geometric mean of the rounds'
/// ratios of the metric, with its 95% interval.
#[derive(Debug, Clone, Copy, Serialize, schemars::JsonSchema)]
pub struct VsGlibc {
    /// lock / pthread.
    pub ratio: f64,
    /// Its 95% interval (Student's t over the rounds' log ratios), from 2
    /// rounds up.
    pub ci95: Option<(f64, f64)>,
    /// Rounds paired.
    pub rounds: usize,
}

/// One lock's runs and their statistics (over wall s, or the metric).
pub type ProgramResult = super::Measured<ProgramPoint, ProgramSample>;
