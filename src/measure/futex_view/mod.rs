//! The futex view: every futex call of a process tree, from the kernel's
//! syscall tracepoints (sys_enter/sys_exit of futex, futex_wait,
//! futex_wake and futex_waitv), sampled on every CPU into one buffer per
//! CPU (`locks::sys::perf_ring`) for the calling thread and every task it
//! starts afterwards, each sample stamped with CLOCK_MONOTONIC.
//!
//! A drainer thread empties the buffers every [`DRAIN_EVERY`] and applies
//! the samples in time order (a call that blocks may return on another
//! CPU than it entered on, so one CPU's buffer alone is not enough): it
//! applies only what is older than the start of the pass, by
//! [`SETTLE`], and keeps the rest for the next pass, when every CPU's
//! samples up to then have been read. It also notes, while the processes
//! live, their memory maps and their threads' names, which name the words
//! afterwards (`family::program::futex_words`).
//!
//! Needs tracefs and the right to open tracepoint events (root,
//! CAP_PERFMON or a low perf_event_paranoid). While syscall tracepoints
//! are enabled every syscall takes the kernel's tracing path, and each
//! futex call of the program writes two samples: the view runs only in
//! the profile's counting execution, never in a timed one.

pub mod account;
pub mod ops;

use account::Account;
use locks::sys::clock::monotonic_ns;
use locks::sys::perf_ring::{Record, Stamped, Tracepoint, TracepointSampler};
use ops::{offset, Point, Points};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Each CPU's buffer: 4 MiB, about 45,000 stamped samples of the futex
/// tracepoints (90 bytes each).
const PAGES: usize = 1024;

/// How often the buffers are drained: with [`PAGES`], 45,000 samples per
/// CPU in 5 ms, over 4 million futex calls a second per CPU (two samples
/// each); the tests' raw_futex.c makes 2.5 million a second on 2 CPUs
/// untraced (`perf stat -e syscalls:sys_enter_futex`), and loses none.
const DRAIN_EVERY: Duration = Duration::from_millis(5);

/// How much older than the pass's start a sample must be to be applied:
/// a sample is written as its tracepoint fires, so this only covers one
/// still being written on another CPU when the pass began.
const SETTLE: u64 = 1_000_000;

/// How often a process's memory map is read again (a library loaded
/// later holds words too).
const MAPS_EVERY: u64 = 200_000_000;

/// One mapping of a process's memory, from /proc/PID/maps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    /// First address.
    pub start: u64,
    /// One past the last.
    pub end: u64,
    /// Offset in the file.
    pub offset: u64,
    /// The file, `[heap]`, `[stack]`, or empty (anonymous).
    pub path: String,
}

/// What the view saw, for naming and tables.
#[derive(Debug, Default)]
pub struct Seen {
    /// Every word's counts.
    pub account: Account,
    /// Each process's memory map, as last read from /proc.
    pub maps: HashMap<u32, Vec<Mapping>>,
    /// Each process's mappings as the kernel recorded them when made
    /// (from its exec on): what places a word of a process that exited
    /// before its map could be read.
    pub mapped: HashMap<u32, Vec<Mapping>>,
    /// Each thread's name, as first read.
    pub comms: HashMap<u32, String>,
    /// Each process's name, as first read.
    pub processes: HashMap<u32, String>,
    /// Samples the kernel could not record.
    pub lost: u64,
}

struct State {
    sampler: TracepointSampler,
    points: Points,
    /// Read, not yet applied: (time, pid, tid, what).
    pending: Vec<(u64, u32, u32, ops::Said)>,
    seen: Seen,
    /// When each process's map was last read.
    mapped_at: HashMap<u32, u64>,
}

/// The view in progress: the sampler, drained by a thread of its own.
pub struct FutexView {
    shared: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    drainer: Option<std::thread::JoinHandle<()>>,
}

/// The tracepoints, by id, with the fields the view reads.
fn points(root: &std::path::Path) -> Result<(Vec<Tracepoint>, Points), String> {
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

/// Why the tracepoints could not be opened, with what fixes it.
fn refused(e: std::io::Error, whose: &str) -> String {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").unwrap_or_default();
    format!(
        "sampling the futex syscall tracepoints of {whose} failed: {e} (needs root or CAP_PERFMON, or \
         sysctl kernel.perf_event_paranoid=-1, now {}{})",
        paranoid.trim(),
        if whose.starts_with("process") { "; and the right to ptrace the process" } else { "" }
    )
}

/// The online CPUs.
fn online() -> Result<Vec<i32>, String> {
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    cpu_list(&online).ok_or_else(|| format!("cannot read the online CPUs ({online:?})"))
}

/// The threads of process `pid` now (None: no such process).
pub fn threads(pid: u32) -> Option<Vec<i32>> {
    let dir = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut tids: Vec<i32> =
        dir.flatten().filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok())).collect();
    tids.sort_unstable();
    (!tids.is_empty()).then_some(tids)
}

impl FutexView {
    /// Starts the view for the calling thread and every task it starts
    /// from now on. The error says why it cannot.
    pub fn open() -> Result<Self, String> {
        let root = crate::measure::tracefs::root()?;
        let (tps, points) = points(&root)?;
        let sampler = TracepointSampler::open_all(&tps, Stamped::Yes, true, PAGES, 0, online()?)
            .map_err(|e| refused(e, "the program"))?;
        Self::start(sampler, points, Seen::default())
    }

    /// Starts the view of process `pid`, running: every thread it has now
    /// and every task they start. Its threads are listed until a listing
    /// finds none not yet followed (one started meanwhile by a followed
    /// thread is followed twice; the drain drops the twin samples).
    pub fn attach(pid: u32) -> Result<Self, String> {
        let root = crate::measure::tracefs::root()?;
        let (tps, points) = points(&root)?;
        let gone = || format!("no process {pid} (it is not running, or not visible here)");
        let first = *threads(pid).ok_or_else(gone)?.first().expect("a listed process has a thread");
        let whose = format!("process {pid}");
        let mut sampler = TracepointSampler::open_all(&tps, Stamped::Yes, false, PAGES, first, online()?)
            .map_err(
                |e| if e.raw_os_error() == Some(nix::libc::ESRCH) { gone() } else { refused(e, &whose) },
            )?;
        let mut followed = vec![first];
        loop {
            let now = threads(pid).ok_or_else(gone)?;
            let new: Vec<i32> = now.into_iter().filter(|t| !followed.contains(t)).collect();
            if new.is_empty() {
                break;
            }
            for tid in new {
                match sampler.add_thread(tid) {
                    Ok(()) => {}
                    // It exited between the listing and now.
                    Err(e) if e.raw_os_error() == Some(nix::libc::ESRCH) => {}
                    Err(e) => return Err(refused(e, &whose)),
                }
                followed.push(tid);
            }
        }
        let mut seen = Seen::default();
        if let Some(maps) = read_maps(pid) {
            seen.maps.insert(pid, maps);
        }
        seen.processes.insert(pid, comm(pid, None));
        for tid in followed {
            seen.comms.insert(tid as u32, comm(pid, Some(tid as u32)));
        }
        Self::start(sampler, points, seen)
    }

    /// Starts the drainer of `sampler`.
    fn start(sampler: TracepointSampler, points: Points, seen: Seen) -> Result<Self, String> {
        let state = State { sampler, points, pending: Vec::new(), seen, mapped_at: HashMap::new() };
        let shared = Arc::new(Mutex::new(state));
        let stop = Arc::new(AtomicBool::new(false));
        let drainer = {
            let (shared, stop) = (Arc::clone(&shared), Arc::clone(&stop));
            std::thread::Builder::new()
                .name("contend-futex-view".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::sleep(DRAIN_EVERY);
                        drain(&shared, false);
                    }
                })
                .map_err(|e| format!("starting the thread that reads the futex samples: {e}"))?
        };
        Ok(Self { shared, stop, drainer: Some(drainer) })
    }

    /// Stops the drainer thread (once; finish and drop both call it).
    fn stop_draining(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(d) = self.drainer.take() {
            let _ = d.join();
        }
    }

    /// Ends the view and returns what it saw.
    pub fn finish(mut self) -> Seen {
        self.stop_draining();
        drain(&self.shared, true);
        let mut guard = self.shared.lock().unwrap_or_else(|p| p.into_inner());
        let lost = guard.sampler.lost;
        let mut seen = std::mem::take(&mut guard.seen);
        seen.account.finish(monotonic_ns());
        seen.lost = lost;
        seen
    }
}

impl Drop for FutexView {
    fn drop(&mut self) {
        self.stop_draining();
    }
}

/// Reads the samples written since the last pass and applies, in time
/// order, those old enough (all of them when `last`).
fn drain(shared: &Mutex<State>, last: bool) {
    let mut guard = shared.lock().unwrap_or_else(|p| p.into_inner());
    let state = &mut *guard;
    let start = monotonic_ns();
    let (points, pending, seen) = (&state.points, &mut state.pending, &mut state.seen);
    let (mut pids, mut tids) = (Vec::new(), Vec::new());
    state.sampler.drain(|record| match record {
        Record::Sample(s) => {
            if let Some(said) = points.read(s.raw) {
                pending.push((s.time, s.pid, s.tid, said));
                if !pids.contains(&s.pid) {
                    pids.push(s.pid);
                }
                if !seen.comms.contains_key(&s.tid) && !tids.contains(&(s.pid, s.tid)) {
                    tids.push((s.pid, s.tid));
                }
            }
        }
        Record::Map { pid, start, len, offset, path } => {
            let path = if path == "//anon" { String::new() } else { path.to_string() };
            seen.mapped.entry(pid).or_default().push(Mapping { start, end: start + len, offset, path });
        }
        Record::Comm { pid, tid, comm } => {
            seen.comms.insert(tid, comm.to_string());
            if pid == tid {
                seen.processes.insert(pid, comm.to_string());
            }
        }
    });
    // Read at once, before the samples wait to be applied: a thread or a
    // process may exit soon after its last futex call, its name and map
    // with it.
    for (pid, tid) in tids {
        state.seen.comms.insert(tid, comm(pid, Some(tid)));
    }
    for pid in pids {
        state.seen.processes.entry(pid).or_insert_with(|| comm(pid, None));
        let at = state.mapped_at.entry(pid).or_insert(0);
        if start.saturating_sub(*at) >= MAPS_EVERY {
            *at = start;
            if let Some(maps) = read_maps(pid) {
                state.seen.maps.insert(pid, maps);
            }
        }
    }
    pending.sort_by_key(|e| e.0);
    // A thread followed twice (attach) writes each sample twice, at once.
    pending.dedup();
    let ready = if last { pending.len() } else { pending.partition_point(|e| e.0 + SETTLE < start) };
    for (time, pid, tid, said) in pending.drain(..ready) {
        state.seen.account.apply(pid, tid, time, said);
    }
}

/// The name (comm) of process `pid`, or of its thread `tid`; empty when
/// it is gone.
pub fn comm(pid: u32, tid: Option<u32>) -> String {
    let path = match tid {
        Some(tid) => format!("/proc/{pid}/task/{tid}/comm"),
        None => format!("/proc/{pid}/comm"),
    };
    std::fs::read_to_string(path).unwrap_or_default().trim().to_string()
}

/// `pid`'s memory map (None: it is gone).
pub fn read_maps(pid: u32) -> Option<Vec<Mapping>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
    Some(text.lines().filter_map(parse_map_line).collect())
}

/// One line of /proc/PID/maps: `start-end perms offset dev inode path`.
fn parse_map_line(line: &str) -> Option<Mapping> {
    let mut f = line.splitn(6, ' ');
    let (range, _perms, offset, _dev, _inode) = (f.next()?, f.next()?, f.next()?, f.next()?, f.next()?);
    let (start, end) = range.split_once('-')?;
    Some(Mapping {
        start: u64::from_str_radix(start, 16).ok()?,
        end: u64::from_str_radix(end, 16).ok()?,
        offset: u64::from_str_radix(offset, 16).ok()?,
        path: f.next().unwrap_or("").trim().to_string(),
    })
}

/// The CPUs of a sysfs CPU list (`0-3,6`).
pub fn cpu_list(text: &str) -> Option<Vec<i32>> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        cpus.extend(lo.parse::<i32>().ok()?..=hi.parse::<i32>().ok()?);
    }
    (!cpus.is_empty()).then_some(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_read_as_sysfs_writes_them() {
        assert_eq!(cpu_list("0-1\n"), Some(vec![0, 1]));
        assert_eq!(cpu_list("0,2-3,7"), Some(vec![0, 2, 3, 7]));
        assert_eq!(cpu_list(""), None);
        assert_eq!(cpu_list("x"), None);
    }

    #[test]
    fn map_lines_read_with_and_without_a_path() {
        let m = parse_map_line("55d0a000-55d0b000 rw-p 00003000 fd:01 123   /usr/bin/prog").unwrap();
        assert_eq!(
            (m.start, m.end, m.offset, m.path.as_str()),
            (0x55d0a000, 0x55d0b000, 0x3000, "/usr/bin/prog")
        );
        let anon = parse_map_line("7f00-8f00 rw-p 00000000 00:00 0 ").unwrap();
        assert_eq!(anon.path, "");
        assert_eq!(parse_map_line("7f00-8f00 rw-p 00000000 00:00 0    [heap]").unwrap().path, "[heap]");
    }
}
