//! `futex`: Drepper's three-state mutex with a spin budget.
//!
//! | word | meaning |
//! |------|---------|
//! | 0 | unlocked |
//! | 1 | locked, no waiters |
//! | 2 | locked, waiters possible |
//!
//! Origin: Ulrich Drepper, "Futexes Are Tricky" (2004/2011), mutex 3, the
//! protocol glibc's default mutex still uses. Lock: poll the word up to
//! `spin` times, trying `0 -> 1` whenever it reads 0; then announce a waiter
//! by exchanging in 2 and sleep on 2 until the exchange returns 0. Unlock:
//! exchange in 0 and, only if the old value was 2, wake one waiter (the
//! paper decrements then stores; see `mutex3::release` for why we exchange),
//! so an uncontended lock/unlock is two atomic read-modify-writes and no
//! syscall.
//!
//! Known failure mode: a thread that slept takes the lock in state 2, so its
//! unlock wakes someone even when nobody waits any more (one spurious wake
//! per contended episode); and the unlocker pays the full FUTEX_WAKE cost
//! while a spinning newcomer can barge past the woken thread, which is the
//! convoy the spinning-vs-sleeping studies measure.

use super::mutex3::{self, UNLOCKED};
use crate::primitive::{spin_loop, AtomicU32, Ordering};
use crate::sys::{DefaultFutex, Futex};
use crate::{Caps, LockConfig, LockStats, RawLock, TryLock};
use std::marker::PhantomData;

/// Drepper's mutex 3 with a user-space spin budget; see the module docs.
pub struct FutexMutex<F: Futex = DefaultFutex> {
    word: AtomicU32,
    spin: u32,
    futex: PhantomData<F>,
}

impl<F: Futex> FutexMutex<F> {
    /// The raw lock word, for diagnostics and models.
    pub fn word(&self) -> u32 {
        self.word.load(Ordering::Relaxed)
    }

    /// Tries `0 -> 1` once.
    #[inline]
    pub fn try_lock(&self) -> bool {
        mutex3::try_acquire(&self.word)
    }

    #[cold]
    #[link_section = "contend_measured"] // crate docs: Placement
    fn lock_contended(&self, stats: &mut LockStats) {
        // Spin: poll with plain loads (test-and-test-and-set) so waiters do
        // not steal the cache line from the owner, and try the CAS only when
        // the word reads unlocked. The first attempt was the fast path's.
        for _ in 1..self.spin {
            stats.add_spins(1);
            spin_loop();
            if self.word.load(Ordering::Relaxed) == UNLOCKED && self.try_lock() {
                return;
            }
        }
        mutex3::sleep_until_acquired::<F>(&self.word, stats);
    }
}

// SAFETY: a thread returns from `lock` only after its CAS or swap observed
// UNLOCKED (Acquire), and the word returns to UNLOCKED only in `unlock`
// (Release exchange).
unsafe impl<F: Futex> RawLock for FutexMutex<F> {
    type Node = ();
    const CAPS: Caps = Caps::OWN_WORD_SPIN;

    fn new(config: &LockConfig) -> Self {
        Self { word: AtomicU32::new(UNLOCKED), spin: config.spin.max(1), futex: PhantomData }
    }

    fn state_word(&self) -> Option<u32> {
        Some(self.word.load(Ordering::Relaxed))
    }

    #[inline]
    fn lock(&self, _node: &(), stats: &mut LockStats) {
        if !self.try_lock() {
            self.lock_contended(stats);
        }
    }

    #[inline]
    unsafe fn unlock(&self, _node: &(), stats: &mut LockStats) {
        mutex3::release::<F>(&self.word, stats);
    }
}

// SAFETY: `try_lock` is the fast path of `lock`: a CAS 0 -> 1.
unsafe impl<F: Futex> TryLock for FutexMutex<F> {
    #[inline]
    fn try_lock(&self, _node: &(), _stats: &mut LockStats) -> bool {
        FutexMutex::try_lock(self)
    }
}

/// The same lock over process-shared futex operations, for worker processes.
#[cfg(not(loom))]
pub type SharedFutexMutex = FutexMutex<crate::sys::futex::SharedFutex>;

// SAFETY: the word is plain data and the futex operations are the shared
// ones, keyed on the page rather than the address space.
#[cfg(not(loom))]
unsafe impl crate::ProcessShared for SharedFutexMutex {}
