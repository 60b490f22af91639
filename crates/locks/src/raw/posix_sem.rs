//! `posix-sem`: an unnamed POSIX semaphore initialised to 1, used as a lock.
//!
//! | value | meaning |
//! |------|---------|
//! | 1 | unlocked |
//! | 0 | locked |
//!
//! Origin: Dijkstra's binary semaphore; glibc's `sem_t` is a futex with a
//! waiter count (`sem_wait` spins not at all, `sem_post` wakes only when
//! the count says someone sleeps).
//!
//! Known failure mode: a semaphore has no owner, so nothing stops a thread
//! other than the "holder" from posting, and no priority inheritance is
//! possible; contended performance is that of a non-spinning futex lock.

use crate::sys::posix_sem::Semaphore;
use crate::{Caps, LockConfig, LockStats, RawLock, TryLock};

/// A POSIX semaphore used as a lock, `SHARED` between processes or not.
pub struct PosixSem<const SHARED: bool = false> {
    sem: Semaphore,
}

/// A process-shared (`pshared`) semaphore, for worker processes.
pub type SharedPosixSem = PosixSem<true>;

// SAFETY: sem_init with pshared = 1 is specified to work in shared memory;
// the sem_t is stored inline.
unsafe impl crate::ProcessShared for SharedPosixSem {}

// SAFETY: a semaphore of value 1 admits one thread between wait and post;
// sem_wait/sem_post are full memory barriers in glibc.
unsafe impl<const SHARED: bool> RawLock for PosixSem<SHARED> {
    type Node = ();
    const CAPS: Caps = Caps { try_lock: true, process_shared: true, ..Caps::PLAIN };

    fn new(_config: &LockConfig) -> Self {
        Self { sem: Semaphore::new(1, SHARED) }
    }

    #[inline]
    fn lock(&self, _node: &(), _stats: &mut LockStats) {
        self.sem.wait();
    }

    #[inline]
    unsafe fn unlock(&self, _node: &(), _stats: &mut LockStats) {
        self.sem.post();
    }
}

// SAFETY: sem_trywait success is a wait.
unsafe impl<const SHARED: bool> TryLock for PosixSem<SHARED> {
    #[inline]
    fn try_lock(&self, _node: &(), _stats: &mut LockStats) -> bool {
        self.sem.try_wait()
    }
}
