//! `lockf`: classic POSIX record locks (lockf(3), F_SETLKW) on the lock file.
//!
//! | state | meaning |
//! |------|---------|
//! | no lock on the file | unlocked |
//! | F_LOCK held by one process | locked |
//!
//! Origin: System V / POSIX.1. The lock belongs to the *process*: two
//! threads of one process never exclude each other, so contend refuses it
//! with threads and runs it with `--procs`.
//!
//! Known failure mode: besides the per-process semantics (which make it
//! useless inside a multi-threaded program), closing *any* descriptor of
//! the file releases the process's locks on it, and every operation is a
//! syscall with deadlock detection.

use super::file_lock::{FileLock, FileLockKind};
use crate::sys::lockfile;
use crate::Caps;

/// lockf(3) calls.
pub struct LockfKind;

impl FileLockKind for LockfKind {
    const CAPS: Caps = Caps {
        // Per process: a try from a second thread would succeed, so it has
        // no thread-level try-lock to offer.
        try_lock: false,
        process_shared: true,
        needs_file: true,
        threads: false,
        released_on_death: true,
        ..Caps::PLAIN
    };

    fn lock(fd: libc::c_int) {
        lockfile::lockf(fd, libc::F_LOCK).unwrap_or_else(|e| panic!("lockf(F_LOCK) failed: {e}"));
    }

    fn unlock(fd: libc::c_int) {
        lockfile::lockf(fd, libc::F_ULOCK).unwrap_or_else(|e| panic!("lockf(F_ULOCK) failed: {e}"));
    }

    fn try_lock(fd: libc::c_int) -> bool {
        lockfile::lockf(fd, libc::F_TLOCK).is_ok()
    }
}

/// lockf(3) on the run's lock file.
pub type Lockf = FileLock<LockfKind>;
