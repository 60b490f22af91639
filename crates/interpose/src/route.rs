//! Where a lock or unlock goes: through the profile when the process
//! profiles, through the virtual speedup's accounts under one
//! (`speedup.rs`), straight to the mutex otherwise. Shared by the
//! exported entry points (lib.rs) and by this library's condition
//! variables (cond.rs), which re-take the mutex after a wait as the
//! program's lock call would.

use crate::mode::Mode;
use crate::{mutex, profile, speedup};
use libc::{c_int, pthread_mutex_t};

/// Locks `m`, profiled if the process profiles.
///
/// # Safety
/// `m` is a live, initialized mutex.
#[inline(always)]
pub(crate) unsafe fn lock_mutex(m: *mut pthread_mutex_t, site: usize, mode: Mode) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        if mode.profiling() {
            profile::lock(m, site, mode)
        } else if mode.speeding() {
            speeding_lock(m, mode)
        } else {
            mutex::acquire(m, mode)
        }
    }
}

/// A lock under a virtual speedup (`speedup.rs`): the debt is paid before,
/// and the acquisition tells whether the thread waited (a try first), so
/// that a wait inherits the releaser's debt.
///
/// # Safety
/// As [`lock_mutex`].
#[inline(never)]
unsafe fn speeding_lock(m: *mut pthread_mutex_t, mode: Mode) -> c_int {
    let nested = speedup::nest_begin(m);
    speedup::pay();
    // SAFETY: the caller's contract.
    let rc = unsafe { mutex::try_acquire(m, mode) };
    if rc != libc::EBUSY {
        if mutex::holds(rc) {
            speedup::acquired(m, None);
        } else {
            speedup::nest_end(nested);
        }
        return rc;
    }
    let since = speedup::blocking();
    // SAFETY: the caller's contract.
    let rc = unsafe { mutex::acquire(m, mode) };
    if mutex::holds(rc) {
        speedup::acquired(m, Some(since));
    } else {
        speedup::nest_end(nested);
    }
    rc
}

/// Unlocks `m` (at `site`), profiled if the process profiles.
///
/// # Safety
/// `m` is a live mutex the caller holds.
#[inline(always)]
pub(crate) unsafe fn unlock_mutex(m: *mut pthread_mutex_t, site: usize, mode: Mode) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        if mode.profiling() {
            profile::unlock(m, site, mode)
        } else if mode.speeding() {
            speedup::releasing(m, !mutex::none_asleep(m, mode));
            let rc = mutex::release(m, mode);
            speedup::pay();
            rc
        } else {
            mutex::release(m, mode)
        }
    }
}

/// pthread_mutex_unlock past the short path of lib.rs (a plain swapped
/// process's unlock of a mutex the thread took by the swapped lock): glibc's
/// mutex, a mutex of another kind, and every unlock of any other mode.
///
/// # Safety
/// The program's contract with pthread_mutex_unlock.
#[inline(never)]
pub(crate) unsafe extern "C" fn unlock_rest(m: *mut pthread_mutex_t, site: usize) -> c_int {
    let mode = crate::mode::current();
    // SAFETY: the caller's contract.
    unsafe {
        if mode.plain() {
            mutex::release_plain(m, mode)
        } else {
            unlock_any(m, site, mode)
        }
    }
}

/// The unlock of a process that profiles, chooses per mutex or delays:
/// out of line, so that the plain path keeps few registers.
///
/// # Safety
/// The program's contract with pthread_mutex_unlock.
#[inline(never)]
unsafe fn unlock_any(m: *mut pthread_mutex_t, site: usize, mode: Mode) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { unlock_mutex(m, site, mode) }
}
