//! `backoff`: TTAS with bounded exponential backoff.
//!
//! | word | meaning |
//! |------|---------|
//! | false | unlocked |
//! | true | locked |
//!
//! Origin: Anderson (1990), after Ethernet's backoff: a waiter that loses
//! the exchange waits 1, 2, 4, ... pause instructions (capped at 1024)
//! before trying again, so fewer waiters rush the line at each unlock.
//!
//! Known failure mode: the backoff that calms the rush also leaves the lock
//! idle while everyone backs off (lower throughput at low contention), and
//! it favours threads that happen to be in a short backoff: unfair.

use super::Ttas;
use crate::primitive::spin_loop;
use crate::{Caps, LockConfig, LockStats, RawLock, TryLock};

/// Longest backoff, in pause instructions.
const MAX_BACKOFF: u32 = 1024;

/// TTAS with exponential backoff; see the module docs.
#[derive(Debug, Default)]
pub struct Backoff {
    inner: Ttas,
}

// SAFETY: exclusion comes from the inner TTAS, whose exchange is the only
// way in.
unsafe impl RawLock for Backoff {
    type Node = ();
    const CAPS: Caps = Ttas::CAPS;

    fn new(_config: &LockConfig) -> Self {
        Self::default()
    }

    #[inline]
    fn lock(&self, _node: &(), stats: &mut LockStats) {
        let mut delay = 1;
        loop {
            while self.inner.is_locked() {
                stats.spins += 1;
                spin_loop();
            }
            if self.inner.attempt() {
                return;
            }
            for _ in 0..delay {
                spin_loop();
            }
            stats.spins += u64::from(delay);
            delay = (delay * 2).min(MAX_BACKOFF);
        }
    }

    #[inline]
    unsafe fn unlock(&self, _node: &(), _stats: &mut LockStats) {
        self.inner.release();
    }
}

// SAFETY: one exchange, as in `lock`.
unsafe impl TryLock for Backoff {
    #[inline]
    fn try_lock(&self, _node: &(), _stats: &mut LockStats) -> bool {
        self.inner.attempt()
    }
}

// SAFETY: plain atomics with no pointers; atomics in shared memory work
// across processes as they do across threads.
unsafe impl crate::ProcessShared for Backoff {}
