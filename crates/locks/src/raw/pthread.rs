//! `pthread`: glibc's default mutex (`PTHREAD_MUTEX_NORMAL`).
//!
//! | word (`__lock`) | meaning |
//! |------|---------|
//! | 0 | unlocked |
//! | 1 | locked |
//! | 2 | locked, waiters possible |
//!
//! Origin: glibc nptl `pthread_mutex_lock`, which implements Drepper's
//! mutex 3 (`lll_lock`) without spinning. Its word is private to glibc, so
//! contend cannot count its spins, waits or wakes; the futex tracepoint
//! counters still see its syscalls.
//!
//! Known failure mode: no spinning at all, so every contended acquisition
//! sleeps, and the unlocker pays a FUTEX_WAKE while newcomers barge ahead of
//! the woken thread.

use crate::sys::pthread::Mutex;
use crate::{Caps, LockConfig, LockStats, RawLock};

/// glibc's default mutex; see the module docs.
pub struct PthreadMutex {
    inner: Mutex,
}

// SAFETY: pthread_mutex_lock/unlock provide mutual exclusion with the
// required ordering (POSIX 4.12 memory synchronization).
unsafe impl RawLock for PthreadMutex {
    type Node = ();
    const CAPS: Caps = Caps {
        spin: false,
        try_lock: true,
        process_shared: false,
        counters: false,
        exclusive: true,
    };

    fn new(_config: &LockConfig) -> Self {
        Self {
            inner: Mutex::new_default(),
        }
    }

    #[inline]
    fn lock(&self, _node: &(), _stats: &mut LockStats) {
        self.inner.lock();
    }

    #[inline]
    unsafe fn unlock(&self, _node: &(), _stats: &mut LockStats) {
        // SAFETY: the trait's contract: the caller holds the lock.
        unsafe { self.inner.unlock() }
    }
}
