//! The lock contract and one file per algorithm.
//!
//! [`RawLock`] follows lock_api's `RawMutex`, extended with a per-acquisition
//! `Node` for queue locks (MCS, CLH) and a [`LockStats`] the algorithm bumps
//! on its slow paths, so every run can report spins, futex waits and wakes
//! without a shared counter in the hot path: a count is published where
//! the harness reads it by the slow path that moves it ([`stats`]).

mod adaptive;
mod backoff;
mod called;
mod clh;
#[cfg(not(loom))]
mod file_lock;
#[cfg(not(loom))]
mod flock;
#[cfg(not(loom))]
mod futex2;
mod futex_mutex;
#[cfg(not(loom))]
mod lockf;
#[cfg(not(loom))]
mod lost_wake;
mod mcs;
mod mutex3;
mod noop;
#[cfg(not(loom))]
mod ofd;
#[cfg(not(loom))]
mod parking_lot;
#[cfg(not(loom))]
mod pi;
#[cfg(not(loom))]
mod posix_sem;
#[cfg(not(loom))]
mod pthread;
#[cfg(not(loom))]
mod pthread_spin;
mod rw;
mod seed;
mod stats;
#[cfg(not(loom))]
mod std_mutex;
#[cfg(not(loom))]
mod sysv_sem;
mod tas;
mod ticket;
mod ttas;
mod yield_spin;

#[cfg(not(loom))]
pub use adaptive::{budgets as adaptive_budgets, Budgets as AdaptiveBudgets, PackedAdaptive};
pub use adaptive::{Adaptive, AdaptiveNode};
pub use backoff::Backoff;
pub use called::Called;
pub use clh::{Clh, ClhHandle};
#[cfg(not(loom))]
pub use flock::Flock;
#[cfg(not(loom))]
pub use futex2::{Futex2Mutex, SharedFutex2Mutex};
pub use futex_mutex::FutexMutex;
#[cfg(not(loom))]
pub use lockf::Lockf;
#[cfg(not(loom))]
pub use lost_wake::LostWake;
pub use mcs::{Mcs, McsNode};
pub use noop::NoLock;
#[cfg(not(loom))]
pub use ofd::OfdLock;
#[cfg(not(loom))]
pub use parking_lot::ParkingLot;
#[cfg(not(loom))]
pub use pi::{PiFutex, SharedPiFutex};
#[cfg(not(loom))]
pub use posix_sem::{PosixSem, SharedPosixSem};
#[cfg(not(loom))]
pub use pthread::{
    PthreadAdaptive, PthreadMutex, PthreadPi, PthreadRobust, SharedPthreadAdaptive, SharedPthreadMutex,
    SharedPthreadPi, SharedPthreadRobust,
};
#[cfg(not(loom))]
pub use pthread_spin::PthreadSpin;
pub use rw::{FutexRw, RawRwLock};
#[cfg(not(loom))]
pub use rw::{ParkingLotRw, PthreadRw, PthreadRwWriter, RwGuardSlot, StdRw};
pub use seed::Seed;
pub use stats::{LockCounts, LockStats, SharedCounts};
#[cfg(not(loom))]
pub use std_mutex::{GuardSlot, StdMutex};
#[cfg(not(loom))]
pub use sysv_sem::{index_for, SysvSem};
pub use tas::Tas;
pub use ticket::Ticket;
pub use ttas::Ttas;
pub use yield_spin::YieldSpin;
#[cfg(not(loom))]
pub use {adaptive::SharedAdaptive, futex_mutex::SharedFutexMutex, seed::SharedSeed};

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
    /// Takes a waiting policy (`--spinners none|one|many`).
    pub spinners: bool,
    /// Can be used by several threads of one process. False for classic
    /// POSIX record locks, which belong to the process, not the thread.
    pub threads: bool,
    /// Needs a lock file (file locks, and SysV, which hashes its name).
    pub needs_file: bool,
    /// Needs the run's SysV semaphore set.
    pub needs_sem_set: bool,
    /// Survives its owner's death: the next locker recovers it (robust).
    pub robust: bool,
    /// The kernel releases it when its holder dies (file locks: closing
    /// the last descriptor, or the process's exit, drops the lock), so a
    /// waiter gets it without doing anything.
    pub released_on_death: bool,
    /// The most workers that may share one lock (a field in the lock word
    /// counts the waiters).
    pub max_workers: u32,
    /// Spins glibc's `glibc.pthread.mutex_spin_count` tunable at most
    /// (PTHREAD_MUTEX_ADAPTIVE_NP), which glibc reads once, at start-up.
    pub glibc_spin: bool,
    /// Has a shared mode that readers hold together ([`RawRwLock`]); takes
    /// `--read`.
    pub rw: bool,
    /// Hands the lock to its waiters in arrival order, to the next in line
    /// even when that thread is not running: with more runnable threads
    /// than CPUs everyone then waits for a preempted successor (a convoy;
    /// ticket made hundreds of acquisitions a second with 4 threads on 2
    /// CPUs), so tests run these with as many threads as CPUs.
    pub fifo: bool,
}

impl Caps {
    /// A sleeping or spinning lock with no options: exclusive, nothing else.
    pub const PLAIN: Caps = Caps {
        spin: false,
        try_lock: false,
        process_shared: false,
        counters: false,
        exclusive: true,
        spinners: false,
        threads: true,
        needs_file: false,
        needs_sem_set: false,
        robust: false,
        released_on_death: false,
        glibc_spin: false,
        rw: false,
        fifo: false,
        max_workers: u32::MAX,
    };

    /// A lock on its own word in user space that contend wrote: it
    /// offers try-lock, works across processes, and fills [`LockStats`].
    pub const OWN_WORD: Caps = Caps { try_lock: true, process_shared: true, counters: true, ..Caps::PLAIN };

    /// [`Caps::OWN_WORD`] with a spin budget (`--spin`).
    pub const OWN_WORD_SPIN: Caps = Caps { spin: true, ..Caps::OWN_WORD };
}

/// Which waiters spin before sleeping: the three policies of the FUTEX_LOCK
/// RFC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Spinners {
    /// Sleep at once.
    None,
    /// At most one waiter spins (it holds a spinner token); the rest sleep.
    #[default]
    One,
    /// Every waiter spins before sleeping.
    Many,
}

/// Parameters a lock is built with.
#[derive(Debug, Clone, Copy)]
pub struct LockConfig {
    /// Spin budget for locks with [`Caps::spin`]: how many attempts a waiter
    /// makes in user space before it sleeps. At least 1.
    pub spin: u32,
    /// Waiting policy for locks with [`Caps::spinners`].
    pub spinners: Spinners,
    /// The lock file, for locks with [`Caps::needs_file`].
    #[cfg(not(loom))]
    pub lock_file: Option<crate::sys::lockfile::InlinePath>,
    /// The run's SysV semaphore set (id, size), for `sysv`.
    pub sysv_set: Option<(i32, u16)>,
    /// File locks: open the lock file before every acquisition and close
    /// it after the release, as lockscale does, instead of once per
    /// worker.
    pub reopen: bool,
}

impl LockConfig {
    /// The spin budget when `--spin` is not given.
    pub const DEFAULT_SPIN: u32 = 100;
}

impl Default for LockConfig {
    fn default() -> Self {
        Self {
            spin: Self::DEFAULT_SPIN,
            spinners: Spinners::default(),
            #[cfg(not(loom))]
            lock_file: None,
            sysv_set: None,
            reopen: false,
        }
    }
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

    /// Builds an unlocked lock, or says why it cannot (a kernel object could
    /// not be created). Locks that cannot fail keep the default.
    fn try_new(config: &LockConfig) -> Result<Self, String> {
        Ok(Self::new(config))
    }

    /// Acquires the lock, blocking or spinning as the algorithm does.
    fn lock(&self, node: &Self::Node, stats: &mut LockStats);

    /// The lock's state word, for diagnosing a hung run (locks that have
    /// one and can read it without side effects).
    fn state_word(&self) -> Option<u32> {
        None
    }

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
        self.lock(node, stats);
        // Not a drop guard: a guard holding `self`, `node` and `stats` was
        // built on the stack on every call, three stores that the next
        // locked instruction waited for, paid only by locks whose unlock
        // reads the node or the counters (one thread, hold 0: `futex` ran
        // at 49M cs/s with the guard, 58M without). Unwinding is as
        // before: the lock is released, then the panic goes on.
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        // SAFETY: the `lock` above, with `node`, succeeded; whether `f`
        // returned or unwound, this thread still holds the lock.
        unsafe { self.unlock(node, stats) };
        match outcome {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

/// Locks that can be tried without blocking.
///
/// # Safety
///
/// A `true` return must give the same guarantees as a return from
/// [`RawLock::lock`]; the caller then releases with [`RawLock::unlock`].
pub unsafe trait TryLock: RawLock {
    /// Takes the lock if it is free right now.
    fn try_lock(&self, node: &Self::Node, stats: &mut LockStats) -> bool;
}

/// Locks that work when placed in a `MAP_SHARED` mapping and used by forked
/// worker processes: no pointers into one process's private memory, and
/// shared (not process-private) futex operations.
///
/// # Safety
///
/// Implementors must provide mutual exclusion between processes that share
/// the mapping the lock was built in, used through their own nodes.
pub unsafe trait ProcessShared: RawLock {}
