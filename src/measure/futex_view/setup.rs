//! Opening the futex view's samplers: the futex tracepoints (their ids
//! and the fields the view reads, from tracefs), the threads' switches
//! for the holders' states, the user stacks, and the error that says
//! what to change when the kernel refuses.

use super::holders::KernelSymbols;
use super::ops::{offset, Point, Points};
use super::procfs::online;
use super::stacks::StackSampler;
use super::{Follow, Seen, SCHED_PAGES};
use locks::sys::clock::monotonic_ns;
use locks::sys::perf_ring::{Stamped, Tracepoint, TracepointSampler, Watch};

/// The threads' switches: sched_switch's sleeping switch-outs with their
/// kernel stacks, and every switch record.
pub(super) struct Sched {
    pub(super) sampler: TracepointSampler,
    /// The sched_switch tracepoint's id and where prev_state sits.
    pub(super) id: u16,
    pub(super) prev_state: usize,
    pub(super) symbols: KernelSymbols,
}

/// The tracepoints, by id, with the fields the view reads.
pub(super) fn points(root: &std::path::Path) -> Result<(Vec<Tracepoint>, Points), String> {
    let mut tps = Vec::new();
    let mut points = Points::default();
    let names = [
        "sys_enter_futex",
        "sys_exit_futex",
        "sys_enter_futex_wait",
        "sys_exit_futex_wait",
        "sys_enter_futex_wake",
        "sys_exit_futex_wake",
        "sys_enter_futex_waitv",
        "sys_exit_futex_waitv",
    ];
    for name in names {
        let dir = root.join("events/syscalls").join(name);
        let (Ok(id), Ok(format)) =
            (std::fs::read_to_string(dir.join("id")), std::fs::read_to_string(dir.join("format")))
        else {
            // futex(2) is required; futex2's calls are newer (Linux 5.16, 6.7).
            if name.ends_with("_futex") {
                return Err(format!("{} is missing (no syscall tracepoints in this kernel?)", dir.display()));
            }
            continue;
        };
        let id: u16 =
            id.trim().parse().map_err(|_| format!("{}/id is not a tracepoint id", dir.display()))?;
        let field =
            |f: &str| offset(&format, f).ok_or_else(|| format!("{}/format has no {f}", dir.display()));
        let point = match name {
            "sys_enter_futex" => {
                Point::EnterFutex { uaddr: field("uaddr")?, op: field("op")?, uaddr2: field("uaddr2")? }
            }
            "sys_enter_futex_wait" => Point::EnterWait { uaddr: field("uaddr")? },
            "sys_enter_futex_wake" => Point::EnterWake { uaddr: field("uaddr")? },
            "sys_enter_futex_waitv" => Point::EnterWaitV,
            _ => Point::Exit { ret: field("ret")? },
        };
        points.0.insert(id, point);
        tps.push(Tracepoint { id: id as u64, filter: String::new() });
    }
    Ok((tps, points))
}

/// Opens the switches of thread `pid` (0: the calling thread) and the
/// tasks it starts, on `cpus`.
pub(super) fn sched(root: &std::path::Path, pid: i32, cpus: Vec<i32>) -> Result<Sched, String> {
    let dir = root.join("events/sched/sched_switch");
    let (Ok(id), Ok(format)) =
        (std::fs::read_to_string(dir.join("id")), std::fs::read_to_string(dir.join("format")))
    else {
        return Err(format!("{} is missing", dir.display()));
    };
    let id: u16 = id.trim().parse().map_err(|_| format!("{}/id is not a tracepoint id", dir.display()))?;
    let prev_state =
        offset(&format, "prev_state").ok_or_else(|| format!("{}/format has no prev_state", dir.display()))?;
    // Only switch-outs into sleep need their stack (a preempted thread's
    // state has no bits in the low byte).
    let point = Tracepoint { id: id as u64, filter: "prev_state & 255".into() };
    let watch = Watch { tasks: false, switches: true, kernel_stacks: true, user_stacks: 0 };
    let sampler = TracepointSampler::open_all(&[point], Stamped::Yes, watch, SCHED_PAGES, pid, cpus)
        .map_err(|e| format!("sampling sched_switch failed: {e}"))?;
    Ok(Sched { sampler, id, prev_state, symbols: KernelSymbols::read() })
}

/// The switches of thread `pid` when `holders` and they can be opened;
/// else why not, in `seen`.
pub(super) fn switches(
    root: &std::path::Path,
    pid: i32,
    holders: bool,
    seen: &mut Seen,
) -> Result<Option<Sched>, String> {
    if !holders {
        seen.no_split = Some("turned off (--no-holder-state)".into());
        return Ok(None);
    }
    Ok(sched(root, pid, online()?).map_err(|e| seen.no_split = Some(e)).ok())
}

/// The stacks of thread `pid`'s futex calls (and its tasks') when
/// `follow` asks for them and they can be opened; else why not, in `seen`.
pub(super) fn stacks(
    tps: &[Tracepoint],
    points: &Points,
    pid: i32,
    follow: Follow,
    seen: &mut Seen,
) -> Option<StackSampler> {
    if follow.stacks_per_s == 0 {
        seen.no_stacks = Some("turned off (--futex-stacks 0)".into());
        return None;
    }
    let entries: Vec<Tracepoint> = tps
        .iter()
        .filter(|t| {
            matches!(
                points.0.get(&(t.id as u16)),
                Some(Point::EnterFutex { .. } | Point::EnterWait { .. } | Point::EnterWake { .. })
            )
        })
        .cloned()
        .collect();
    let opened = online()
        .and_then(|cpus| {
            StackSampler::open(&entries, pid, cpus, follow.stacks_per_s, monotonic_ns())
                .map_err(|e| format!("sampling the futex calls' user stacks failed: {e}"))
        })
        .map_err(|e| seen.no_stacks = Some(e));
    opened.ok()
}

/// Why the tracepoints could not be opened, with what fixes it.
pub(super) fn refused(e: std::io::Error, whose: &str) -> String {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").unwrap_or_default();
    format!(
        "sampling the futex syscall tracepoints of {whose} failed: {e} (needs root or CAP_PERFMON, or \
         sysctl kernel.perf_event_paranoid=-1, now {}{})",
        paranoid.trim(),
        if whose.starts_with("process") { "; and the right to ptrace the process" } else { "" }
    )
}
