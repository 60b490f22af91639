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
//! With the switches of the same threads (a second set of buffers,
//! [`SCHED_PAGES`]), it also follows
//! what each thread did, so a wait's time splits by what its waker (for a
//! lock, the holder) was doing meanwhile (`holders`); where those cannot
//! be opened the view goes on without the split, and says so.
//!
//! With a budget of stacks a second, a third set of buffers has the
//! futex calls' entries again, each with the caller's user stack, unwound
//! at each drain (`stacks`, `unwind`): who waited and who woke, by code.
//!
//! The futex calls and their stacks come through an in-kernel filter
//! (`locks::sys::task_filter`: BPF programs on the tracepoints send the
//! followed threads' records to output events, one per CPU): per-thread
//! events would cost each followed thread at every one of its context
//! switches. Where the filter cannot be loaded (no CAP_BPF), they are
//! per-thread events inherited by every task the first thread starts,
//! and the view says so (`Seen::per_thread`). The switches come the
//! same way: a router on sched_switch sends each switch a followed thread
//! leaves or comes in by, and, again, those into sleep to a sampler with
//! the kernel's stacks; without the filter they are the kernel's switch
//! records and sched_switch's sleeping switch-outs, per thread.
//!
//! Needs tracefs and the right to open tracepoint events (root,
//! CAP_PERFMON or a low perf_event_paranoid). While syscall tracepoints
//! are enabled every syscall takes the kernel's tracing path, and each
//! futex call of the program writes two samples: the view runs only in
//! the profile's counting execution, never in a timed one.

pub mod account;
pub mod holders;
mod observe;
pub mod ops;
pub mod procfs;
mod setup;
pub mod stacks;
mod switches;
pub mod unwind;
pub mod windows;

use account::Account;
use locks::sys::clock::monotonic_ns;
use locks::sys::perf_ring::{Record, Stamped, TracepointSampler, Watch};
use locks::sys::task_filter::TaskFilter;
use ops::{Call, Points, Said};
use procfs::online;
pub use procfs::{comm, cpu_list, read_maps, threads, Mapping};
use setup::{points, refused, switches, Sched};
use stacks::{FutexStackSampling, StackSampler};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switches::{follow_switches, routed_switch};
use unwind::Stacks;
use windows::{Coverage, Windows};

/// Each CPU's buffer: 4 MiB, about 45,000 stamped samples of the futex
/// tracepoints (90 bytes each).
const PAGES: usize = 1024;

/// Each CPU's buffer of switches: 1 MiB, about 4,000 switch-outs with
/// their kernel stacks and switch records (about 250 bytes a switch) per
/// drain, 800,000 switches a second per CPU.
const SCHED_PAGES: usize = 256;

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
    /// Why the holders' states were not followed (None: they were).
    pub no_split: Option<String>,
    /// How much of the time they were followed, when routed through the
    /// filter (`windows`: the sampling rule); None: all of it, per thread.
    pub holder_coverage: Option<Coverage>,
    /// The user stacks unwound (`Account` numbers them).
    pub stacks: Stacks,
    /// What the stack sampler did (None: it did not run).
    pub stack_stats: Option<FutexStackSampling>,
    /// Why the stacks were not sampled (None: they were).
    pub no_stacks: Option<String>,
    /// Why the futex calls were sampled by per-thread events rather than
    /// through the in-kernel filter (None: through the filter).
    pub per_thread: Option<String>,
}

/// What the view follows besides the futex calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Follow {
    /// The threads' context switches, to split each wait by what its
    /// holder did.
    pub holders: bool,
    /// User stacks of the futex calls, at most this many a second (0:
    /// none).
    pub stacks_per_s: u64,
}

/// What a record says, to be applied in time order.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Event {
    /// A futex call's entry or return.
    Futex(ops::Said),
    /// The thread came to a CPU or left it.
    Switch { out: bool, preempted: bool },
    /// The thread is about to sleep, for this reason.
    Sleeps(u32),
    /// The thread's futex call (the one in flight without a stack, else
    /// the next to enter) has this user stack.
    Stack(u32),
    /// The thread was seen in /proc so, as a window opened.
    Observed(holders::Observed),
}

struct State {
    /// The followed threads, when the samplers are filtered by them.
    filter: Option<TaskFilter>,
    /// When the routed switches are followed.
    windows: Option<Windows>,
    sampler: TracepointSampler,
    sched: Option<Sched>,
    stacks: Option<StackSampler>,
    points: Points,
    /// Read, not yet applied: (time, pid, tid, what).
    pending: Vec<(u64, u32, u32, Event)>,
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

impl FutexView {
    /// Starts the view for the calling thread and every task it starts
    /// from now on, with what `follow` asks. The error says why it cannot.
    pub fn open(follow: Follow) -> Result<Self, String> {
        let root = crate::measure::tracefs::root()?;
        let (tps, points, routes) = points(&root)?;
        let mut seen = Seen::default();
        let tasks = Watch { tasks: true, ..Watch::default() };
        let me = locks::sys::tid::current();
        let (sampler, stacks, mut filter) =
            match setup::filtered(&root, &routes, tasks, me, follow, &mut seen) {
                Ok((sampler, stacks, filter)) => (sampler, stacks, Some(filter)),
                Err(why) => {
                    seen.per_thread = Some(why);
                    let sampler = TracepointSampler::open_all(&tps, Stamped::Yes, tasks, PAGES, 0, online()?)
                        .map_err(|e| refused(e, "the program"))?;
                    (sampler, setup::stacks(&tps, &points, 0, follow, &mut seen), None)
                }
            };
        let sched = switches(&root, 0, follow.holders, filter.as_mut(), &mut seen)?;
        Self::start(filter, sampler, sched, stacks, points, seen)
    }

    /// Starts the view of process `pid`, running: every thread it has now
    /// and every task they start. Its threads are listed until a listing
    /// finds none not yet followed (one started meanwhile by a followed
    /// thread is followed twice by per-thread events; the drain drops the
    /// twin samples). With what `follow` asks.
    pub fn attach(pid: u32, follow: Follow) -> Result<Self, String> {
        let root = crate::measure::tracefs::root()?;
        let (tps, points, routes) = points(&root)?;
        let gone = || format!("no process {pid} (it is not running, or not visible here)");
        let first = *threads(pid).ok_or_else(gone)?.first().expect("a listed process has a thread");
        let whose = format!("process {pid}");
        let fail = |e: std::io::Error| {
            if e.raw_os_error() == Some(nix::libc::ESRCH) {
                gone()
            } else {
                refused(e, &whose)
            }
        };
        let mut seen = Seen::default();
        let (mut sampler, mut stacks, mut filter) =
            match setup::filtered(&root, &routes, Watch::default(), first as u32, follow, &mut seen) {
                Ok((sampler, stacks, filter)) => (sampler, stacks, Some(filter)),
                Err(why) => {
                    seen.per_thread = Some(why);
                    let sampler = TracepointSampler::open_all(
                        &tps,
                        Stamped::Yes,
                        Watch::default(),
                        PAGES,
                        first,
                        online()?,
                    )
                    .map_err(fail)?;
                    (sampler, setup::stacks(&tps, &points, first, follow, &mut seen), None)
                }
            };
        let mut sched = switches(&root, first, follow.holders, filter.as_mut(), &mut seen)?;
        let mut followed = vec![first];
        loop {
            let now = threads(pid).ok_or_else(gone)?;
            let new: Vec<i32> = now.into_iter().filter(|t| !followed.contains(t)).collect();
            if new.is_empty() {
                break;
            }
            for tid in new {
                let also = match sched.as_mut() {
                    Some(s) if s.routed.is_none() => s.sampler.add_thread(tid),
                    _ => Ok(()),
                };
                let sampled = match &filter {
                    Some(f) => f.follow(tid as u32),
                    None => {
                        let stacked = stacks.as_mut().map_or(Ok(()), |s| s.add_thread(tid));
                        sampler.add_thread(tid).and(stacked)
                    }
                };
                match sampled.and(also) {
                    Ok(()) => {}
                    // It exited between the listing and now.
                    Err(e) if e.raw_os_error() == Some(nix::libc::ESRCH) => {}
                    Err(e) => return Err(refused(e, &whose)),
                }
                followed.push(tid);
            }
        }
        if let Some(maps) = read_maps(pid) {
            seen.maps.insert(pid, maps);
        }
        seen.processes.insert(pid, comm(pid, None));
        for tid in followed {
            seen.comms.insert(tid as u32, comm(pid, Some(tid as u32)));
        }
        Self::start(filter, sampler, sched, stacks, points, seen)
    }

    /// Starts the drainer of `sampler` (and `sched`, `stacks`).
    fn start(
        filter: Option<TaskFilter>,
        sampler: TracepointSampler,
        sched: Option<Sched>,
        stacks: Option<StackSampler>,
        points: Points,
        mut seen: Seen,
    ) -> Result<Self, String> {
        // Followed from the start, so that every wait is split, even one
        // that ends before the first switch is read.
        seen.account.timeline.seen = sched.is_some();
        let routed = sched.as_ref().is_some_and(|s| s.routed.is_some()) && filter.is_some();
        let now = monotonic_ns();
        // An attached process's threads were running before: their states
        // now, as at every window's opening.
        let pending = if sched.is_some() { observe::states(&mut seen, now) } else { Vec::new() };
        let state = State {
            windows: routed.then(|| Windows::new(now)),
            filter,
            sampler,
            sched,
            stacks,
            points,
            pending,
            seen,
            mapped_at: HashMap::new(),
        };
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
        let lost = guard.sampler.lost
            + guard.sched.as_ref().map_or(0, |s| s.sampler.lost + s.routed.as_ref().map_or(0, |r| r.0.lost));
        let now = monotonic_ns();
        let stacked = guard.stacks.as_mut().map(|s| (s.finish(now), std::mem::take(&mut s.unwinding.stacks)));
        let coverage = guard.windows.as_ref().map(|w| w.coverage(now));
        let mut seen = std::mem::take(&mut guard.seen);
        seen.holder_coverage = coverage;
        seen.account.finish(now);
        seen.lost = lost;
        if let Some((stats, stacks)) = stacked {
            seen.stack_stats = Some(stats);
            seen.stacks = stacks;
        }
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
    // The stacks first, unwound last: every mapping made before one of
    // them was sampled is then in the calls' buffers, read in between.
    let taken = state.stacks.as_mut().map_or_else(Vec::new, |stacks| {
        stacks.take(start, |s| {
            let call = points.read(s.raw);
            matches!(call, Some(Said::Enter(Call::Wait { .. } | Call::Wake { .. } | Call::WaitV { .. })))
                .then_some(())
        })
    });
    let (mut pids, mut tids, mut execs) = (Vec::new(), Vec::new(), Vec::new());
    let mut switched = 0;
    state.sampler.drain(|record| match record {
        Record::Sample(s) => {
            if let Some(said) = points.read(s.raw) {
                pending.push((s.time, s.pid, s.tid, Event::Futex(said)));
                if !pids.contains(&s.pid) {
                    pids.push(s.pid);
                }
                if !seen.comms.contains_key(&s.tid) && !tids.contains(&(s.pid, s.tid)) {
                    tids.push((s.pid, s.tid));
                }
            }
        }
        Record::Map { pid, start, len, offset, path, executable } => {
            let path = if path == "//anon" { String::new() } else { path.to_string() };
            let m = Mapping { start, end: start + len, offset, path, executable };
            seen.mapped.entry(pid).or_default().push(m);
        }
        Record::Comm { pid, tid, comm, exec } => {
            // A new image: the mappings recorded before are gone with the
            // old one (the new image's are recorded after this).
            if exec {
                execs.push(pid);
                seen.mapped.remove(&pid);
            }
            seen.comms.insert(tid, comm.to_string());
            if pid == tid {
                seen.processes.insert(pid, comm.to_string());
            }
        }
        Record::Switch { .. } => {}
    });
    if let Some(sched) = &mut state.sched {
        let timeline = &mut seen.account.timeline;
        let (id, prev_state) = (sched.id.to_ne_bytes(), sched.prev_state);
        let symbols = &sched.symbols;
        // A sched_switch sample of a thread going to sleep: why, from its
        // kernel stack.
        let mut sleeps = |s: &locks::sys::perf_ring::Sample<'_>| {
            let state = s.raw.get(prev_state..prev_state + 8);
            let asleep = s.raw.get(0..2) == Some(&id[..]) && state.is_some_and(|b| b[0] != 0);
            (asleep && symbols.known()).then(|| {
                let frames = s.stack.iter().filter_map(|&ip| symbols.name(ip));
                (s.time, s.pid, s.tid, Event::Sleeps(timeline.number(&holders::reason(frames))))
            })
        };
        match &mut sched.routed {
            None => sched.sampler.drain(|record| match record {
                Record::Switch { pid, tid, time, out, preempted } => {
                    pending.push((time, pid, tid, Event::Switch { out, preempted }))
                }
                Record::Sample(s) => pending.extend(sleeps(&s)),
                _ => {}
            }),
            Some((asleep, next_pid)) => {
                // The sleeps first: a switch-out stamped the same ns as its
                // sleep stays after it in the (stable) sort.
                asleep.drain(|record| {
                    if let Record::Sample(s) = record {
                        pending.extend(sleeps(&s))
                    }
                });
                sched.sampler.drain(|record| {
                    if let Record::Sample(s) = record {
                        switched += 1;
                        pending.extend(routed_switch(&s, id, prev_state, *next_pid));
                    }
                });
            }
        }
    }
    if let Some(stacks) = &mut state.stacks {
        for pid in execs {
            stacks.unwinding.forget(pid);
        }
        stacks.unwind(monotonic_ns(), taken, &state.seen.mapped, |t, stack| {
            if let Some(n) = stack {
                pending.push((t.time, t.pid, t.tid, Event::Stack(n)));
            }
        });
    }
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
    let account = &mut state.seen.account;
    for (time, pid, tid, event) in pending.drain(..ready) {
        match event {
            Event::Futex(said) => account.apply(pid, tid, time, said),
            Event::Switch { out, preempted } => account.switch(tid, time, out, preempted),
            Event::Sleeps(n) => account.timeline.sleeps_in(tid, n),
            Event::Stack(n) => account.stacked(tid, n),
            Event::Observed(o) => account.observed(tid, time, o),
        }
    }
    if !last {
        follow_switches(state, switched);
    }
}
