//! Protocol facts of each lock that a benchmark result depends on, checked
//! through the lock's own counters.

use locks::raw::{Adaptive, FutexMutex, Seed};
use locks::{LockConfig, LockStats, RawLock, Spinners};
use std::time::Duration;

fn cycles<L: RawLock<Node = ()>>(lock: &L, n: u64) -> LockStats {
    let mut stats = LockStats::default();
    for _ in 0..n {
        lock.with(&(), &mut stats, || ());
    }
    stats
}

#[test]
fn seed_wakes_on_every_unlock_even_uncontended() {
    // The baseline's defining flaw; a "fixed" seed would invalidate the
    // comparison with the published tables.
    let stats = cycles(
        &<Seed>::new(&LockConfig {
            spin: 1,
            ..LockConfig::default()
        }),
        1000,
    );
    assert_eq!(stats.wakes, 1000);
    assert_eq!(stats.waits, 0);
    assert_eq!(stats.spins, 0);
}

#[test]
fn futex_mutex_uncontended_makes_no_syscall() {
    let stats = cycles(&<FutexMutex>::new(&LockConfig::default()), 1000);
    assert_eq!(stats, LockStats::default());
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
fn futex_mutex_announces_waiters_and_wakes_them() {
    // One thread holds the lock while another runs out of its spin budget
    // and sleeps: the word must go to 2 and the unlock must wake.
    let lock = <FutexMutex>::new(&LockConfig {
        spin: 1,
        ..LockConfig::default()
    });
    let mut holder = LockStats::default();
    std::thread::scope(|s| {
        lock.lock(&(), &mut holder);
        let waiter = s.spawn(|| {
            let mut stats = LockStats::default();
            lock.with(&(), &mut stats, || ());
            stats
        });
        while lock.word() != 2 {
            std::thread::sleep(Duration::from_millis(1));
        }
        // SAFETY: this thread took the lock above.
        unsafe { lock.unlock(&(), &mut holder) };
        let waited = waiter.join().unwrap();
        assert!(waited.waits >= 1, "{waited:?}");
    });
    assert_eq!(holder.wakes, 1);
    assert_eq!(lock.word(), 0);
}

/// Runs `threads` threads through `rounds` critical sections that sleep, so
/// waiters pile up, and returns the summed stats.
fn contended<L: RawLock<Node = ()>>(lock: &L, threads: usize, rounds: usize) -> LockStats {
    let total = std::sync::Mutex::new(LockStats::default());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut stats = LockStats::default();
                for _ in 0..rounds {
                    lock.with(&(), &mut stats, || std::thread::sleep(Duration::from_micros(50)));
                }
                let mut t = total.lock().unwrap();
                t.spins += stats.spins;
                t.waits += stats.waits;
                t.wakes += stats.wakes;
            });
        }
    });
    total.into_inner().unwrap()
}

#[test]
fn adaptive_without_spinners_never_spins() {
    let lock = <Adaptive>::new(&LockConfig {
        spinners: Spinners::None,
        ..LockConfig::default()
    });
    let stats = contended(&lock, 4, 50);
    assert_eq!(stats.spins, 0, "{stats:?}");
    assert!(stats.waits > 0, "{stats:?}");
}

#[test]
fn adaptive_spinners_spin_then_sleep_on_long_holds() {
    // 50 µs holds outlast any budget: spinners must give up and sleep.
    for policy in [Spinners::One, Spinners::Many] {
        let lock = <Adaptive>::new(&LockConfig {
            spinners: policy,
            ..LockConfig::default()
        });
        let stats = contended(&lock, 4, 50);
        assert!(stats.spins > 0 && stats.waits > 0, "{policy:?}: {stats:?}");
    }
}
