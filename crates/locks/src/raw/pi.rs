//! `pi`: the kernel-side lock, FUTEX_LOCK_PI / FUTEX_UNLOCK_PI.
//!
//! | word | meaning |
//! |------|---------|
//! | 0 | unlocked |
//! | TID | locked by thread TID, no waiters in the kernel |
//! | TID \| FUTEX_WAITERS | locked, waiters queued on the kernel's rt_mutex |
//!
//! Origin: Ingo Molnar's priority-inheritance futexes (Linux 2.6.18). The
//! uncontended paths are a user-space CAS 0 -> TID and TID -> 0; anything
//! else goes to the kernel, whose rt_mutex queues waiters in priority order
//! and spins while the owner is running on a CPU (the adaptive spinning the
//! FUTEX_LOCK RFC asked for, which landed this way).
//!
//! Known failure mode: every contended lock and unlock is a syscall, and
//! ownership is handed to the top waiter, so throughput under contention is
//! bounded by the kernel round trip; in exchange the owner inherits the
//! priority of the waiters.

use crate::primitive::{AtomicU32, Ordering};
use crate::sys::{futex_pi, tid};
use crate::{Caps, LockConfig, LockStats, RawLock, TryLock};

/// A PI futex; see the module docs. `SHARED`: in memory shared between
/// processes (the kernel then keys it on the page, not the address space).
pub struct PiFutex<const SHARED: bool = false> {
    word: AtomicU32,
}

/// A PI futex for worker processes.
pub type SharedPiFutex = PiFutex<true>;

// SAFETY: the word holds TIDs, which are global; the operations are the
// shared ones.
unsafe impl crate::ProcessShared for SharedPiFutex {}

impl<const SHARED: bool> PiFutex<SHARED> {
    /// The raw word, for diagnostics.
    pub fn word(&self) -> u32 {
        self.word.load(Ordering::Relaxed)
    }

    #[inline]
    fn fast_lock(&self, me: u32) -> bool {
        self.word.compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed).is_ok()
    }
}

// SAFETY: the word holds the owner's TID from a successful CAS or from the
// kernel's FUTEX_LOCK_PI until the owner's CAS back to 0 or FUTEX_UNLOCK_PI;
// the kernel's rt_mutex gives the ordering on the slow paths.
unsafe impl<const SHARED: bool> RawLock for PiFutex<SHARED> {
    type Node = ();
    const CAPS: Caps = Caps::OWN_WORD;

    fn new(_config: &LockConfig) -> Self {
        Self { word: AtomicU32::new(0) }
    }

    fn state_word(&self) -> Option<u32> {
        Some(self.word.load(Ordering::Relaxed))
    }

    #[inline]
    fn lock(&self, _node: &(), stats: &mut LockStats) {
        let me = tid::current();
        while !self.fast_lock(me) {
            stats.add_wait();
            if futex_pi::lock_pi(&self.word, SHARED) {
                return;
            }
        }
    }

    #[inline]
    unsafe fn unlock(&self, _node: &(), stats: &mut LockStats) {
        let me = tid::current();
        if self.word.compare_exchange(me, 0, Ordering::Release, Ordering::Relaxed).is_err() {
            // FUTEX_WAITERS is set: the kernel picks the next owner.
            stats.add_wake();
            futex_pi::unlock_pi(&self.word, SHARED);
        }
    }
}

// SAFETY: success means the word now holds our TID, as after `lock`.
unsafe impl<const SHARED: bool> TryLock for PiFutex<SHARED> {
    #[inline]
    fn try_lock(&self, _node: &(), _stats: &mut LockStats) -> bool {
        self.fast_lock(tid::current())
            || (self.word() & libc::FUTEX_TID_MASK == 0 && futex_pi::trylock_pi(&self.word, SHARED))
    }
}
