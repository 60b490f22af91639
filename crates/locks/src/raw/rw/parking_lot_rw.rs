//! `parking_lot-rw`: `parking_lot::RawRwLock`.
//!
//! | word bits | meaning |
//! |------|---------|
//! | 0 (PARKED) | readers or writers are parked |
//! | 1 (WRITER_PARKED) | a writer is parked waiting for the readers to leave |
//! | 2 (UPGRADABLE) | an upgradable reader holds it |
//! | 3 (WRITER) | a writer holds it, or waits for readers to leave |
//! | 4 and up | readers |
//!
//! Origin: Amanieu d'Antras's parking_lot: one word per lock, waiters in
//! the global parking lot as for its mutex. It calls its policy
//! task-fair: a writer sets WRITER first and then waits for the readers to
//! drain, so new readers wait behind it; and it has the same "eventual fairness" hand-off as
//! the mutex, every 0.5 ms on average. Its state is private, so contend
//! cannot count its spins, waits or wakes.

use crate::{Caps, LockConfig, LockStats, RawLock, RawRwLock, TryLock};
use lock_api::RawRwLock as _;

/// parking_lot's raw reader-writer lock.
pub struct ParkingLotRw {
    inner: parking_lot::RawRwLock,
}

// SAFETY: lock_api's RawRwLock contract: an exclusive hold excludes every
// other hold, with acquire/release ordering.
unsafe impl RawLock for ParkingLotRw {
    type Node = ();
    const CAPS: Caps = Caps { try_lock: true, rw: true, ..Caps::PLAIN };

    fn new(_config: &LockConfig) -> Self {
        Self { inner: parking_lot::RawRwLock::INIT }
    }

    #[inline]
    fn lock(&self, _node: &(), _stats: &mut LockStats) {
        self.inner.lock_exclusive();
    }

    #[inline]
    unsafe fn unlock(&self, _node: &(), _stats: &mut LockStats) {
        // SAFETY: the caller holds it exclusively (RawLock::unlock's contract).
        unsafe { self.inner.unlock_exclusive() }
    }
}

// SAFETY: lock_api's shared holds exclude exclusive ones.
unsafe impl RawRwLock for ParkingLotRw {
    #[inline]
    fn lock_shared(&self, _node: &(), _stats: &mut LockStats) {
        self.inner.lock_shared();
    }

    #[inline]
    unsafe fn unlock_shared(&self, _node: &(), _stats: &mut LockStats) {
        // SAFETY: the caller holds it shared (this method's contract).
        unsafe { self.inner.unlock_shared() }
    }
}

// SAFETY: lock_api's try_lock_exclusive success is an exclusive hold.
unsafe impl TryLock for ParkingLotRw {
    #[inline]
    fn try_lock(&self, _node: &(), _stats: &mut LockStats) -> bool {
        self.inner.try_lock_exclusive()
    }
}
