//! `seed`: the lock of futex-scalability.c, reproduced exactly.
//!
//! | word | meaning |
//! |------|---------|
//! | 1 (`AVAILABLE`) | unlocked |
//! | 0 (`BLOCKED`)   | locked (waiters may or may not exist) |
//!
//! Origin: Gautham R. Shenoy's futex-scalability.c (2021), the program behind
//! the published "CAS retries before FUTEX_WAIT" tables. Lock: try the CAS
//! `AVAILABLE -> BLOCKED` up to `spin` times back to back, then
//! `FUTEX_WAIT_PRIVATE(BLOCKED)`, then start again with a fresh budget.
//! Unlock: CAS `BLOCKED -> AVAILABLE` and, if that succeeded, always
//! `FUTEX_WAKE(1)`.
//!
//! Known failure mode (kept on purpose, it is the baseline): the word cannot
//! say whether anyone sleeps, so every unlock pays a FUTEX_WAKE syscall even
//! when uncontended, and the CAS retries hammer the cache line with no pause.

use crate::primitive::{AtomicU32, Ordering};
use crate::sys::{DefaultFutex, Futex};
use crate::{Caps, LockConfig, LockStats, RawLock, TryLock};
use std::marker::PhantomData;

const BLOCKED: u32 = 0;
const AVAILABLE: u32 = 1;

/// futex-scalability.c's mutex; see the module docs.
pub struct Seed<F: Futex = DefaultFutex> {
    word: AtomicU32,
    spin: u32,
    futex: PhantomData<F>,
}

impl<F: Futex> Seed<F> {
    /// The raw lock word, for diagnostics and models.
    pub fn word(&self) -> u32 {
        self.word.load(Ordering::Relaxed)
    }
}

// SAFETY: only the thread whose CAS moved the word AVAILABLE -> BLOCKED
// returns from `lock`, and the word goes back to AVAILABLE only in `unlock`;
// the CASes are Acquire (lock) and Release (unlock).
unsafe impl<F: Futex> RawLock for Seed<F> {
    type Node = ();
    const CAPS: Caps = Caps::OWN_WORD_SPIN;

    fn new(config: &LockConfig) -> Self {
        Self { word: AtomicU32::new(AVAILABLE), spin: config.spin.max(1), futex: PhantomData }
    }

    fn state_word(&self) -> Option<u32> {
        Some(self.word.load(Ordering::Relaxed))
    }

    #[inline]
    #[link_section = "contend_measured"] // crate docs: Placement
    fn lock(&self, _node: &(), stats: &mut LockStats) {
        loop {
            for _ in 0..self.spin {
                if self
                    .word
                    .compare_exchange(AVAILABLE, BLOCKED, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    return;
                }
                stats.add_spins(1);
            }
            stats.add_wait();
            F::wait(&self.word, BLOCKED);
        }
    }

    #[inline]
    unsafe fn unlock(&self, _node: &(), stats: &mut LockStats) {
        if self.word.compare_exchange(BLOCKED, AVAILABLE, Ordering::Release, Ordering::Relaxed).is_ok() {
            stats.add_wake();
            F::wake(&self.word, 1);
        }
    }
}

// SAFETY: a successful CAS AVAILABLE -> BLOCKED is exactly what `lock` does.
unsafe impl<F: Futex> TryLock for Seed<F> {
    #[inline]
    fn try_lock(&self, _node: &(), _stats: &mut LockStats) -> bool {
        self.word.compare_exchange(AVAILABLE, BLOCKED, Ordering::Acquire, Ordering::Relaxed).is_ok()
    }
}

/// The same lock over process-shared futex operations, for worker processes.
#[cfg(not(loom))]
pub type SharedSeed = Seed<crate::sys::futex::SharedFutex>;

// SAFETY: the word is plain data and the futex operations are the shared
// ones, keyed on the page rather than the address space.
#[cfg(not(loom))]
unsafe impl crate::ProcessShared for SharedSeed {}
