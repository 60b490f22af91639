//! Where a lock or unlock goes: through the profile when the process
//! profiles, straight to the mutex otherwise. Shared by the exported entry
//! points (lib.rs) and by this library's condition variables (cond.rs),
//! which re-take the mutex after a wait as the program's lock call would.

use crate::mode::Mode;
use crate::{mutex, profile};
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
        } else {
            mutex::acquire(m, mode)
        }
    }
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
        } else {
            mutex::release(m, mode)
        }
    }
}
