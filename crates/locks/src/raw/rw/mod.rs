//! Reader-writer locks: a shared mode that readers hold together beside
//! the exclusive one ([`RawLock::lock`] is the write lock).
//!
//! [`RawRwLock`] follows lock_api's `RawRwLock`, with the worker's node and
//! [`LockStats`] passed as for [`RawLock`]: std's RwLock keeps its guard in
//! the node, and our futex lock counts its waits and wakes.

mod futex_rw;
#[cfg(not(loom))]
mod parking_lot_rw;
#[cfg(not(loom))]
mod pthread_rw;
#[cfg(not(loom))]
mod std_rw;

pub use futex_rw::FutexRw;
#[cfg(not(loom))]
pub use parking_lot_rw::ParkingLotRw;
#[cfg(not(loom))]
pub use pthread_rw::{PthreadRw, PthreadRwWriter};
#[cfg(not(loom))]
pub use std_rw::{RwGuardSlot, StdRw};

use crate::{LockStats, RawLock};

/// A lock with a shared (read) mode: any number of readers hold it at
/// once, or one writer ([`RawLock::lock`]) alone.
///
/// # Safety
///
/// Between a return from [`RawRwLock::lock_shared`] and the matching
/// [`RawRwLock::unlock_shared`], no thread holds the lock exclusively
/// (between [`RawLock::lock`] and [`RawLock::unlock`]); with acquire
/// ordering on every lock and release ordering on every unlock.
pub unsafe trait RawRwLock: RawLock {
    /// Acquires the lock shared, blocking while a writer holds it (and,
    /// by the lock's policy, while writers wait).
    fn lock_shared(&self, node: &Self::Node, stats: &mut LockStats);

    /// Releases a shared hold.
    ///
    /// # Safety
    ///
    /// The calling thread must hold the lock shared, acquired with `node`.
    unsafe fn unlock_shared(&self, node: &Self::Node, stats: &mut LockStats);

    /// Runs `f` with the lock held shared, released even if `f` unwinds
    /// (as [`RawLock::with`]).
    #[inline(always)]
    fn with_shared<R>(&self, node: &Self::Node, stats: &mut LockStats, f: impl FnOnce() -> R) -> R {
        self.lock_shared(node, stats);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        // SAFETY: the `lock_shared` above, with `node`, succeeded; this
        // thread still holds the lock shared whether `f` returned or not.
        unsafe { self.unlock_shared(node, stats) };
        match outcome {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}
