//! The lock contract and one file per algorithm.
//!
//! [`RawLock`] follows lock_api's `RawMutex`, extended with a per-acquisition
//! `Node` for queue locks (MCS, CLH) and a [`LockStats`] the algorithm bumps
//! on its slow paths, so every run can report spins, futex waits and wakes
//! without a shared counter in the hot path.

mod futex_mutex;
mod noop;
#[cfg(not(loom))]
mod pthread;
mod seed;

pub use futex_mutex::FutexMutex;
pub use noop::NoLock;
#[cfg(not(loom))]
pub use pthread::PthreadMutex;
pub use seed::Seed;

/// What a lock can do besides lock and unlock. The CLI validates flags
/// against these, and `contend list locks` prints them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Accepts a spin budget (`--spin`).
    pub spin: bool,
    /// Offers try-lock.
    pub try_lock: bool,
    /// Can live in shared memory and be used by several processes.
    pub process_shared: bool,
    /// Fills [`LockStats`] (library locks such as pthread cannot).
    pub counters: bool,
    /// Provides mutual exclusion. Only the `noop` baseline says no: it exists
    /// to measure the harness and is refused with more than one worker.
    pub exclusive: bool,
}

/// Parameters a lock is built with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockConfig {
    /// Spin budget for locks with [`Caps::spin`]: how many attempts a waiter
    /// makes in user space before it sleeps. At least 1.
    pub spin: u32,
}

impl Default for LockConfig {
    fn default() -> Self {
        Self { spin: 100 }
    }
}

/// Per-worker event counts a lock records on its slow paths. Plain integers:
/// each worker owns its own, so counting costs no shared-memory traffic.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct LockStats {
    /// Failed user-space attempts (a CAS that lost, or a poll that saw the
    /// lock taken) before the lock was acquired or the waiter slept.
    pub spins: u64,
    /// Futex waits issued (including ones that returned EAGAIN at once).
    pub waits: u64,
    /// Futex wakes issued.
    pub wakes: u64,
}

/// A mutual-exclusion lock that `contend` can measure.
///
/// # Safety
///
/// Implementors must guarantee mutual exclusion between a return from
/// [`RawLock::lock`] and the matching [`RawLock::unlock`], with acquire
/// ordering on lock and release ordering on unlock, unless [`Caps::exclusive`]
/// is false.
pub unsafe trait RawLock: Send + Sync + Sized + 'static {
    /// Per-acquisition state (a queue node); `()` for flat locks. The caller
    /// keeps it at a fixed address from `lock` until the matching `unlock`.
    type Node: Default;
    /// What this lock supports.
    const CAPS: Caps;

    /// Builds an unlocked lock.
    fn new(config: &LockConfig) -> Self;

    /// Acquires the lock, blocking or spinning as the algorithm does.
    fn lock(&self, node: &Self::Node, stats: &mut LockStats);

    /// Releases the lock.
    ///
    /// # Safety
    ///
    /// The calling thread must hold the lock, acquired with this `node`.
    unsafe fn unlock(&self, node: &Self::Node, stats: &mut LockStats);

    /// Runs `f` with the lock held: the safe way to use a [`RawLock`]. The
    /// lock is released even if `f` unwinds, so a panicking critical section
    /// cannot leave the other workers blocked forever.
    #[inline(always)]
    fn with<R>(&self, node: &Self::Node, stats: &mut LockStats, f: impl FnOnce() -> R) -> R {
        struct Release<'a, L: RawLock> {
            lock: &'a L,
            node: &'a L::Node,
            stats: &'a mut LockStats,
        }
        impl<L: RawLock> Drop for Release<'_, L> {
            #[inline(always)]
            fn drop(&mut self) {
                // SAFETY: a `Release` exists only between a completed `lock`
                // with `node` and the end of `with`, so this thread holds it.
                unsafe { self.lock.unlock(self.node, self.stats) }
            }
        }
        self.lock(node, stats);
        let _release = Release {
            lock: self,
            node,
            stats,
        };
        f()
    }
}
