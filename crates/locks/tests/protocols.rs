//! Protocol facts of each lock that a benchmark result depends on, checked
//! through the lock's own counters.

use locks::raw::{Adaptive, FutexMutex, Seed};
use locks::{LockConfig, LockCounts, LockStats, RawLock, Spinners};
use std::time::Duration;

fn cycles<L: RawLock>(lock: &L, n: u64) -> LockCounts {
    let (node, mut stats) = (L::Node::default(), LockStats::default());
    for _ in 0..n {
        lock.with(&node, &mut stats, || ());
    }
    stats.counts()
}

#[test]
fn seed_wakes_on_every_unlock_even_uncontended() {
    // The baseline's defining flaw; a "fixed" seed would invalidate the
    // comparison with the published tables.
    let stats = cycles(&<Seed>::new(&LockConfig { spin: 1, ..LockConfig::default() }), 1000);
    assert_eq!(stats.wakes, 1000);
    assert_eq!(stats.waits, 0);
    assert_eq!(stats.spins, 0);
}

#[test]
fn futex_mutex_uncontended_makes_no_syscall() {
    let stats = cycles(&<FutexMutex>::new(&LockConfig::default()), 1000);
    assert_eq!(stats, LockCounts::default());
}

#[test]
fn futex_mutex_try_lock_fails_while_held() {
    let lock = <FutexMutex>::new(&LockConfig::default());
    let mut stats = LockStats::default();
    lock.with(&(), &mut stats, || assert!(!lock.try_lock()));
    assert!(lock.try_lock());
    assert_eq!(lock.word(), 1);
}

#[test]
fn a_critical_section_that_panics_releases_the_lock() {
    // `with` promises it: a worker whose critical section panics must not
    // leave the others blocked. Checked on a lock whose unlock reads the
    // node and one whose unlock does not.
    fn panics_inside<L: RawLock>(lock: &L) {
        let (node, mut stats) = (L::Node::default(), LockStats::default());
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            lock.with(&node, &mut stats, || panic!("inside the critical section"))
        }));
        assert!(unwound.is_err(), "the panic must reach the caller");
    }
    let futex = <FutexMutex>::new(&LockConfig::default());
    panics_inside(&futex);
    assert_eq!(futex.word(), 0);
    assert!(futex.try_lock());
    let adaptive = <Adaptive>::new(&LockConfig::default());
    panics_inside(&adaptive);
    assert_eq!(adaptive.word(), 0);
    // And the lock works after it.
    cycles(&adaptive, 10);
    assert_eq!(adaptive.word(), 0);
}

#[test]
fn futex_mutex_announces_waiters_and_wakes_them() {
    // One thread holds the lock while another runs out of its spin budget
    // and sleeps: the word must go to 2 and the unlock must wake.
    let lock = <FutexMutex>::new(&LockConfig { spin: 1, ..LockConfig::default() });
    let mut holder = LockStats::default();
    std::thread::scope(|s| {
        lock.lock(&(), &mut holder);
        let waiter = s.spawn(|| {
            let mut stats = LockStats::default();
            lock.with(&(), &mut stats, || ());
            stats.counts()
        });
        while lock.word() != 2 {
            std::thread::sleep(Duration::from_millis(1));
        }
        // SAFETY: this thread took the lock above.
        unsafe { lock.unlock(&(), &mut holder) };
        let waited = waiter.join().unwrap();
        assert!(waited.waits >= 1, "{waited:?}");
    });
    assert_eq!(holder.counts().wakes, 1);
    assert_eq!(lock.word(), 0);
}

/// Runs `threads` threads through `rounds` critical sections that sleep, so
/// waiters pile up, and returns the summed stats.
fn contended<L: RawLock>(lock: &L, threads: usize, rounds: usize) -> LockCounts {
    let total = std::sync::Mutex::new(LockCounts::default());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let (node, mut stats) = (L::Node::default(), LockStats::default());
                for _ in 0..rounds {
                    lock.with(&node, &mut stats, || std::thread::sleep(Duration::from_micros(50)));
                }
                let (mut t, mine) = (total.lock().unwrap(), stats.counts());
                t.spins += mine.spins;
                t.waits += mine.waits;
                t.wakes += mine.wakes;
            });
        }
    });
    total.into_inner().unwrap()
}

#[test]
fn adaptive_uncontended_is_one_cas_each_way() {
    // The fast paths leave the word exactly 0: no tick, no mark, no wake.
    let lock = <Adaptive>::new(&LockConfig::default());
    let stats = cycles(&lock, 1000);
    assert_eq!((stats.spins, stats.waits, stats.wakes), (0, 0, 0), "{stats:?}");
    assert_eq!(lock.word(), 0);
}

#[test]
fn adaptive_without_spinners_never_spins() {
    let lock = <Adaptive>::new(&LockConfig { spinners: Spinners::None, ..LockConfig::default() });
    let stats = contended(&lock, 4, 50);
    assert_eq!(stats.spins, 0, "{stats:?}");
    assert!(stats.waits > 0, "{stats:?}");
}

#[test]
fn adaptive_spinners_spin_then_sleep_on_long_holds() {
    // 50 µs holds outlast any budget: spinners must give up and sleep.
    for policy in [Spinners::One, Spinners::Many] {
        let lock = <Adaptive>::new(&LockConfig { spinners: policy, ..LockConfig::default() });
        let stats = contended(&lock, 4, 50);
        assert!(stats.spins > 0 && stats.waits > 0, "{policy:?}: {stats:?}");
    }
}

/// Every one of `threads` threads, looping on the lock with empty critical
/// sections, completes `rounds` of them before a generous deadline: none
/// is starved by the others re-locking at once. (Whether the threads
/// overlap is up to the scheduler, so spins are not asserted.)
fn nobody_starves<L: RawLock>(lock: &L, threads: usize, rounds: u64) {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
    let (done, stop) = (AtomicUsize::new(0), AtomicBool::new(false));
    let start = std::sync::Barrier::new(threads);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let (node, mut stats, mut mine) = (L::Node::default(), LockStats::default(), 0u64);
                start.wait();
                while !stop.load(Relaxed) {
                    lock.with(&node, &mut stats, || ());
                    mine += 1;
                    if mine == rounds && done.fetch_add(1, Relaxed) + 1 == threads {
                        stop.store(true, Relaxed);
                    }
                    if std::time::Instant::now() > deadline {
                        stop.store(true, Relaxed);
                    }
                }
            });
        }
    });
    assert_eq!(done.into_inner(), threads, "some thread starved for 20 s");
}

/// The adaptive word less its tick counter (bits 5-8), which unlocks
/// leave behind: 0 once nobody holds, waits, or is marked as coming.
fn settled(lock: &Adaptive) -> u32 {
    lock.word() & !(0xf << 5)
}

#[test]
fn adaptive_gives_the_spinner_its_turn() {
    // Two threads re-locking at once: the spinner only gets in through its
    // turn (or a lucky barge), and both must finish their rounds.
    let lock = <Adaptive>::new(&LockConfig::default());
    nobody_starves(&lock, 2, 1_000_000);
    assert_eq!(lock.word() & 0b11, 0, "left locked: {:#x}", lock.word());
}

#[test]
fn adaptive_rotates_sleepers_in() {
    // More threads than the one spinner slot: the others sleep, and only
    // rotation (a quantum ending) or a free lock nobody spins for brings
    // them back.
    for policy in [Spinners::None, Spinners::One, Spinners::Many] {
        let lock = <Adaptive>::new(&LockConfig { spinners: policy, ..LockConfig::default() });
        nobody_starves(&lock, 8, 20_000);
        // No waiter is left counted, and no mark is left set but the ticks.
        assert_eq!(settled(&lock), 0, "{policy:?}: {:#x}", lock.word());
    }
}

/// Runs `rounds` of: 4 threads lock, hold `hold` (busy), stay out for
/// `idle` (busy), for 20 ms; then stop, and every thread must get out of
/// `lock` (the last unlocks must wake whoever sleeps). A stuck stop cannot
/// be joined, so the watchdog ends the process.
fn stops_leave_nobody_asleep(lock: &Adaptive, rounds: usize, hold: Duration, idle: Duration) {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
    let busy = |d: Duration| {
        let t = std::time::Instant::now();
        while t.elapsed() < d {}
    };
    for round in 0..rounds {
        let (stop, finished) = (AtomicBool::new(false), AtomicUsize::new(0));
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    let (node, mut stats) = (Default::default(), LockStats::default());
                    while !stop.load(Relaxed) {
                        lock.with(&node, &mut stats, || busy(hold));
                        busy(idle);
                    }
                    finished.fetch_add(1, Relaxed);
                });
            }
            std::thread::sleep(Duration::from_millis(20));
            stop.store(true, Relaxed);
            let since = std::time::Instant::now();
            while finished.load(Relaxed) < 4 {
                if since.elapsed() > Duration::from_secs(10) {
                    eprintln!(
                        "round {round}: {} of 4 threads stuck in lock, word {:#x}",
                        4 - finished.load(Relaxed),
                        lock.word()
                    );
                    std::process::abort();
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        });
    }
    assert_eq!(settled(lock), 0, "{:#x}", lock.word());
}

#[test]
fn adaptive_leaves_nobody_asleep_when_threads_stop() {
    // Threads that hold for 10 µs rotate through the quantum; when they
    // stop, the last unlocks must still wake whoever sleeps. A version
    // whose unlocks trusted a stale ROTATING mark (its woken sleeper had
    // taken the lock instead) left sleepers behind in about one stop in
    // ten.
    let lock = <Adaptive>::new(&LockConfig::default());
    stops_leave_nobody_asleep(&lock, 100, Duration::from_micros(10), Duration::ZERO);
}

#[test]
fn adaptive_with_many_spinners_leaves_nobody_asleep_when_threads_stop() {
    // Many spinners at a 90% duty cycle (900 ns in, 100 ns out): a turn
    // whose giver's quantum was over set ROTATING over a WAKING still in
    // flight with one sleeper counted, who could claim only one of the two
    // marks; the other stayed set with nobody entitled to it, so no unlock
    // woke the threads that slept after it. Stops hung about once in 80
    // (`contend lock --spinners many --threads 4 --period 1000ns --duty
    // 90%`, lock word 0x10084: one sleeper, WAKING, unlocked).
    let lock = <Adaptive>::new(&LockConfig { spinners: Spinners::Many, ..LockConfig::default() });
    stops_leave_nobody_asleep(&lock, 300, Duration::from_nanos(900), Duration::from_nanos(100));
}

/// An arena the system cannot map is refused with the memory limits
/// named, not a crash: a slot count whose arena exceeds any address space.
#[cfg(not(loom))]
#[test]
fn an_arena_too_large_to_map_names_the_memory_limits() {
    type Arena = locks::sys::shm::Arena<FutexMutex, u64, [u64; 8]>;
    let huge = 1usize << 52;
    let Err(err) = Arena::private(&LockConfig::default(), 0, huge, Default::default) else {
        panic!("an arena of 2^52 slots was mapped");
    };
    assert!(err.contains("mmap of") && err.contains("ulimit -v") && err.contains("RLIMIT_AS"), "{err}");
}
