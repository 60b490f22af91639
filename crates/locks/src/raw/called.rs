//! `adaptive-called`: contend's adaptive lock called through a function
//! pointer instead of inlined into the measured loop.
//!
//! | word | meaning |
//! |------|---------|
//! | as `adaptive` | the same lock, the same node |
//!
//! Origin: a measurement baseline. `contend lock --lock adaptive`
//! monomorphizes the lock into its loop, while a program reaches a
//! swapped lock through a call (the PLT, then the interposer); this is the
//! same lock behind an indirect call that the compiler cannot see through,
//! so `scripts/experiments/interposer-cost.py` can split a swapped lock's
//! cost into the call itself and what the interposer adds beyond it.

use crate::{Caps, LockConfig, LockStats, RawLock, TryLock};

type Op<L> = unsafe extern "C" fn(&L, &<L as RawLock>::Node, &mut LockStats);

#[inline(never)]
unsafe extern "C" fn lock_it<L: RawLock>(l: &L, node: &L::Node, stats: &mut LockStats) {
    l.lock(node, stats)
}

#[inline(never)]
unsafe extern "C" fn unlock_it<L: RawLock>(l: &L, node: &L::Node, stats: &mut LockStats) {
    // SAFETY: `Called::unlock`'s caller holds the lock.
    unsafe { l.unlock(node, stats) }
}

/// `L` behind indirect calls; see the module docs.
#[derive(Debug)]
pub struct Called<L> {
    inner: L,
}

// SAFETY: every operation is `L`'s, with its guarantees.
unsafe impl<L: RawLock> RawLock for Called<L> {
    type Node = L::Node;
    // Not offered as a --spinners axis: it is a baseline, run with the
    // lock's default policy.
    const CAPS: Caps = Caps { spinners: false, ..L::CAPS };

    fn new(config: &LockConfig) -> Self {
        Called { inner: L::new(config) }
    }

    fn try_new(config: &LockConfig) -> Result<Self, String> {
        L::try_new(config).map(|inner| Called { inner })
    }

    #[inline(always)]
    fn lock(&self, node: &L::Node, stats: &mut LockStats) {
        // black_box: the pointer is opaque, so the call stays a call.
        let f: Op<L> = std::hint::black_box(lock_it::<L>);
        // SAFETY: `lock_it` only locks.
        unsafe { f(&self.inner, node, stats) }
    }

    fn state_word(&self) -> Option<u32> {
        self.inner.state_word()
    }

    #[inline(always)]
    unsafe fn unlock(&self, node: &L::Node, stats: &mut LockStats) {
        let f: Op<L> = std::hint::black_box(unlock_it::<L>);
        // SAFETY: the caller holds the lock (unlock's contract).
        unsafe { f(&self.inner, node, stats) }
    }
}

// SAFETY: `L`'s try-lock.
unsafe impl<L: RawLock + TryLock> TryLock for Called<L> {
    #[inline(always)]
    fn try_lock(&self, node: &L::Node, stats: &mut LockStats) -> bool {
        self.inner.try_lock(node, stats)
    }
}
