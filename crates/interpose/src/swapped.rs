//! A swapped lock inside a `pthread_mutex_t`: the lock lives in the first
//! [`SLOT_BYTES`](locks::in_mutex::SLOT_BYTES) bytes, and a lock with a
//! node parks the holder's node at [`NODE_OFFSET`]. Each function is
//! generic over the lock and monomorphized per lock by `mutex.rs`, so no
//! dynamic dispatch sits between the program and the algorithm.

use libc::{c_int, pthread_mutex_t, timespec};
use locks::in_mutex::{InMutex, Pooled};
use locks::LockStats;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Where the holder's node is parked: glibc's `__list`, used only by
/// robust mutexes, which are never swapped.
pub const NODE_OFFSET: usize = 24;

/// The lock in `m`, and its parking place.
///
/// # Safety
/// `m` points at a live `pthread_mutex_t` that holds an `L` (swappable
/// kind, zeroed or initialized by this library).
#[inline(always)]
unsafe fn parts<'a, L>(m: *mut pthread_mutex_t) -> (&'a L, &'a AtomicUsize) {
    // SAFETY: the caller's contract; `in_mutex::fits` checked that `L`
    // fits before offset 16 with alignment <= 8, and the parking place is
    // 8-aligned inside the 40 bytes of any pthread_mutex_t.
    unsafe { (&*(m as *const L), &*((m as *const u8).add(NODE_OFFSET) as *const AtomicUsize)) }
}

/// The node the holder parked (a dangling pointer for `()` nodes).
#[inline(always)]
fn parked<N: Pooled>(park: &AtomicUsize) -> *const N {
    if N::PARKED {
        park.load(Ordering::Relaxed) as *const N
    } else {
        std::ptr::NonNull::dangling().as_ptr()
    }
}

/// Locks.
///
/// # Safety
/// As [`parts`].
#[inline(always)]
pub unsafe fn lock<L: InMutex>(m: *mut pthread_mutex_t) {
    // SAFETY: the caller's contract.
    let (l, park) = unsafe { parts::<L>(m) };
    let node = L::Node::take(m as usize);
    // SAFETY: `take` returned a node this thread owns until `give`.
    l.lock(unsafe { &*node }, &mut LockStats::default());
    if L::Node::PARKED {
        park.store(node as usize, Ordering::Relaxed);
    }
}

/// Tries to lock; true if it did.
///
/// # Safety
/// As [`parts`].
#[inline(always)]
pub unsafe fn try_lock<L: InMutex>(m: *mut pthread_mutex_t) -> bool {
    // SAFETY: the caller's contract.
    let (l, park) = unsafe { parts::<L>(m) };
    let node = L::Node::take(m as usize);
    // SAFETY: as in `lock`.
    if l.try_lock(unsafe { &*node }, &mut LockStats::default()) {
        if L::Node::PARKED {
            park.store(node as usize, Ordering::Relaxed);
        }
        true
    } else {
        // SAFETY: taken just above, not used by the lock.
        unsafe { L::Node::give(node) };
        false
    }
}

/// Unlocks.
///
/// # Safety
/// As [`parts`], and the calling thread holds the lock (POSIX leaves the
/// unlock of a normal mutex by another thread undefined; here it would
/// give the node back to the wrong thread's cache).
#[inline(always)]
pub unsafe fn unlock<L: InMutex>(m: *mut pthread_mutex_t) {
    // SAFETY: the caller's contract.
    let (l, park) = unsafe { parts::<L>(m) };
    let node = parked::<L::Node>(park);
    // SAFETY: the holder parked `node` when it locked; read before the
    // unlock, after which the next holder may park its own.
    unsafe {
        l.unlock(&*node, &mut LockStats::default());
        L::Node::give(node);
    }
}

/// pthread_mutex_timedlock for a lock with no timed wait: try, then sleep
/// from 1 µs doubling to 1 ms, until the deadline on `clock`. Correct
/// (it takes a free lock and gives up at the deadline), not fast; rare in
/// programs, and named in the docs.
///
/// # Safety
/// As [`parts`].
pub unsafe fn timed_lock<L: InMutex>(
    m: *mut pthread_mutex_t,
    clock: libc::clockid_t,
    deadline: &timespec,
) -> c_int {
    let mut nap_ns: i64 = 1_000;
    loop {
        // SAFETY: the caller's contract.
        if unsafe { try_lock::<L>(m) } {
            return 0;
        }
        if !(0..1_000_000_000).contains(&deadline.tv_nsec) {
            return libc::EINVAL;
        }
        let left = crate::clock::ns_until(clock, deadline);
        if left <= 0 {
            return libc::ETIMEDOUT;
        }
        crate::clock::nap(left.min(nap_ns));
        nap_ns = (nap_ns * 2).min(1_000_000);
    }
}

/// pthread_mutex_destroy: EBUSY if locked.
///
/// # Safety
/// As [`parts`].
pub unsafe fn destroy<L: InMutex>(m: *mut pthread_mutex_t) -> c_int {
    // SAFETY: the caller's contract.
    if unsafe { try_lock::<L>(m) } {
        // SAFETY: locked just above by this thread.
        unsafe { unlock::<L>(m) };
        0
    } else {
        libc::EBUSY
    }
}
