//! `lost-wake`: TEST ONLY. A handoff lock that loses its wake-up, kept to
//! prove that contend's stall watchdog diagnoses a hung lock instead of
//! hanging with it. Never use it to measure anything.
//!
//! | word | meaning |
//! |------|---------|
//! | 0 | unlocked |
//! | 1 | locked, no sleepers |
//! | 2 | locked, sleepers possible; on unlock "handed off" to a sleeper |
//!
//! Origin: the bug class of direct-handoff locks (the unlocker passes
//! ownership to a sleeper instead of releasing) combined with a lost
//! FUTEX_WAKE: here the unlock of a contended lock leaves the word at 2 for
//! the sleeper it should wake, and never wakes it.
//!
//! Failure mode (the point): as soon as anyone sleeps, the lock belongs to
//! a thread that will never run; every worker ends up asleep on it.

use super::mutex3::{self, CONTENDED, UNLOCKED};
use crate::primitive::{AtomicU32, Ordering};
use crate::sys::futex::PrivateFutex;
use crate::{Caps, LockConfig, LockStats, RawLock};

/// The deliberately broken lock; see the module docs.
#[derive(Debug, Default)]
pub struct LostWake {
    word: AtomicU32,
}

// SAFETY: it still excludes (the word moves 0 -> 1 or 0 -> 2 only by the
// acquirer and back to 0 only by the owner); what it loses is liveness.
unsafe impl RawLock for LostWake {
    type Node = ();
    const CAPS: Caps = Caps { counters: true, ..Caps::PLAIN };

    fn new(_config: &LockConfig) -> Self {
        Self::default()
    }

    fn lock(&self, _node: &(), stats: &mut LockStats) {
        if !mutex3::try_acquire(&self.word) {
            mutex3::sleep_until_acquired::<PrivateFutex>(&self.word, stats);
        }
    }

    unsafe fn unlock(&self, _node: &(), _stats: &mut LockStats) {
        if self.word.load(Ordering::Relaxed) == CONTENDED {
            // "Hand off" to a sleeper and forget to wake it: the bug.
            return;
        }
        self.word.store(UNLOCKED, Ordering::Release);
    }

    fn state_word(&self) -> Option<u32> {
        Some(self.word.load(Ordering::Relaxed))
    }
}
