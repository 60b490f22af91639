//! The sleeping half of Drepper's mutex 3, shared by every lock built on it
//! (`futex`, `futex2`, `adaptive`): how a waiter sleeps and how an unlock
//! wakes. The word is 0 unlocked, 1 locked, 2 locked with sleepers possible.

use crate::primitive::{AtomicU32, Ordering};
use crate::sys::Futex;
use crate::LockStats;

pub(crate) const UNLOCKED: u32 = 0;
pub(crate) const LOCKED: u32 = 1;
pub(crate) const CONTENDED: u32 = 2;

/// CAS 0 -> 1: the fast path.
#[inline]
pub(crate) fn try_acquire(word: &AtomicU32) -> bool {
    word.compare_exchange(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed).is_ok()
}

/// Marks the lock contended and sleeps until the exchange finds it free.
/// The thread leaves owning the lock in state 2, so its unlock wakes the
/// next sleeper (possibly a spurious wake, the protocol's known cost).
#[inline]
pub(crate) fn sleep_until_acquired<F: Futex>(word: &AtomicU32, stats: &mut LockStats) {
    let mut c = word.swap(CONTENDED, Ordering::Acquire);
    while c != UNLOCKED {
        stats.add_wait();
        F::wait(word, CONTENDED);
        c = word.swap(CONTENDED, Ordering::Acquire);
    }
}

/// Releases with one exchange to 0, waking one sleeper if the old state was
/// 2. Drepper's paper decrements and then stores 0 when the old value was 2;
/// glibc's lll_unlock and Rust's std mutex use the exchange, as we do: one
/// read-modify-write on every unlock instead of an RMW plus a store on the
/// contended path, and no window in which a releasing lock reads "1". (It
/// also keeps the loom model exact: loom 0.7 can let an RMW read a value
/// older than a plain store that happens-before it, and reported a
/// deadlock for the decrement-and-store form that C11 does not allow.)
#[inline]
pub(crate) fn release<F: Futex>(word: &AtomicU32, stats: &mut LockStats) {
    if word.swap(UNLOCKED, Ordering::Release) == CONTENDED {
        stats.add_wake();
        F::wake(word, 1);
    }
}
