//! `flock`: BSD flock(2) with LOCK_EX on the lock file.
//!
//! | state | meaning |
//! |------|---------|
//! | no lock on the file | unlocked |
//! | LOCK_EX held by one open file description | locked |
//!
//! Origin: 4.2BSD; lockscale's first lock. The lock belongs to the open file
//! description, so threads with their own descriptions exclude each other,
//! as processes do. Every lock and unlock is a syscall; waiters sleep in
//! the kernel's file-lock wait queue.
//!
//! Known failure mode: the kernel wakes every waiter on unlock (a thundering
//! herd on the file's lock list), and the global file-lock bookkeeping
//! becomes a point of contention with many processes.

use super::file_lock::{FileLock, FileLockKind, FILE_CAPS};
use crate::sys::lockfile;
use crate::Caps;

/// flock(2) calls.
pub struct FlockKind;

impl FileLockKind for FlockKind {
    const CAPS: Caps = FILE_CAPS;

    fn lock(fd: libc::c_int) {
        lockfile::flock(fd, libc::LOCK_EX).unwrap_or_else(|e| panic!("flock(LOCK_EX) failed: {e}"));
    }

    fn unlock(fd: libc::c_int) {
        lockfile::flock(fd, libc::LOCK_UN).unwrap_or_else(|e| panic!("flock(LOCK_UN) failed: {e}"));
    }

    fn try_lock(fd: libc::c_int) -> bool {
        lockfile::try_flock(fd)
    }
}

/// flock(2) on the run's lock file.
pub type Flock = FileLock<FlockKind>;
