//! Where an adaptive lock keeps its two words and its budgets.
//!
//! [`Padded`] is the lock `contend lock` measures: the word and the bell
//! on cache lines of their own, the policy and the time budgets beside
//! them (read without a global lookup on the slow paths). [`Packed`] is the
//! same protocol in 8 bytes that are all zero when unlocked, so it fits in
//! a `pthread_mutex_t` and `PTHREAD_MUTEX_INITIALIZER` is a valid lock
//! (the interposer of `contend run` needs both): the policy is fixed at one
//! spinner, and the budgets are the process's, read from [`budgets`] when a
//! slow path needs them.

use super::word::SPINNERS;
#[cfg(not(loom))]
use super::{budgets, Budgets};
use crate::primitive::AtomicU32;
use crate::Spinners;
use crossbeam_utils::CachePadded;

/// An adaptive lock's storage.
pub trait Layout: Send + Sync + Sized + 'static {
    /// An unlocked lock with the waiting policy `spinners`.
    fn new(spinners: Spinners) -> Self;
    /// The lock word.
    fn word(&self) -> &AtomicU32;
    /// What sleepers sleep on.
    fn bell(&self) -> &AtomicU32;
    /// How many spinners the policy allows.
    fn max_spinners(&self) -> u32;
    /// How long a spinner waits before it asks for its turn, ns.
    fn turn_ns(&self) -> u64;
    /// How long a spinner waits for its turn before it sleeps, ns.
    fn patience_ns(&self) -> u64;
    /// How long a thread stays active before it makes way, ns.
    #[cfg(not(loom))]
    fn quantum_ns(&self) -> u64;
}

fn max_spinners(spinners: Spinners) -> u32 {
    match spinners {
        Spinners::None => 0,
        Spinners::One => 1,
        Spinners::Many => SPINNERS >> 9,
    }
}

/// The word and the bell on their own cache lines, with the policy and
/// the budgets.
pub struct Padded {
    word: CachePadded<AtomicU32>,
    /// Sleeping on the word itself fails whenever it changed since the
    /// sleeper read it, which with an owner cycling every 20 ns is nearly
    /// always, so a woken sleeper that found nothing for it could not get
    /// back to sleep: it looped on failing waits (hundreds per wake,
    /// measured) and barged in. The bell changes only when a wake is meant.
    bell: CachePadded<AtomicU32>,
    max_spinners: u32,
    turn_ns: u64,
    patience_ns: u64,
    #[cfg(not(loom))]
    quantum_ns: u64,
}

impl Layout for Padded {
    fn new(spinners: Spinners) -> Self {
        #[cfg(not(loom))]
        let Budgets { turn_ns, patience_ns, quantum_ns, .. } = budgets();
        // Under loom the stopwatch ticks once per look at the word.
        #[cfg(loom)]
        let (turn_ns, patience_ns) = (1, 2);
        Padded {
            word: CachePadded::new(AtomicU32::new(super::word::UNLOCKED)),
            bell: CachePadded::new(AtomicU32::new(0)),
            max_spinners: max_spinners(spinners),
            turn_ns,
            patience_ns,
            #[cfg(not(loom))]
            quantum_ns,
        }
    }
    #[inline]
    fn word(&self) -> &AtomicU32 {
        &self.word
    }
    #[inline]
    fn bell(&self) -> &AtomicU32 {
        &self.bell
    }
    #[inline]
    fn max_spinners(&self) -> u32 {
        self.max_spinners
    }
    #[inline]
    fn turn_ns(&self) -> u64 {
        self.turn_ns
    }
    #[inline]
    fn patience_ns(&self) -> u64 {
        self.patience_ns
    }
    #[cfg(not(loom))]
    #[inline]
    fn quantum_ns(&self) -> u64 {
        self.quantum_ns
    }
}

/// The word and the bell side by side, nothing else: 8 bytes, zero when
/// unlocked. One spinner at a time (the default policy).
#[cfg(not(loom))]
#[repr(C)]
pub struct Packed {
    word: AtomicU32,
    bell: AtomicU32,
}

#[cfg(not(loom))]
impl Layout for Packed {
    fn new(_spinners: Spinners) -> Self {
        Packed { word: AtomicU32::new(super::word::UNLOCKED), bell: AtomicU32::new(0) }
    }
    #[inline]
    fn word(&self) -> &AtomicU32 {
        &self.word
    }
    #[inline]
    fn bell(&self) -> &AtomicU32 {
        &self.bell
    }
    #[inline]
    fn max_spinners(&self) -> u32 {
        1
    }
    fn turn_ns(&self) -> u64 {
        budgets().turn_ns
    }
    fn patience_ns(&self) -> u64 {
        budgets().patience_ns
    }
    fn quantum_ns(&self) -> u64 {
        budgets().quantum_ns
    }
}
