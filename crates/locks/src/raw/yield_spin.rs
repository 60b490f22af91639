//! `yield`: TTAS that calls sched_yield when it finds the lock taken.
//!
//! | word | meaning |
//! |------|---------|
//! | false | unlocked |
//! | true | locked |
//!
//! Origin: the "sched_yield userspace spinlock" the FUTEX_LOCK RFC
//! discussion suggested comparing adaptive futexes against: instead of
//! burning its slice, a waiter offers the CPU to another runnable thread,
//! hopefully the preempted owner.
//!
//! Known failure mode: sched_yield promises nothing (under CFS/EEVDF it may
//! return at once or run an unrelated thread), every failed attempt is a
//! syscall, and with more CPUs than threads it degenerates into a
//! syscall-heavy spin.

use super::Ttas;
use crate::{Caps, LockConfig, LockStats, RawLock, TryLock};

/// TTAS that yields the CPU while the lock is taken; see the module docs.
#[derive(Debug, Default)]
pub struct YieldSpin {
    inner: Ttas,
}

// SAFETY: exclusion comes from the inner TTAS exchange.
unsafe impl RawLock for YieldSpin {
    type Node = ();
    const CAPS: Caps = Ttas::CAPS;

    fn new(_config: &LockConfig) -> Self {
        Self::default()
    }

    #[inline]
    fn lock(&self, _node: &(), stats: &mut LockStats) {
        while !self.inner.attempt() {
            while self.inner.is_locked() {
                stats.spins += 1;
                yield_now();
            }
        }
    }

    #[inline]
    unsafe fn unlock(&self, _node: &(), _stats: &mut LockStats) {
        self.inner.release();
    }
}

// SAFETY: one exchange, as in `lock`.
unsafe impl TryLock for YieldSpin {
    #[inline]
    fn try_lock(&self, _node: &(), _stats: &mut LockStats) -> bool {
        self.inner.attempt()
    }
}

#[cfg(not(loom))]
fn yield_now() {
    // std's yield_now is sched_yield(2) on Linux.
    std::thread::yield_now();
}

#[cfg(loom)]
fn yield_now() {
    loom::thread::yield_now();
}

// SAFETY: plain atomics with no pointers; atomics in shared memory work
// across processes as they do across threads.
unsafe impl crate::ProcessShared for YieldSpin {}
