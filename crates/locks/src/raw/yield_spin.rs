//! `yield`: TTAS that calls sched_yield when it finds the lock taken.
//!
//! | word | meaning |
//! |------|---------|
//! | false | unlocked |
//! | true | locked |
//!
//! Origin: the "sched_yield userspace spinlock" the FUTEX_LOCK RFC
//! discussion suggested comparing adaptive futexes against: instead of
//! burning its slice, a waiter offers the CPU to another runnable thread,
//! hopefully the preempted owner.
//!
//! Known failure mode: sched_yield promises nothing (under CFS/EEVDF it may
//! return at once or run an unrelated thread), every failed attempt is a
//! syscall, and with more CPUs than threads it degenerates into a
//! syscall-heavy spin.

use super::ttas::{TtasWith, TtasWord, Waiting};
use crate::LockStats;

/// Yields the CPU each time the word reads locked.
#[derive(Debug)]
pub struct Yield;

impl Waiting for Yield {
    #[inline]
    fn acquire(word: &TtasWord, stats: &mut LockStats) {
        while !word.attempt() {
            while word.is_locked() {
                stats.add_spins(1);
                yield_now();
            }
        }
    }
}

/// TTAS that yields the CPU while the lock is taken; see the module docs.
pub type YieldSpin = TtasWith<Yield>;

#[cfg(not(loom))]
fn yield_now() {
    // std's yield_now is sched_yield(2) on Linux.
    std::thread::yield_now();
}

#[cfg(loom)]
fn yield_now() {
    loom::thread::yield_now();
}
