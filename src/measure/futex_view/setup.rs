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
use locks::sys::task_filter::{routed_len, Hooks, Route, SwitchFields, TaskFilter, WaitvFields};

/// The threads' switches: sched_switch's sleeping switch-outs with their
/// kernel stacks, and every switch record (per-thread events); or, routed
/// through the in-kernel filter, sched_switch's records of the followed
/// threads, and the sleeping ones again with their kernel stacks.
pub(super) struct Sched {
    pub(super) sampler: TracepointSampler,
    /// Routed: the sleeping switch-outs, and where next_pid sits.
    pub(super) routed: Option<(TracepointSampler, usize)>,
    /// The sched_switch tracepoint's id and where prev_state sits.
    pub(super) id: u16,
    pub(super) prev_state: usize,
    pub(super) symbols: KernelSymbols,
}

/// The tracepoints, by id, with the fields the view reads, and the
/// routes of their records through the in-kernel filter (the entries'
/// to the stacks too).
pub(super) fn points(root: &std::path::Path) -> Result<(Vec<Tracepoint>, Points, Vec<Route>), String> {
    let mut tps = Vec::new();
    let mut routes = Vec::new();
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
        let len = record_len(&format);
        let point = match name {
            "sys_enter_futex" => {
                Point::EnterFutex { uaddr: field("uaddr")?, op: field("op")?, uaddr2: field("uaddr2")? }
            }
            "sys_enter_futex_wait" => Point::EnterWait { uaddr: field("uaddr")? },
            "sys_enter_futex_wake" => Point::EnterWake { uaddr: field("uaddr")? },
            "sys_enter_futex_waitv" => Point::EnterWaitV { nr: field("nr_futexes")?, array: routed_len(len) },
            _ => Point::Exit { ret: field("ret")? },
        };
        let both = !matches!(point, Point::Exit { .. });
        let waitv = match point {
            Point::EnterWaitV { nr, .. } => {
                let at = |o: usize| {
                    i16::try_from(o).map_err(|_| format!("{}/format: offset out of range", dir.display()))
                };
                Some(WaitvFields { waiters: at(field("waiters")?)?, nr: at(nr)? })
            }
            _ => None,
        };
        routes.push(Route { id: id as u64, len, both, waitv });
        points.0.insert(id, point);
        tps.push(Tracepoint { id: id as u64, filter: String::new() });
    }
    Ok((tps, points, routes))
}

/// Where a tracepoint's record ends: its last field's offset and size,
/// from its tracefs format.
fn record_len(format: &str) -> usize {
    let number = |line: &str, key: &str| {
        let at = line.find(key)? + key.len();
        line[at..].split(';').next()?.trim().parse::<usize>().ok()
    };
    format.lines().filter_map(|l| Some(number(l, "offset:")? + number(l, "size:")?)).max().unwrap_or(0)
}

/// sched_switch's id and format.
fn switch_format(root: &std::path::Path) -> Result<(u16, String, usize), String> {
    let dir = root.join("events/sched/sched_switch");
    let (Ok(id), Ok(format)) =
        (std::fs::read_to_string(dir.join("id")), std::fs::read_to_string(dir.join("format")))
    else {
        return Err(format!("{} is missing", dir.display()));
    };
    let id: u16 = id.trim().parse().map_err(|_| format!("{}/id is not a tracepoint id", dir.display()))?;
    let prev_state =
        offset(&format, "prev_state").ok_or_else(|| format!("{}/format has no prev_state", dir.display()))?;
    Ok((id, format, prev_state))
}

/// Opens the switches of thread `pid` (0: the calling thread) and the
/// tasks it starts, on `cpus`.
pub(super) fn sched(root: &std::path::Path, pid: i32, cpus: Vec<i32>) -> Result<Sched, String> {
    let (id, _, prev_state) = switch_format(root)?;
    // Only switch-outs into sleep need their stack (a preempted thread's
    // state has no bits in the low byte).
    let point = Tracepoint { id: id as u64, filter: "prev_state & 255".into() };
    let watch = Watch { tasks: false, switches: true, kernel_stacks: true, user_stacks: 0 };
    let sampler = TracepointSampler::open_all(&[point], Stamped::Yes, watch, SCHED_PAGES, pid, cpus)
        .map_err(|e| format!("sampling sched_switch failed: {e}"))?;
    Ok(Sched { sampler, routed: None, id, prev_state, symbols: KernelSymbols::read() })
}

/// The switches of the threads `filter` follows, routed through it.
fn sched_routed(root: &std::path::Path, filter: &mut TaskFilter) -> Result<Sched, String> {
    let (id, format, prev_state) = switch_format(root)?;
    let next_pid = offset(&format, "next_pid").ok_or("sched_switch's format has no next_pid")?;
    let field =
        |at: usize| i16::try_from(at).map_err(|_| "sched_switch's format: offset out of range".to_string());
    let at = SwitchFields { prev_state: field(prev_state)?, next_pid: field(next_pid)? };
    let cpus = online()?;
    let open = |watch| {
        TracepointSampler::open_output(Stamped::Yes, watch, SCHED_PAGES, &cpus)
            .map_err(|e| format!("opening the BPF output events of the switches: {e}"))
    };
    let switches = open(Watch::default())?;
    let sleeps = open(Watch { kernel_stacks: true, ..Watch::default() })?;
    filter
        .route_switches(id as u64, record_len(&format), at, &switches, &sleeps)
        .map_err(|e| format!("routing sched_switch: {e}"))?;
    Ok(Sched {
        sampler: switches,
        routed: Some((sleeps, next_pid)),
        id,
        prev_state,
        symbols: KernelSymbols::read(),
    })
}

/// The switches of the followed threads when `holders` and they can be
/// opened (else why not, in `seen`): routed through `filter` when there is
/// one, else per-thread events on thread `pid` and the tasks it starts.
pub(super) fn switches(
    root: &std::path::Path,
    pid: i32,
    holders: bool,
    filter: Option<&mut TaskFilter>,
    seen: &mut Seen,
) -> Result<Option<Sched>, String> {
    if !holders {
        seen.no_split = Some("turned off (--no-holder-state)".into());
        return Ok(None);
    }
    let opened = match filter {
        Some(filter) => sched_routed(root, filter),
        None => sched(root, pid, online()?),
    };
    Ok(opened.map_err(|e| seen.no_split = Some(e)).ok())
}

/// The in-kernel filter of the followed threads (`task_filter`), started
/// with none followed; else why it cannot be, and the view falls back to
/// per-thread events.
pub(super) fn task_filter(root: &std::path::Path) -> Result<TaskFilter, String> {
    let read = |name: &str| {
        let dir = root.join("events/sched").join(name);
        let id = std::fs::read_to_string(dir.join("id")).ok().and_then(|s| s.trim().parse::<u64>().ok());
        let format = std::fs::read_to_string(dir.join("format")).unwrap_or_default();
        id.map(|id| (id, format)).ok_or_else(|| format!("{} is missing", dir.display()))
    };
    let (fork, format) = read("sched_process_fork")?;
    let child_pid =
        offset(&format, "child_pid").ok_or("sched_process_fork's format has no child_pid".to_string())?;
    let (exit, _) = read("sched_process_exit")?;
    TaskFilter::open(Hooks { fork, child_pid, exit }, &online()?).map_err(|e| e.to_string())
}

/// The futex calls (`routes`) of thread `tid` and of every task it
/// starts, through the in-kernel filter: the calls' sampler with what
/// `watch` asks, the stacks' (when `follow` asks for them; else why not,
/// in `seen`), and the filter, which [`TaskFilter::follow`] tells of more
/// threads. The error says why the filter cannot be used.
pub(super) fn filtered(
    root: &std::path::Path,
    routes: &[Route],
    watch: Watch,
    tid: u32,
    follow: Follow,
    seen: &mut Seen,
) -> Result<(TracepointSampler, Option<StackSampler>, TaskFilter), String> {
    let cpus = online()?;
    let mut filter = task_filter(root)?;
    filter.follow(tid).map_err(|e| format!("following thread {tid}: {e}"))?;
    let sampler = TracepointSampler::open_output(Stamped::Yes, watch, super::PAGES, &cpus)
        .map_err(|e| format!("opening the BPF output events: {e}"))?;
    let stacks = match follow.stacks_per_s {
        0 => None,
        per_s => Some(
            StackSampler::open_output(&cpus, per_s, monotonic_ns())
                .map_err(|e| format!("opening the BPF output events of the stacks: {e}"))?,
        ),
    };
    filter.route(routes, &sampler, stacks.as_ref().map(StackSampler::sampler)).map_err(|e| e.to_string())?;
    if stacks.is_none() {
        seen.no_stacks = Some("turned off (--futex-stacks 0)".into());
    }
    Ok((sampler, stacks, filter))
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
        .filter(|t| points.0.get(&(t.id as u16)).is_some_and(|p| !matches!(p, Point::Exit { .. })))
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
