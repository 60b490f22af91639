//! `futex-rw`: a reader-count lock on one futex word, contend's own.
//!
//! | word bits | meaning |
//! |------|---------|
//! | 0..=29 | readers inside |
//! | 30 (WAITERS) | someone sleeps on the word |
//! | 31 (WRITER) | a writer is inside |
//!
//! A reader enters whenever no writer is inside (one CAS adding 1); a
//! writer enters when the word holds neither readers nor a writer (a CAS
//! setting WRITER). Either spins up to the budget polling the word, then
//! sets WAITERS and sleeps on the word. A writer's unlock clears the word
//! and, if WAITERS was set, wakes every sleeper; the last reader out does
//! the same. Every sleeper retries, and any that still cannot enter sets
//! WAITERS again before sleeping.
//!
//! Origin: the simplest futex reader-writer lock, the shape of the
//! counting locks in the futex literature (Drepper's "Futexes Are Tricky"
//! builds its primitives the same way: a word, a waiters flag, wake when
//! the flag says so). Written for contend as the reference the library
//! locks are compared against.
//!
//! Known failure modes: readers never wait for waiting writers, so a
//! steady stream of readers starves a writer for as long as it lasts
//! (`--read 99 --latency-every 1` shows the writer's maximum wait); and
//! every release with sleepers wakes all of them, so they stampede.

use crate::primitive::{spin_loop, AtomicU32, Ordering};
use crate::sys::{DefaultFutex, Futex, WAKE_ALL};
use crate::{Caps, LockConfig, LockStats, RawLock, RawRwLock, TryLock};
use std::marker::PhantomData;

const WRITER: u32 = 1 << 31;
const WAITERS: u32 = 1 << 30;
const READERS: u32 = WAITERS - 1;

/// A reader-count lock on one futex word; see the module docs.
pub struct FutexRw<F: Futex = DefaultFutex> {
    word: AtomicU32,
    spin: u32,
    futex: PhantomData<F>,
}

impl<F: Futex> FutexRw<F> {
    /// Waits until `free` holds for the word, then moves it to
    /// `take(word)`: spinning up to the budget, then sleeping.
    #[inline]
    fn acquire(&self, stats: &mut LockStats, free: impl Fn(u32) -> bool, take: impl Fn(u32) -> u32) {
        let mut spun = 1;
        loop {
            let s = self.word.load(Ordering::Relaxed);
            if free(s) {
                // A failed CAS here lost to another thread that entered or
                // left; the lock may still be free, so look again at once.
                if self.word.compare_exchange_weak(s, take(s), Ordering::Acquire, Ordering::Relaxed).is_ok() {
                    return;
                }
                continue;
            }
            if spun < self.spin {
                spun += 1;
                stats.add_spins(1);
                spin_loop();
                continue;
            }
            // Announce the sleeper before sleeping, on the word as it will
            // be: whoever clears the word next sees WAITERS and wakes us.
            if s & WAITERS == 0
                && self.word.compare_exchange(s, s | WAITERS, Ordering::Relaxed, Ordering::Relaxed).is_err()
            {
                continue;
            }
            stats.add_wait();
            F::wait(&self.word, s | WAITERS);
        }
    }

    #[inline]
    fn wake_all(&self, stats: &mut LockStats) {
        stats.add_wake();
        F::wake(&self.word, WAKE_ALL);
    }
}

// SAFETY: a writer enters only by a CAS from a word with no readers and no
// writer (Acquire), and the word regains that state only by its swap to 0
// (Release) or by the last reader's decrement (Release); readers enter only
// by a CAS from a word without WRITER.
unsafe impl<F: Futex> RawLock for FutexRw<F> {
    type Node = ();
    const CAPS: Caps =
        Caps { spin: true, try_lock: true, counters: true, rw: true, max_workers: READERS, ..Caps::PLAIN };

    fn new(config: &LockConfig) -> Self {
        Self { word: AtomicU32::new(0), spin: config.spin.max(1), futex: PhantomData }
    }

    fn state_word(&self) -> Option<u32> {
        Some(self.word.load(Ordering::Relaxed))
    }

    #[inline]
    fn lock(&self, _node: &(), stats: &mut LockStats) {
        self.acquire(stats, |s| s & (WRITER | READERS) == 0, |s| s | WRITER);
    }

    #[inline]
    unsafe fn unlock(&self, _node: &(), stats: &mut LockStats) {
        // Nobody else changes the word while a writer is inside, except to
        // set WAITERS, which the swap takes with it.
        if self.word.swap(0, Ordering::Release) & WAITERS != 0 {
            self.wake_all(stats);
        }
    }
}

// SAFETY: see the RawLock impl: readers enter only while WRITER is clear,
// and a writer only while the reader count is 0.
unsafe impl<F: Futex> RawRwLock for FutexRw<F> {
    #[inline]
    fn lock_shared(&self, _node: &(), stats: &mut LockStats) {
        self.acquire(stats, |s| s & WRITER == 0, |s| s + 1);
    }

    #[inline]
    unsafe fn unlock_shared(&self, _node: &(), stats: &mut LockStats) {
        let left = self.word.fetch_sub(1, Ordering::Release) - 1;
        // The last reader out, with sleepers and no writer: clear the flag
        // and wake them. If the CAS fails, a reader came in (its unlock
        // will do this) or a writer did (its unlock wakes everyone).
        if left == WAITERS
            && self.word.compare_exchange(WAITERS, 0, Ordering::Relaxed, Ordering::Relaxed).is_ok()
        {
            self.wake_all(stats);
        }
    }
}

// SAFETY: a successful try is the write lock's CAS.
unsafe impl<F: Futex> TryLock for FutexRw<F> {
    #[inline]
    fn try_lock(&self, _node: &(), _stats: &mut LockStats) -> bool {
        let s = self.word.load(Ordering::Relaxed);
        s & (WRITER | READERS) == 0
            && self.word.compare_exchange(s, s | WRITER, Ordering::Acquire, Ordering::Relaxed).is_ok()
    }
}
