//! The plain lock and unlock of the process's swapped lock: addresses of
//! [`plain_lock`] and [`plain_unlock`] for its type, set when the mode is
//! decided to be a plain swap (no profile, choice or delay; 0 until then,
//! and in every other mode), so that the entry point of a plain process
//! makes one indirect call straight into a small
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

/// Counts an acquisition of a mutex that holds `L`, then locks it.
///
/// The count and the note of what this thread holds come first: a lock
/// of the swapped lock cannot fail, and whatever runs between the
/// acquisition and the return to the program lengthens the critical
/// section, for every waiter. Measured on spin2.c of the what-if
/// validation (two threads, short holds; tas swapped in against the
/// same tas compiled in, 8 interleaved rounds): 278 ms against 248 with
/// the count after the acquisition, 253 with it before.
///
/// # Safety
/// `m` is a live mutex of a swappable kind holding an `L`.
unsafe extern "C" fn plain_lock<L: InMutex>(m: *mut pthread_mutex_t) -> c_int {
    tally::swapped_holding(m as usize);
    // SAFETY: the caller's contract.
    unsafe { swapped::lock::<L>(m) };
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
/// `mode::decide`, before the mode is stored, in a plain process only: a
/// set unlock tells the unlock's short path that the process is one).
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
