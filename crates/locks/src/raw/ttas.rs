//! `ttas`: test-and-test-and-set spinlock.
//!
//! | word | meaning |
//! |------|---------|
//! | false | unlocked |
//! | true | locked |
//!
//! Origin: Rudolph and Segall (1984); analysed by Anderson (1990). Waiters
//! spin reading their cached copy of the line and try the exchange only when
//! it reads unlocked, so the line is not written while the lock is held.
//!
//! Known failure mode: at every unlock all waiters see the line change and
//! rush the exchange together (a burst of invalidations that grows with the
//! number of waiters); no fairness; a preempted owner strands the spinners.

use crate::primitive::{spin_loop, AtomicBool, Ordering};
use crate::{Caps, LockConfig, LockStats, RawLock, TryLock};

/// A test-and-test-and-set spinlock; see the module docs.
#[derive(Debug, Default)]
pub struct Ttas {
    locked: AtomicBool,
}

impl Ttas {
    /// One exchange attempt.
    #[inline]
    pub(crate) fn attempt(&self) -> bool {
        !self.locked.swap(true, Ordering::Acquire)
    }

    /// Whether the lock reads as held (a plain load, no write).
    #[inline]
    pub(crate) fn is_locked(&self) -> bool {
        self.locked.load(Ordering::Relaxed)
    }

    /// Releases.
    #[inline]
    pub(crate) fn release(&self) {
        self.locked.store(false, Ordering::Release);
    }
}

// SAFETY: only the thread whose swap returned false returns from `lock`; the
// swap is Acquire and the unlocking store Release.
unsafe impl RawLock for Ttas {
    type Node = ();
    const CAPS: Caps = Caps::OWN_WORD;

    fn new(_config: &LockConfig) -> Self {
        Self::default()
    }

    #[inline]
    fn lock(&self, _node: &(), stats: &mut LockStats) {
        while !self.attempt() {
            while self.is_locked() {
                stats.spins += 1;
                spin_loop();
            }
        }
    }

    #[inline]
    unsafe fn unlock(&self, _node: &(), _stats: &mut LockStats) {
        self.release();
    }
}

// SAFETY: one swap, as in `lock`.
unsafe impl TryLock for Ttas {
    #[inline]
    fn try_lock(&self, _node: &(), _stats: &mut LockStats) -> bool {
        self.attempt()
    }
}

// SAFETY: plain atomics with no pointers; atomics in shared memory work
// across processes as they do across threads.
unsafe impl crate::ProcessShared for Ttas {}
