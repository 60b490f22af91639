//! `pthread-spin`: glibc's x86-64 `pthread_spin_lock`, instruction for
//! instruction, on a word that is 0 when free.
//!
//! | word | meaning |
//! |------|---------|
//! | 0 | unlocked |
//! | 1 or more | locked (each failed attempt adds 1) |
//!
//! Origin: glibc's sysdeps/x86_64/nptl/pthread_spin_lock.S: `lock decl` on
//! the word, taken if it reached 0; else `pause` in a loop of plain reads
//! until the word is free again, then another `lock decl`. Unlock stores
//! the free value; trylock is one compare-and-exchange. glibc's free value
//! is 1 (pthread_spin_init stores it), so a zeroed `pthread_spinlock_t` is
//! a held one; a swapped lock must be free in a zeroed mutex
//! (PTHREAD_MUTEX_INITIALIZER), so here the word counts the other way
//! (ours = 1 - glibc's) and the steps are the same. It is here so that a
//! program's `pthread_spinlock_t`, compiled into the source, can be
//! compared with the same algorithm swapped in for its mutexes by
//! `contend run --lock`.
//!
//! Known failure mode: a spin lock's. A preempted owner makes every waiter
//! spin out its time slice, and nothing is fair.

use crate::primitive::{spin_loop, AtomicU32, Ordering};
use crate::{Caps, LockConfig, LockStats, RawLock, TryLock};

/// glibc's x86-64 spin lock on a zero-free word; see the module docs.
#[derive(Debug, Default)]
pub struct PthreadSpin {
    word: AtomicU32,
}

// SAFETY: only the thread whose increment found 0 returns from `lock` (the
// word is then nonzero until its unlock stores 0); the increment is
// Acquire and the unlocking store Release.
unsafe impl RawLock for PthreadSpin {
    type Node = ();
    const CAPS: Caps = Caps::OWN_WORD;

    fn new(_config: &LockConfig) -> Self {
        Self::default()
    }

    #[inline]
    fn lock(&self, _node: &(), stats: &mut LockStats) {
        // glibc's `lock decl; jne`: the attempt itself writes the word.
        while self.word.fetch_add(1, Ordering::Acquire) != 0 {
            // glibc's `rep nop; cmpl $0; jg`: read until free.
            loop {
                stats.add_spins(1);
                spin_loop();
                if self.word.load(Ordering::Relaxed) == 0 {
                    break;
                }
            }
        }
    }

    #[inline]
    unsafe fn unlock(&self, _node: &(), _stats: &mut LockStats) {
        self.word.store(0, Ordering::Release);
    }
}

// SAFETY: one compare-and-exchange from free, as glibc's trylock.
unsafe impl TryLock for PthreadSpin {
    #[inline]
    fn try_lock(&self, _node: &(), _stats: &mut LockStats) -> bool {
        self.word.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed).is_ok()
    }
}

// SAFETY: plain atomics with no pointers; atomics in shared memory work
// across processes as they do across threads.
unsafe impl crate::ProcessShared for PthreadSpin {}
