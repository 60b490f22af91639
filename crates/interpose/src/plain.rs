//! The plain lock and unlock of the process's swapped lock: addresses of
//! [`plain_lock`] and [`plain_unlock`] for its type, set when the mode is
//! decided (0 until then), so that the entry point of a plain process (no
//! profile, choice or delay) makes one indirect call straight into a small
//! function with the lock inlined, where a dispatch on the lock's number
//! would first jump through a table and then call.

use crate::{swapped, tally};
use libc::{c_int, pthread_mutex_t};
use locks::in_mutex::{InMutex, OnSwapped, Swap};
use std::sync::atomic::{AtomicUsize, Ordering};

static PLAIN_LOCK: AtomicUsize = AtomicUsize::new(0);
static PLAIN_UNLOCK: AtomicUsize = AtomicUsize::new(0);

/// A plain lock or unlock.
pub type Plain = unsafe extern "C" fn(*mut pthread_mutex_t) -> c_int;

/// Locks a mutex that holds `L`, and counts it.
///
/// # Safety
/// `m` is a live mutex of a swappable kind holding an `L`.
unsafe extern "C" fn plain_lock<L: InMutex>(m: *mut pthread_mutex_t) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { swapped::lock::<L>(m) };
    tally::swapped_holding(m as usize);
    0
}

/// Unlocks a mutex that holds `L`.
///
/// # Safety
/// As [`plain_lock`], and the caller holds it.
unsafe extern "C" fn plain_unlock<L: InMutex>(m: *mut pthread_mutex_t) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { swapped::unlock::<L>(m) };
    0
}

struct PlainOps;

impl OnSwapped for PlainOps {
    type Out = (usize, usize);

    fn run<L: InMutex>(self) -> (usize, usize) {
        (plain_lock::<L> as Plain as usize, plain_unlock::<L> as Plain as usize)
    }
}

/// Sets the plain lock and unlock for the process's lock (from
/// `mode::decide`, before the mode is stored).
pub fn set(swap: Swap) {
    if let Some((lock, unlock)) = swap.dispatch(PlainOps) {
        PLAIN_LOCK.store(lock, Ordering::Relaxed);
        PLAIN_UNLOCK.store(unlock, Ordering::Relaxed);
    }
}

/// The plain function at `f`, if set.
#[inline(always)]
fn get(f: &AtomicUsize) -> Option<Plain> {
    match f.load(Ordering::Relaxed) {
        0 => None,
        // SAFETY: only `set` stores, the address of a `Plain`.
        a => Some(unsafe { std::mem::transmute::<usize, Plain>(a) }),
    }
}

/// The plain lock, once set.
#[inline(always)]
pub fn lock() -> Option<Plain> {
    get(&PLAIN_LOCK)
}

/// The plain unlock, once set.
#[inline(always)]
pub fn unlock() -> Option<Plain> {
    get(&PLAIN_UNLOCK)
}
