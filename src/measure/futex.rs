//! Futex syscall counts over a window, as `strace -c` would report them
//! (calls, and errors such as EAGAIN from a FUTEX_WAIT that lost a race),
//! from the `syscalls:sys_enter_futex*` / `sys_exit_futex*` tracepoints.
//!
//! Needs tracefs (mounted here when root and not mounted yet) and the right
//! to open tracepoint perf events (root, CAP_PERFMON, or a low
//! kernel.perf_event_paranoid). When that is not possible the columns say
//! unavailable and the caller prints one warning with the reason.
//!
//! Counting perturbs what it counts: while any syscall tracepoint is
//! enabled, every syscall of every task takes the tracing slow path (15-22%
//! fewer critical sections per second for a futex lock at a 1 µs hold on
//! this kind of VM). So by default (`--count-futex separate`) the counters
//! are open only during one extra counting run per point, made after the
//! measured runs and kept out of their statistics; `inline` keeps them
//! open over the whole sweep as before, and says so.
//!
//! Counters are opened on the thread that starts the workers: every worker
//! started later inherits them, and a window's count is the difference of
//! two reads.

use locks::sys::perf::TracepointCounter;
use serde::Serialize;
use std::path::PathBuf;

/// The futex syscalls a lock here can issue: the classic multiplexer and the
/// futex2 wait/wake calls (Linux 6.7+), counted together where they exist.
const SYSCALLS: &[&str] = &["futex", "futex_wait", "futex_wake"];

/// Where the futex syscall counts come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CountFutex {
    /// One extra run per point with the tracepoints on, kept out of the
    /// rates: the measured runs run with no syscall tracing at all.
    Separate,
    /// No counting.
    Off,
    /// Counted during the measured runs (perturbing: an enabled syscall
    /// tracepoint slows every syscall of every task).
    Inline,
}

/// Futex syscalls issued during a window by the measuring thread and every
/// worker it started.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct FutexCounts {
    /// Syscalls entered.
    pub calls: u64,
    /// Syscalls that returned an error (ret < 0).
    pub errors: u64,
}

/// Where the syscall tracepoints are, found (or mounted) once per run.
#[derive(Debug, Clone)]
pub struct FutexTracepoints {
    /// (enter id, exit id) per available syscall.
    ids: Vec<(u64, u64)>,
}

/// Running counters; open them before the workers start so the workers
/// inherit them.
#[derive(Debug)]
pub struct FutexCounters {
    calls: Vec<TracepointCounter>,
    errors: Vec<TracepointCounter>,
}

impl FutexTracepoints {
    /// Finds the futex tracepoints, mounting tracefs if we are root and it is
    /// not mounted. The error says why counting is impossible.
    pub fn find() -> Result<Self, String> {
        let events = events_dir()?;
        let read_id =
            |path: PathBuf| -> Option<u64> { std::fs::read_to_string(path).ok()?.trim().parse().ok() };
        let ids: Vec<(u64, u64)> = SYSCALLS
            .iter()
            .filter_map(|name| {
                let dir = events.join("syscalls");
                Some((
                    read_id(dir.join(format!("sys_enter_{name}/id")))?,
                    read_id(dir.join(format!("sys_exit_{name}/id")))?,
                ))
            })
            .collect();
        if ids.is_empty() {
            return Err(format!(
                "{} has no syscalls:sys_enter_futex tracepoint (kernel built without CONFIG_FTRACE_SYSCALLS?)",
                events.display()
            ));
        }
        Ok(Self { ids })
    }

    /// Opens and starts counters on the calling thread, inherited by threads
    /// it spawns afterwards.
    pub fn open(&self) -> Result<FutexCounters, String> {
        let explain = |e: std::io::Error| {
            format!(
                "perf_event_open on the futex syscall tracepoints failed: {e} \
                 (needs root or CAP_PERFMON, or sysctl kernel.perf_event_paranoid=-1)"
            )
        };
        let mut counters = FutexCounters { calls: Vec::new(), errors: Vec::new() };
        for &(enter, exit) in &self.ids {
            counters.calls.push(TracepointCounter::open(enter, None).map_err(explain)?);
            counters.errors.push(TracepointCounter::open(exit, Some("ret < 0")).map_err(explain)?);
        }
        counters.calls.iter().chain(&counters.errors).try_for_each(|c| c.enable()).map_err(explain)?;
        Ok(counters)
    }
}

impl FutexCounters {
    /// The counts so far, over this thread and every thread it started.
    pub fn read(&self) -> std::io::Result<FutexCounts> {
        let sum = |cs: &[TracepointCounter]| -> std::io::Result<u64> { cs.iter().map(|c| c.read()).sum() };
        Ok(FutexCounts { calls: sum(&self.calls)?, errors: sum(&self.errors)? })
    }
}

impl std::ops::Sub for FutexCounts {
    type Output = FutexCounts;
    fn sub(self, earlier: FutexCounts) -> FutexCounts {
        FutexCounts {
            calls: self.calls.saturating_sub(earlier.calls),
            errors: self.errors.saturating_sub(earlier.errors),
        }
    }
}

fn events_dir() -> Result<PathBuf, String> {
    let root = crate::measure::tracefs::root()?;
    if root.join("events/syscalls").is_dir() {
        Ok(root.join("events"))
    } else {
        Err(format!("{} has no syscall events", root.display()))
    }
}
