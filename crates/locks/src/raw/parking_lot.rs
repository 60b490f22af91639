//! `parking_lot`: `parking_lot::RawMutex`.
//!
//! | byte | meaning |
//! |------|---------|
//! | bit 0 (LOCKED) | held |
//! | bit 1 (PARKED) | threads are parked in the global parking lot |
//!
//! Origin: Amanieu d'Antras's parking_lot, after WebKit's WTF::Lock: one
//! byte per lock, waiters parked in a global hash table of queues, a short
//! exponential spin (with sched_yield after a few rounds) before parking,
//! and "eventual fairness": every 0.5 ms on average an unlock hands the lock
//! directly to the next waiter instead of letting newcomers barge.
//!
//! Known failure mode: barging makes it unfair between the fair handoffs,
//! and parking goes through a shared hash table whose bucket locks add
//! their own contention. Its state is private, so contend cannot count its
//! spins, waits or wakes.

use crate::{Caps, LockConfig, LockStats, RawLock, TryLock};
use lock_api::RawMutex as _;

/// parking_lot's raw mutex.
pub struct ParkingLot {
    inner: parking_lot::RawMutex,
}

// SAFETY: lock_api's RawMutex contract is mutual exclusion with acquire /
// release ordering, which is ours.
unsafe impl RawLock for ParkingLot {
    type Node = ();
    const CAPS: Caps = Caps { try_lock: true, ..Caps::PLAIN };

    fn new(_config: &LockConfig) -> Self {
        Self { inner: parking_lot::RawMutex::INIT }
    }

    #[inline]
    fn lock(&self, _node: &(), _stats: &mut LockStats) {
        self.inner.lock();
    }

    #[inline]
    unsafe fn unlock(&self, _node: &(), _stats: &mut LockStats) {
        // SAFETY: the caller holds the lock (RawLock::unlock's contract).
        unsafe { self.inner.unlock() }
    }
}

// SAFETY: lock_api's try_lock success is an acquisition.
unsafe impl TryLock for ParkingLot {
    #[inline]
    fn try_lock(&self, _node: &(), _stats: &mut LockStats) -> bool {
        self.inner.try_lock()
    }
}
