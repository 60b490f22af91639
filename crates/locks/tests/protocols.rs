//! Protocol facts of each lock that a benchmark result depends on, checked
//! through the lock's own counters.

use locks::raw::{FutexMutex, PthreadMutex, Seed};
use locks::{LockConfig, LockStats, RawLock};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
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
    let stats = cycles(&<Seed>::new(&LockConfig { spin: 1 }), 1000);
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
    let lock = <FutexMutex>::new(&LockConfig { spin: 1 });
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

/// Mutual exclusion with sleeping inside the critical section, so the slow
/// paths (futex wait and wake) run on every lock.
fn exclusive_under_sleep<L: RawLock<Node = ()>>(config: LockConfig) {
    let lock = L::new(&config);
    let counter = AtomicU64::new(0);
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                let mut stats = LockStats::default();
                for _ in 0..50 {
                    lock.with(&(), &mut stats, || {
                        let v = counter.load(Relaxed);
                        std::thread::sleep(Duration::from_micros(50));
                        counter.store(v + 1, Relaxed);
                    });
                }
            });
        }
    });
    assert_eq!(counter.load(Relaxed), 8 * 50);
}

#[test]
fn every_lock_excludes_with_sleeping_holders() {
    exclusive_under_sleep::<Seed>(LockConfig { spin: 1 });
    exclusive_under_sleep::<Seed>(LockConfig { spin: 1000 });
    exclusive_under_sleep::<FutexMutex>(LockConfig { spin: 1 });
    exclusive_under_sleep::<FutexMutex>(LockConfig { spin: 1000 });
    exclusive_under_sleep::<PthreadMutex>(LockConfig::default());
}
