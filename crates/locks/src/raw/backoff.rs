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

use super::ttas::{TtasWith, TtasWord, Waiting};
use crate::primitive::spin_loop;
use crate::LockStats;

/// Longest backoff, in pause instructions.
const MAX_BACKOFF: u32 = 1024;

/// Waits for the word to read unlocked, then, after each lost exchange,
/// backs off twice as long as the last time.
#[derive(Debug)]
pub struct ExponentialBackoff;

impl Waiting for ExponentialBackoff {
    #[inline]
    fn acquire(word: &TtasWord, stats: &mut LockStats) {
        let mut delay = 1;
        loop {
            while word.is_locked() {
                stats.add_spins(1);
                spin_loop();
            }
            if word.attempt() {
                return;
            }
            for _ in 0..delay {
                spin_loop();
            }
            stats.add_spins(u64::from(delay));
            delay = (delay * 2).min(MAX_BACKOFF);
        }
    }
}

/// TTAS with exponential backoff; see the module docs.
pub type Backoff = TtasWith<ExponentialBackoff>;
