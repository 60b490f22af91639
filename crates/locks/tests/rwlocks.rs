//! The reader-writer locks: readers share, writers exclude everyone, and
//! our futex lock sleeps and wakes as its protocol says.

use locks::raw::FutexRw;
use locks::{LockConfig, LockCounts, LockStats, RawLock, RawRwLock};
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// Only a lock that never lets the second reader in waits this long: a
/// guard against a hang, not a timing assertion.
const HANG: Duration = Duration::from_secs(60);

/// Two readers inside at once: the first stays inside until the second
/// has entered beside it.
fn readers_share<L: RawRwLock>() {
    let lock = Arc::new(L::new(&LockConfig::default()));
    let (in_tx, in_rx) = mpsc::channel();
    let (second_tx, second_rx) = mpsc::channel::<()>();
    let first = {
        let lock = lock.clone();
        std::thread::spawn(move || {
            let (node, mut stats) = (L::Node::default(), LockStats::default());
            lock.with_shared(&node, &mut stats, || {
                in_tx.send(()).unwrap();
                second_rx.recv_timeout(HANG)
            })
        })
    };
    in_rx.recv().unwrap();
    let (node, mut stats) = (L::Node::default(), LockStats::default());
    lock.with_shared(&node, &mut stats, || second_tx.send(()).unwrap());
    first.join().unwrap().expect("the second reader entered while the first held the lock");
}

/// Four threads, a quarter of their acquisitions writes: no reader ever
/// sees a writer inside, and no writer sees anyone else.
fn readers_and_writers_exclude<L: RawRwLock>() {
    let lock = Arc::new(L::new(&LockConfig::default()));
    let (readers, writers) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let (lock, readers, writers) = (lock.clone(), readers.clone(), writers.clone());
            std::thread::spawn(move || {
                let (node, mut stats) = (L::Node::default(), LockStats::default());
                let mut x = t.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                for _ in 0..20_000 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    if x % 4 == 0 {
                        lock.with(&node, &mut stats, || {
                            assert_eq!(writers.fetch_add(1, SeqCst), 0, "two writers inside");
                            assert_eq!(readers.load(SeqCst), 0, "a writer inside with readers");
                            writers.fetch_sub(1, SeqCst);
                        });
                    } else {
                        lock.with_shared(&node, &mut stats, || {
                            readers.fetch_add(1, SeqCst);
                            assert_eq!(writers.load(SeqCst), 0, "a reader inside with a writer");
                            readers.fetch_sub(1, SeqCst);
                        });
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

macro_rules! each_rwlock {
    ($($name:ident: $lock:ty,)*) => {$(
        mod $name {
            #[test]
            fn readers_share() {
                super::readers_share::<$lock>();
            }
            #[test]
            fn readers_and_writers_exclude() {
                super::readers_and_writers_exclude::<$lock>();
            }
        }
    )*};
}

each_rwlock! {
    futex_rw: locks::raw::FutexRw,
    pthread_rw: locks::raw::PthreadRw,
    pthread_rw_writer: locks::raw::PthreadRwWriter,
    std_rw: locks::raw::StdRw,
    parking_lot_rw: locks::raw::ParkingLotRw,
}

#[test]
fn futex_rw_uncontended_makes_no_syscall() {
    let lock = <FutexRw>::new(&LockConfig::default());
    let (node, mut stats) = ((), LockStats::default());
    for _ in 0..1000 {
        lock.with(&node, &mut stats, || ());
        lock.with_shared(&node, &mut stats, || ());
    }
    assert_eq!(stats.counts(), LockCounts::default());
    assert_eq!(lock.state_word(), Some(0));
}

#[test]
fn futex_rw_writer_sleeps_behind_a_reader_and_the_last_reader_wakes_it() {
    // Spin budget 1: a waiter announces itself and sleeps at once.
    let lock = Arc::new(<FutexRw>::new(&LockConfig { spin: 1, ..LockConfig::default() }));
    let mut stats = LockStats::default();
    lock.lock_shared(&(), &mut stats);
    let writer = {
        let lock = lock.clone();
        std::thread::spawn(move || {
            let mut stats = LockStats::default();
            lock.with(&(), &mut stats, || ());
            stats.counts()
        })
    };
    // The writer sets WAITERS (bit 30) before it sleeps.
    while lock.state_word().unwrap() & (1 << 30) == 0 {
        std::thread::yield_now();
    }
    // SAFETY: this thread took it shared above.
    unsafe { lock.unlock_shared(&(), &mut stats) };
    assert_eq!(stats.counts().wakes, 1, "the last reader out wakes the sleeping writer");
    let writer = writer.join().unwrap();
    assert!(writer.waits >= 1, "{writer:?}");
    assert_eq!(lock.state_word(), Some(0));
}
