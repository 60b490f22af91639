//! `tas`: test-and-set spinlock.
//!
//! | word | meaning |
//! |------|---------|
//! | false | unlocked |
//! | true | locked |
//!
//! Origin: the textbook spinlock (atomic exchange in a loop), e.g. Anderson,
//! "The Performance of Spin Lock Alternatives for Shared-Memory
//! Multiprocessors" (1990), the baseline every later spinlock improves on.
//!
//! Known failure mode: every waiter writes the lock's cache line on every
//! attempt, so the line bounces between CPUs and the owner's unlock waits
//! behind the waiters' exchanges; and a preempted owner makes every waiter
//! spin out its time slice.

use crate::primitive::{spin_loop, AtomicU32, Ordering};
use crate::{Caps, LockConfig, LockStats, RawLock, TryLock};

/// A test-and-set spinlock; see the module docs.
#[derive(Debug, Default)]
pub struct Tas {
    locked: AtomicU32,
}

// SAFETY: only the thread whose swap returned false returns from `lock`; the
// swap is Acquire and the unlocking store Release.
unsafe impl RawLock for Tas {
    type Node = ();
    const CAPS: Caps = Caps::OWN_WORD;

    fn new(_config: &LockConfig) -> Self {
        Self::default()
    }

    #[inline]
    fn lock(&self, _node: &(), stats: &mut LockStats) {
        while self.locked.swap(1, Ordering::Acquire) != 0 {
            stats.add_spins(1);
            spin_loop();
        }
    }

    #[inline]
    unsafe fn unlock(&self, _node: &(), _stats: &mut LockStats) {
        self.locked.store(0, Ordering::Release);
    }
}

// SAFETY: one swap, as in `lock`.
unsafe impl TryLock for Tas {
    #[inline]
    fn try_lock(&self, _node: &(), _stats: &mut LockStats) -> bool {
        self.locked.swap(1, Ordering::Acquire) == 0
    }
}

// SAFETY: plain atomics with no pointers; atomics in shared memory work
// across processes as they do across threads.
unsafe impl crate::ProcessShared for Tas {}
