//! `std-rw`: Rust's `std::sync::RwLock<()>`.
//!
//! | word bits | meaning (std's futex RwLock, Rust 1.62 and later) |
//! |------|---------|
//! | 0..=29 | readers, or all ones for a writer |
//! | 30 | readers waiting |
//! | 31 | writers waiting |
//!
//! Origin: Mara Bos's futex RwLock in std: one state word plus a writer
//! notification futex; a bounded spin of 100 before sleeping; readers
//! wait behind a waiting writer (writer-preferring), and an unlock wakes a
//! writer first. Its words are private, so contend cannot count its spins,
//! waits or wakes.
//!
//! std has no raw lock/unlock, so the guard travels in the worker's node
//! from lock to unlock, as for [`crate::raw::StdMutex`].

use crate::{Caps, LockConfig, LockStats, RawLock, RawRwLock, TryLock};
use std::cell::Cell;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard, TryLockError};

/// `std::sync::RwLock<()>` as a raw reader-writer lock.
#[derive(Debug, Default)]
pub struct StdRw {
    inner: RwLock<()>,
}

/// The guard a worker holds between lock and unlock, of either kind.
#[derive(Default)]
pub struct RwGuardSlot(Cell<Held>);

#[derive(Default)]
enum Held {
    #[default]
    Nothing,
    // Held only to be dropped at unlock.
    Read(#[allow(dead_code)] RwLockReadGuard<'static, ()>),
    Write(#[allow(dead_code)] RwLockWriteGuard<'static, ()>),
}

impl StdRw {
    fn keep_write(slot: &RwGuardSlot, guard: RwLockWriteGuard<'_, ()>) {
        // SAFETY: the guard borrows `self.inner`; the 'static lifetime is
        // a lie the RawLock contract makes harmless: the matching unlock
        // takes it out of the slot and drops it while the caller still
        // borrows the lock, so it never outlives the RwLock.
        let guard: RwLockWriteGuard<'static, ()> = unsafe { std::mem::transmute(guard) };
        slot.0.set(Held::Write(guard));
    }

    fn keep_read(slot: &RwGuardSlot, guard: RwLockReadGuard<'_, ()>) {
        // SAFETY: as in `keep_write`, for the shared guard and
        // RawRwLock::unlock_shared.
        let guard: RwLockReadGuard<'static, ()> = unsafe { std::mem::transmute(guard) };
        slot.0.set(Held::Read(guard));
    }
}

// SAFETY: std's RwLock excludes everyone else while a write guard exists,
// and the guard exists exactly from `lock` to `unlock`.
unsafe impl RawLock for StdRw {
    type Node = RwGuardSlot;
    const CAPS: Caps = Caps { try_lock: true, rw: true, ..Caps::PLAIN };

    fn new(_config: &LockConfig) -> Self {
        Self::default()
    }

    #[inline]
    fn lock(&self, slot: &RwGuardSlot, _stats: &mut LockStats) {
        Self::keep_write(slot, self.inner.write().unwrap_or_else(|poisoned| poisoned.into_inner()));
    }

    #[inline]
    unsafe fn unlock(&self, slot: &RwGuardSlot, _stats: &mut LockStats) {
        drop(slot.0.take());
    }
}

// SAFETY: a read guard excludes writers for as long as it exists, from
// `lock_shared` to `unlock_shared`.
unsafe impl RawRwLock for StdRw {
    #[inline]
    fn lock_shared(&self, slot: &RwGuardSlot, _stats: &mut LockStats) {
        Self::keep_read(slot, self.inner.read().unwrap_or_else(|poisoned| poisoned.into_inner()));
    }

    #[inline]
    unsafe fn unlock_shared(&self, slot: &RwGuardSlot, _stats: &mut LockStats) {
        drop(slot.0.take());
    }
}

// SAFETY: a write guard from try_write is the same as one from write.
unsafe impl TryLock for StdRw {
    #[inline]
    fn try_lock(&self, slot: &RwGuardSlot, _stats: &mut LockStats) -> bool {
        match self.inner.try_write() {
            Ok(guard) => Self::keep_write(slot, guard),
            Err(TryLockError::Poisoned(p)) => Self::keep_write(slot, p.into_inner()),
            Err(TryLockError::WouldBlock) => return false,
        }
        true
    }
}
