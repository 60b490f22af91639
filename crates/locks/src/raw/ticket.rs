//! `ticket`: the ticket lock.
//!
//! | word | meaning |
//! |------|---------|
//! | `next` | the ticket the next arriving thread draws |
//! | `serving` | the ticket allowed in; locked while `serving != next` |
//!
//! Origin: Reed and Kanodia's sequencers (1979), popularised for spinlocks
//! by Mellor-Crummey and Scott (1991); Linux's spinlock before qspinlock.
//! Strict FIFO: threads enter in the order they drew tickets.
//!
//! Known failure mode: FIFO handoff to a thread that is not running. When
//! threads outnumber CPUs, the next ticket holder is often preempted, and
//! everyone behind it spins until the scheduler runs it again (throughput
//! collapses to about one acquisition per scheduler time slice). All waiters
//! spin on one line, which every unlock invalidates.

use crate::primitive::{spin_loop, AtomicU32, Ordering};
use crate::{Caps, LockConfig, LockStats, RawLock, TryLock};

/// A ticket lock; see the module docs.
#[derive(Debug, Default)]
pub struct Ticket {
    next: AtomicU32,
    serving: AtomicU32,
}

// SAFETY: tickets are unique (fetch_add), and only the holder of ticket
// `serving` returns from `lock`; `serving` advances only in `unlock`
// (Release), observed with Acquire.
unsafe impl RawLock for Ticket {
    type Node = ();
    const CAPS: Caps = Caps { fifo: true, ..Caps::OWN_WORD };

    fn new(_config: &LockConfig) -> Self {
        Self::default()
    }

    #[inline]
    fn lock(&self, _node: &(), stats: &mut LockStats) {
        let mine = self.next.fetch_add(1, Ordering::Relaxed);
        while self.serving.load(Ordering::Acquire) != mine {
            stats.add_spins(1);
            spin_loop();
        }
    }

    #[inline]
    unsafe fn unlock(&self, _node: &(), _stats: &mut LockStats) {
        // Only the holder writes `serving`, so load + store is enough.
        let now = self.serving.load(Ordering::Relaxed);
        self.serving.store(now.wrapping_add(1), Ordering::Release);
    }
}

// SAFETY: drawing ticket `serving` when nobody else holds one is exactly an
// uncontended `lock`.
unsafe impl TryLock for Ticket {
    #[inline]
    fn try_lock(&self, _node: &(), _stats: &mut LockStats) -> bool {
        let serving = self.serving.load(Ordering::Acquire);
        self.next
            .compare_exchange(serving, serving.wrapping_add(1), Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }
}

// SAFETY: plain atomics with no pointers; atomics in shared memory work
// across processes as they do across threads.
unsafe impl crate::ProcessShared for Ticket {}
