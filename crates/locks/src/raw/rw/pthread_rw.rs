//! `pthread-rw`, `pthread-rw-writer`: glibc's `pthread_rwlock_t`.
//!
//! | `__readers` bits | meaning (glibc 2.25 and later) |
//! |------|---------|
//! | 0 (WRPHASE) | write phase: readers must wait |
//! | 1 (WRLOCKED) | a writer holds it or is about to |
//! | 2 (RWAITING) | readers sleep (writer-preferring kind) |
//! | 3 and up | readers, in steps of 8 |
//!
//! Origin: glibc's rwlock was rewritten by Torvald Riegel for 2.25 as a
//! phase-based lock: read phases and write phases alternate, readers join a
//! read phase with one atomic add, and the last reader out of a phase hands
//! it to a waiting writer through a futex of its own. The default kind
//! prefers readers: while readers hold it, new readers join even with a
//! writer waiting. `PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP` holds new
//! readers back once a writer waits. Its words are private to glibc, so
//! contend cannot count its spins, waits or wakes; the futex tracepoint
//! counters still see the syscalls.
//!
//! Known failure modes: the reader-preferring kind starves writers under a
//! steady read load; the writer-preferring kind turns every write into a
//! barrier that drains the readers; both go to the kernel soon after
//! finding the lock taken.

use crate::sys::pthread_rwlock::RwLock;
use crate::{Caps, LockConfig, LockStats, RawLock, RawRwLock, TryLock};

/// glibc's rwlock, writer-preferring when `WRITERS`; use the aliases.
pub struct PthreadRwLock<const WRITERS: bool> {
    inner: RwLock,
}

/// glibc's default rwlock (prefers readers).
pub type PthreadRw = PthreadRwLock<false>;
/// glibc's `PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP` rwlock.
pub type PthreadRwWriter = PthreadRwLock<true>;

// SAFETY: pthread_rwlock_wrlock/unlock give exclusion with the ordering
// POSIX 4.12 specifies.
unsafe impl<const WRITERS: bool> RawLock for PthreadRwLock<WRITERS> {
    type Node = ();
    const CAPS: Caps = Caps { try_lock: true, rw: true, ..Caps::PLAIN };

    fn new(_config: &LockConfig) -> Self {
        Self { inner: RwLock::new(WRITERS) }
    }

    #[inline]
    fn lock(&self, _node: &(), _stats: &mut LockStats) {
        self.inner.write();
    }

    #[inline]
    unsafe fn unlock(&self, _node: &(), _stats: &mut LockStats) {
        // SAFETY: the caller holds the lock (RawLock::unlock's contract).
        unsafe { self.inner.unlock() }
    }
}

// SAFETY: pthread_rwlock_rdlock excludes writers until the matching unlock.
unsafe impl<const WRITERS: bool> RawRwLock for PthreadRwLock<WRITERS> {
    #[inline]
    fn lock_shared(&self, _node: &(), _stats: &mut LockStats) {
        self.inner.read();
    }

    #[inline]
    unsafe fn unlock_shared(&self, _node: &(), _stats: &mut LockStats) {
        // SAFETY: the caller holds the lock shared (this method's contract).
        unsafe { self.inner.unlock() }
    }
}

// SAFETY: a successful pthread_rwlock_trywrlock is a write acquisition.
unsafe impl<const WRITERS: bool> TryLock for PthreadRwLock<WRITERS> {
    #[inline]
    fn try_lock(&self, _node: &(), _stats: &mut LockStats) -> bool {
        self.inner.try_write()
    }
}
