//! `std`: Rust's `std::sync::Mutex<()>`.
//!
//! | word | meaning |
//! |------|---------|
//! | 0 | unlocked |
//! | 1 | locked |
//! | 2 | locked, waiters possible |
//!
//! Origin: since Rust 1.62 the standard library's Linux mutex is a futex
//! mutex in the Drepper mutex 3 style (by Mara Bos), spinning a bounded 100
//! iterations while the word reads locked before it sleeps. Its word is
//! private, so contend cannot count its spins, waits or wakes.
//!
//! Known failure mode: that of mutex 3 (unlocker pays the wake, newcomers
//! barge); plus poisoning, which contend ignores (a panicking critical
//! section is a harness bug, reported as such).
//!
//! std has no raw lock/unlock, so the guard travels in the worker's node
//! from `lock` to `unlock`.

use crate::{Caps, LockConfig, LockStats, RawLock, TryLock};
use std::cell::Cell;
use std::sync::{Mutex, MutexGuard, TryLockError};

/// `std::sync::Mutex<()>` as a raw lock.
#[derive(Debug, Default)]
pub struct StdMutex {
    inner: Mutex<()>,
}

/// Where the guard waits between `lock` and `unlock`.
#[derive(Default)]
pub struct GuardSlot(Cell<Option<MutexGuard<'static, ()>>>);

impl StdMutex {
    fn keep(&self, slot: &GuardSlot, guard: MutexGuard<'_, ()>) {
        // SAFETY: the guard borrows `self.inner`; the 'static lifetime is a
        // lie that the RawLock contract makes harmless: the matching
        // `unlock` takes the guard out of the slot and drops it while `self`
        // is still borrowed by the caller, so it never outlives the mutex.
        let guard: MutexGuard<'static, ()> = unsafe { std::mem::transmute(guard) };
        slot.0.set(Some(guard));
    }
}

// SAFETY: std's Mutex provides mutual exclusion while a guard exists, and
// the guard exists exactly from `lock` to `unlock`.
unsafe impl RawLock for StdMutex {
    type Node = GuardSlot;
    const CAPS: Caps = Caps { try_lock: true, ..Caps::PLAIN };

    fn new(_config: &LockConfig) -> Self {
        Self::default()
    }

    #[inline]
    fn lock(&self, slot: &GuardSlot, _stats: &mut LockStats) {
        let guard = self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        self.keep(slot, guard);
    }

    #[inline]
    unsafe fn unlock(&self, slot: &GuardSlot, _stats: &mut LockStats) {
        drop(slot.0.take());
    }
}

// SAFETY: a guard from try_lock is the same as one from lock.
unsafe impl TryLock for StdMutex {
    #[inline]
    fn try_lock(&self, slot: &GuardSlot, _stats: &mut LockStats) -> bool {
        match self.inner.try_lock() {
            Ok(guard) => self.keep(slot, guard),
            Err(TryLockError::Poisoned(p)) => self.keep(slot, p.into_inner()),
            Err(TryLockError::WouldBlock) => return false,
        }
        true
    }
}
