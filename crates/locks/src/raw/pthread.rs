//! `pthread`, `pthread-adaptive`, `pthread-pi`, `pthread-robust`: glibc's
//! mutexes.
//!
//! | word (`__lock`) | meaning (default and adaptive) |
//! |------|---------|
//! | 0 | unlocked |
//! | 1 | locked |
//! | 2 | locked, waiters possible |
//!
//! For `pthread-pi` the word holds the owner's TID and the kernel's
//! FUTEX_WAITERS bit instead, as in `pi`.
//!
//! Origin: glibc nptl. The default mutex is Drepper's mutex 3 without
//! spinning. `PTHREAD_MUTEX_ADAPTIVE_NP` spins up to a per-mutex moving
//! average (`__spins`, capped by the `glibc.pthread.mutex_spin_count`
//! tunable, default 100) before sleeping. `PTHREAD_PRIO_INHERIT` uses
//! FUTEX_LOCK_PI. `PTHREAD_MUTEX_ROBUST` puts the mutex on the owner's
//! robust list (set_robust_list), so if the owner dies holding it the
//! kernel marks it FUTEX_OWNER_DIED and the next locker gets EOWNERDEAD;
//! contend then calls pthread_mutex_consistent and counts a recovery.
//! Their words are private to glibc, so contend cannot count
//! their spins, waits or wakes; the futex tracepoint counters still see the
//! syscalls.
//!
//! Known failure modes: the default mutex never spins, so every contended
//! acquisition sleeps and the unlocker pays a FUTEX_WAKE while newcomers
//! barge ahead of the woken thread; the adaptive one spins blindly (it
//! cannot tell a running owner from a preempted one); the PI one pays a
//! syscall on every contended lock and unlock.

use crate::sys::pthread::{Kind, Mutex};
use crate::{Caps, LockConfig, LockStats, RawLock, TryLock};

/// A glibc mutex of kind `KIND` (0 default, 1 adaptive, 2 priority
/// inheritance, 3 robust), `SHARED` between processes or not; use the
/// aliases.
pub struct PthreadLock<const KIND: u8, const SHARED: bool = false> {
    inner: Mutex,
}

/// glibc's default mutex.
pub type PthreadMutex = PthreadLock<0>;
/// glibc's `PTHREAD_MUTEX_ADAPTIVE_NP`.
pub type PthreadAdaptive = PthreadLock<1>;
/// glibc's `PTHREAD_PRIO_INHERIT` mutex.
pub type PthreadPi = PthreadLock<2>;
/// glibc's `PTHREAD_MUTEX_ROBUST` mutex.
pub type PthreadRobust = PthreadLock<3>;
/// The robust mutex with `PTHREAD_PROCESS_SHARED`: survives a worker
/// process killed while holding it.
pub type SharedPthreadRobust = PthreadLock<3, true>;
/// The default mutex with `PTHREAD_PROCESS_SHARED`.
pub type SharedPthreadMutex = PthreadLock<0, true>;
/// The adaptive mutex with `PTHREAD_PROCESS_SHARED`.
pub type SharedPthreadAdaptive = PthreadLock<1, true>;
/// The PI mutex with `PTHREAD_PROCESS_SHARED`.
pub type SharedPthreadPi = PthreadLock<2, true>;

// SAFETY: PTHREAD_PROCESS_SHARED mutexes are specified to work in shared
// memory, and the mutex is stored inline (no pointers).
unsafe impl<const KIND: u8> crate::ProcessShared for PthreadLock<KIND, true> {}

const fn kind(k: u8) -> Kind {
    match k {
        1 => Kind::Adaptive,
        2 => Kind::PriorityInherit,
        3 => Kind::Robust,
        _ => Kind::Default,
    }
}

// SAFETY: pthread_mutex_lock/unlock provide mutual exclusion with the
// required ordering (POSIX 4.12 memory synchronization).
unsafe impl<const KIND: u8, const SHARED: bool> RawLock for PthreadLock<KIND, SHARED> {
    type Node = ();
    const CAPS: Caps = Caps {
        try_lock: true,
        process_shared: true,
        robust: KIND == 3,
        glibc_spin: KIND == 1,
        ..Caps::PLAIN
    };

    fn new(_config: &LockConfig) -> Self {
        Self { inner: Mutex::new(kind(KIND), SHARED) }
    }

    #[inline]
    fn lock(&self, _node: &(), stats: &mut LockStats) {
        if self.inner.lock() {
            stats.add_recovery();
        }
    }

    #[inline]
    unsafe fn unlock(&self, _node: &(), _stats: &mut LockStats) {
        // SAFETY: the trait's contract: the caller holds the lock.
        unsafe { self.inner.unlock() }
    }
}

// SAFETY: pthread_mutex_trylock success is an acquisition.
unsafe impl<const KIND: u8, const SHARED: bool> TryLock for PthreadLock<KIND, SHARED> {
    #[inline]
    fn try_lock(&self, _node: &(), _stats: &mut LockStats) -> bool {
        self.inner.try_lock()
    }
}
