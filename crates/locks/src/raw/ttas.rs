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
//!
//! The word and its protocol are shared with `backoff` and `yield`, which
//! differ only in how a waiter waits while the word reads locked: each is
//! a [`Waiting`] policy over [`TtasWith`].

use crate::primitive::{spin_loop, AtomicU32, Ordering};
use crate::{Caps, LockConfig, LockStats, RawLock, TryLock};
use std::marker::PhantomData;

/// How a TTAS waiter waits for the word to read unlocked.
pub trait Waiting: Send + Sync + 'static {
    /// Acquires `word`: read, wait, exchange, until the exchange wins.
    fn acquire(word: &TtasWord, stats: &mut LockStats);
}

/// The TTAS word: one flag, taken by an exchange.
#[derive(Debug, Default)]
pub struct TtasWord {
    locked: AtomicU32,
}

impl TtasWord {
    /// One exchange attempt.
    #[inline]
    pub fn attempt(&self) -> bool {
        self.locked.swap(1, Ordering::Acquire) == 0
    }

    /// Whether the lock reads as held (a plain load, no write).
    #[inline]
    pub fn is_locked(&self) -> bool {
        self.locked.load(Ordering::Relaxed) != 0
    }

    /// Releases.
    #[inline]
    pub fn release(&self) {
        self.locked.store(0, Ordering::Release);
    }
}

/// A TTAS lock whose waiters wait the `W` way; see the module docs.
#[derive(Debug)]
pub struct TtasWith<W> {
    word: TtasWord,
    waiting: PhantomData<W>,
}

impl<W> Default for TtasWith<W> {
    fn default() -> Self {
        Self { word: TtasWord::default(), waiting: PhantomData }
    }
}

/// Spin reading the cached line until it reads unlocked.
#[derive(Debug)]
pub struct Spin;

impl Waiting for Spin {
    #[inline]
    fn acquire(word: &TtasWord, stats: &mut LockStats) {
        while !word.attempt() {
            while word.is_locked() {
                stats.add_spins(1);
                spin_loop();
            }
        }
    }
}

/// A test-and-test-and-set spinlock; see the module docs.
pub type Ttas = TtasWith<Spin>;

// SAFETY: only the thread whose swap returned false returns from `lock`
// (every policy ends in a won `attempt`); the swap is Acquire and the
// unlocking store Release.
unsafe impl<W: Waiting> RawLock for TtasWith<W> {
    type Node = ();
    const CAPS: Caps = Caps::OWN_WORD;

    fn new(_config: &LockConfig) -> Self {
        Self::default()
    }

    #[inline]
    fn lock(&self, _node: &(), stats: &mut LockStats) {
        W::acquire(&self.word, stats);
    }

    #[inline]
    unsafe fn unlock(&self, _node: &(), _stats: &mut LockStats) {
        self.word.release();
    }
}

// SAFETY: one swap, as in `lock`.
unsafe impl<W: Waiting> TryLock for TtasWith<W> {
    #[inline]
    fn try_lock(&self, _node: &(), _stats: &mut LockStats) -> bool {
        self.word.attempt()
    }
}

// SAFETY: plain atomics with no pointers; atomics in shared memory work
// across processes as they do across threads.
unsafe impl<W: Waiting> crate::ProcessShared for TtasWith<W> {}
