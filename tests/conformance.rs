//! Every lock in the registry, run through the real workload: mutual
//! exclusion with 8 threads, and with 8 worker processes for locks that
//! work across processes, on this (2-CPU) machine, with no hold and with
//! sleeping holds that force the slow paths; every worker must finish (no
//! lost wake-up: a watchdog fails the test, naming the lock, instead of
//! letting it hang); try-lock semantics where offered. A new registry entry
//! is covered without touching this file. A deliberately broken lock proves
//! the mutual-exclusion check can fail.

mod common;

use contend::family::lock::registry::{LockEntry, RunFn, LOCKS};
use contend::family::lock::spec::{Mode, Point};
use contend::family::lock::workload::{run, run_rw, RunContext};
use contend::model::lock::LockSample;
use contend::model::value::{SpinPolicy, Work, WorkMode};
use contend::session::resources::{Resources, DEFAULT_LOCK_DIR};
use locks::{Caps, LockConfig, LockStats, RawLock};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// A run that has not finished after this long lost a wake-up (the longest
/// legitimate run here is a 110 ms window plus the drain, which for FIFO
/// spinlocks on 2 CPUs can take a few scheduler slices).
const WATCHDOG: Duration = Duration::from_secs(60);

fn point(lock: &'static str, workers: u32, spin: Option<u32>, hold: Work) -> Point {
    Point {
        spin,
        hold,
        duration_ns: 100_000_000,
        warmup_ns: 10_000_000,
        ..Point::new(lock, Mode::Threads, workers)
    }
}

/// The resources a run of any lock needs (a lock file, a SysV set), and a
/// context pointing at them. Dropping the resources removes them.
fn context() -> (Resources, RunContext) {
    let mut resources = Resources::new();
    let ctx = RunContext {
        futex: None,
        lock_file: Some(resources.lock_file(std::path::Path::new(DEFAULT_LOCK_DIR)).unwrap()),
        sysv_set: Some(resources.sem_set().unwrap()),
        ..RunContext::default()
    };
    (resources, ctx)
}

/// Runs `p` with `run` on a helper thread and fails loudly if it does not
/// finish.
fn run_watched(entry: &'static LockEntry, run: RunFn, p: Point) -> LockSample {
    let (tx, rx) = mpsc::channel();
    let what = format!(
        "{} {} {:?} spin {:?} spinners {:?} read {:?} hold {}",
        entry.name, p.workers, p.mode, p.spin, p.spinners, p.read_pct, p.hold
    );
    std::thread::spawn(move || {
        // Drop the resources before reporting, so the test cannot end (and
        // the process exit) while they are still being removed.
        let result = {
            let (_resources, ctx) = context();
            run(&p, &ctx)
        };
        let _ = tx.send(result);
    });
    match rx.recv_timeout(WATCHDOG) {
        Ok(Ok(sample)) => sample,
        Ok(Err(e)) => panic!("{what}: {e:#}"),
        Err(_) => panic!("{what}: no progress for {WATCHDOG:?}: lost wake-up or deadlock"),
    }
}

fn available(entry: &LockEntry) -> bool {
    if entry.test_only {
        return false;
    }
    match (entry.available)() {
        Ok(()) => true,
        Err(why) => {
            common::skip(&format!("lock {}: {why}", entry.name));
            false
        }
    }
}

/// Runs `p` until a window sees a critical section, each run watched.
/// Bounded by work, not by the window: on a machine kept busy, a FIFO
/// lock's 100 ms window can pass with its next owner never scheduled (the
/// ticket lock did, with 8 threads on 2 busy CPUs), which is slow, not
/// broken. Only the watchdog fails a run for lack of progress; 20 windows
/// in a row without one fail the test.
fn run_until_progress(entry: &'static LockEntry, run: RunFn, p: Point) -> LockSample {
    for _ in 0..20 {
        let s = run_watched(entry, run, p.clone());
        if s.acquisitions > 0 {
            return s;
        }
    }
    panic!("{}: 20 windows in a row without a critical section", entry.name);
}

#[test]
fn every_exclusive_lock_excludes_with_8_threads() {
    let sleep = Work { mode: WorkMode::Sleep, ns: 20_000 };
    let mut checked = 0;
    for entry in LOCKS.iter().filter(|e| e.caps.exclusive && e.caps.threads && available(e)) {
        // Both ends of the spin range `contend tune` explores (1..100000).
        let spins: &[Option<u32>] =
            if entry.caps.spin { &[Some(1), Some(1000), Some(100_000)] } else { &[None] };
        let policies: &[Option<SpinPolicy>] = if entry.caps.spinners {
            &[Some(SpinPolicy::None), Some(SpinPolicy::One), Some(SpinPolicy::Many)]
        } else {
            &[None]
        };
        // Reader-writer locks: all writes, mixed, and read-mostly, so the
        // shared path and its wakes go through the watchdog too.
        let reads: &[Option<u32>] = if entry.caps.rw { &[Some(0), Some(50), Some(90)] } else { &[None] };
        for (&spin, &read_pct) in spins.iter().flat_map(|s| reads.iter().map(move |r| (s, r))) {
            for &spinners in policies {
                for hold in [Work::NONE, sleep] {
                    let p = Point { spinners, read_pct, ..point(entry.name, 8, spin, hold) };
                    let s = run_until_progress(entry, entry.run, p);
                    assert_eq!(s.workers.len(), 8);
                    assert!(s.acquisitions <= s.total_acquisitions);
                    assert_eq!(s.workers.iter().map(|w| w.acquisitions).sum::<u64>(), s.acquisitions);
                    assert_eq!(s.lock_counters.is_some(), entry.caps.counters, "{}", entry.name);
                    assert_eq!(s.rw.is_some(), read_pct.is_some(), "{}", entry.name);
                    if hold.ns > 0 {
                        let mean = s.mean_hold_ns.expect("hold was measured");
                        assert!(mean >= hold.ns as f64, "{}: mean hold {mean} < {}", entry.name, hold.ns);
                    }
                }
            }
        }
        checked += 1;
    }
    // Every lock that runs in threads, futex2 included (Linux 6.7+).
    assert!(checked >= 20, "only {checked} locks checked in threads");
}

#[test]
fn every_process_lock_excludes_with_8_processes() {
    let sleep = Work { mode: WorkMode::Sleep, ns: 20_000 };
    let mut checked = 0;
    for entry in LOCKS.iter().filter(|e| e.caps.exclusive && available(e)) {
        let Some(run) = entry.run_procs else { continue };
        for hold in [Work::NONE, sleep] {
            let p = Point {
                mode: Mode::Processes,
                spin: entry.caps.spin.then_some(100),
                ..point(entry.name, 8, None, hold)
            };
            let s = run_until_progress(entry, run, p);
            assert_eq!(s.workers.len(), 8);
            assert!(s.memory.worker_rss_max_kib.is_some_and(|kib| kib > 0), "{}", entry.name);
        }
        checked += 1;
    }
    assert!(checked >= 15, "only {checked} locks work across processes?");
}

#[test]
fn every_try_lock_behaves() {
    let (_resources, ctx) = context();
    let config = locks::LockConfig {
        lock_file: ctx.lock_file,
        sysv_set: ctx.sysv_set,
        ..locks::LockConfig::default()
    };
    let mut checked = 0;
    for entry in LOCKS.iter().filter(|e| available(e)) {
        if let Some(check) = entry.try_check {
            check(&config).unwrap_or_else(|e| panic!("{}: {e}", entry.name));
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} locks offer try-lock?");
}

#[test]
fn the_baseline_runs_alone() {
    let entry = LOCKS.iter().find(|e| !e.caps.exclusive).expect("noop is registered");
    let s = (entry.run)(&point(entry.name, 1, None, Work::NONE), &RunContext::default()).unwrap();
    assert_eq!(s.workers.len(), 1);
    assert!(s.acquisitions > 0);
}

/// A lock that lets two threads in at once: every other acquisition skips
/// the real lock. Its node remembers whether this acquisition took it.
struct Leaky {
    inner: locks::raw::FutexMutex,
    skip: AtomicBool,
}

// SAFETY: it is not a correct lock; that is the point. It claims to be
// exclusive so the runner checks it, and the test expects that check to fail.
unsafe impl RawLock for Leaky {
    type Node = Cell<bool>;
    const CAPS: Caps = <locks::raw::FutexMutex as RawLock>::CAPS;
    fn new(config: &LockConfig) -> Self {
        Leaky { inner: locks::raw::FutexMutex::new(config), skip: AtomicBool::new(false) }
    }
    fn lock(&self, took: &Cell<bool>, stats: &mut LockStats) {
        took.set(!self.skip.fetch_xor(true, Ordering::Relaxed));
        if took.get() {
            self.inner.lock(&(), stats);
        }
    }
    unsafe fn unlock(&self, took: &Cell<bool>, stats: &mut LockStats) {
        if took.get() {
            // SAFETY: this acquisition took the inner lock.
            unsafe { self.inner.unlock(&(), stats) }
        }
    }
}

/// A reader-writer lock whose readers ignore writers: its shared side
/// takes nothing, its exclusive side is futex-rw's.
struct LeakyRw(locks::raw::FutexRw);

// SAFETY: it is not a correct lock; that is the point (its readers do not
// exclude writers), and the test expects the readers' check to fail.
unsafe impl RawLock for LeakyRw {
    type Node = ();
    const CAPS: Caps = <locks::raw::FutexRw as RawLock>::CAPS;
    fn new(config: &LockConfig) -> Self {
        LeakyRw(locks::raw::FutexRw::new(config))
    }
    fn lock(&self, node: &(), stats: &mut LockStats) {
        self.0.lock(node, stats);
    }
    unsafe fn unlock(&self, node: &(), stats: &mut LockStats) {
        // SAFETY: the caller took the inner lock exclusively.
        unsafe { self.0.unlock(node, stats) }
    }
}

// SAFETY: deliberately broken, as above.
unsafe impl locks::RawRwLock for LeakyRw {
    fn lock_shared(&self, _node: &(), _stats: &mut LockStats) {}
    unsafe fn unlock_shared(&self, _node: &(), _stats: &mut LockStats) {}
}

#[test]
fn a_rwlock_that_lets_readers_in_beside_a_writer_is_caught() {
    let p = Point { read_pct: Some(50), ..point("leaky-rw", 4, Some(1), Work::busy(2000)) };
    let err = run_rw::<LeakyRw>(&p, &RunContext::default()).expect_err("the readers' check must catch it");
    let msg = format!("{err:#}");
    assert!(msg.contains("lock `leaky-rw` let readers in beside a writer"), "{msg}");
}

/// Runs the broken lock at `hold` on 4 threads: the witness must catch it
/// and the error name the lock. An overlap needs two workers on two CPUs
/// at once, and on a busy machine a 100 ms window can pass without one
/// (it did at hold 0 under two busy loops, after 3.5 million
/// acquisitions): the check gets up to 50 windows, a bound on work.
fn leaky_is_caught_and_named(hold: Work) {
    let p = point("leaky", 4, Some(1), hold);
    let err = (0..50)
        .find_map(|_| run::<Leaky>(&p, &RunContext::default()).err())
        .expect("the witness must catch it within 50 windows");
    let msg = format!("{err:#}");
    assert!(msg.contains("mutual exclusion violated by lock `leaky`"), "{msg}");
}

#[test]
fn a_broken_lock_is_caught_and_named() {
    leaky_is_caught_and_named(Work::busy(200));
}

/// At hold 0 with no idle the workers run their bare loop (no hold, idle
/// or fault code at all), which must keep the witness.
#[test]
fn a_broken_lock_is_caught_by_the_bare_loop_too() {
    leaky_is_caught_and_named(Work::NONE);
}
