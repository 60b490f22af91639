//! `fcntl`: open-file-description record locks (F_OFD_SETLKW) on the whole
//! lock file.
//!
//! | state | meaning |
//! |------|---------|
//! | no F_WRLCK on the file | unlocked |
//! | F_WRLCK held by one open file description | locked |
//!
//! Origin: Jeff Layton's OFD locks (Linux 3.15), POSIX record locks fixed to
//! belong to the open file description instead of the process, so they work
//! between threads; the second lock lockscale compared.
//!
//! Known failure mode: every operation is a syscall that walks the file's
//! lock list (and checks for deadlock cycles) under a spinlock; waiters are
//! woken together on unlock.

use super::file_lock::{FileLock, FileLockKind, FILE_CAPS};
use crate::sys::lockfile;
use crate::Caps;

/// fcntl(F_OFD_SETLK[W]) calls.
pub struct OfdKind;

impl FileLockKind for OfdKind {
    const CAPS: Caps = FILE_CAPS;

    fn lock(fd: libc::c_int) {
        lockfile::ofd(fd, libc::F_OFD_SETLKW, libc::F_WRLCK)
            .unwrap_or_else(|e| panic!("F_OFD_SETLKW failed: {e}"));
    }

    fn unlock(fd: libc::c_int) {
        lockfile::ofd(fd, libc::F_OFD_SETLK, libc::F_UNLCK)
            .unwrap_or_else(|e| panic!("F_OFD_SETLK(F_UNLCK) failed: {e}"));
    }

    fn try_lock(fd: libc::c_int) -> bool {
        lockfile::try_ofd(fd)
    }
}

/// OFD locks on the run's lock file.
pub type OfdLock = FileLock<OfdKind>;
