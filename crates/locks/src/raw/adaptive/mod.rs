//! `adaptive`: a futex mutex that avoids waking sleepers in the common
//! case, with the FUTEX_LOCK RFC's three waiting policies (`--spinners
//! none|one|many`). The measurements behind each rule, and the variants
//! tried and dropped, are in docs/design/adaptive.md.
//!
//! One 32-bit word holds everything the protocol decides on ([`word`]):
//!
//! | bits | meaning |
//! |------|---------|
//! | 0-1 | state: 0 unlocked, 1 locked, 2 handed to a sleeper, 3 reserved for a waiter |
//! | 2 | WAKING: a sleeper is awake (woken, or not yet asleep) and will come |
//! | 3 | WANT: a spinner has waited its turn |
//! | 4 | ROTATING: a sleeper was woken to take the next spinner slot |
//! | 5-8 | ticks: unlocks of a word with counts in it, modulo 16 |
//! | 9-15 | spinners (at most 127) |
//! | 16-31 | sleepers: threads in the sleeping loop, asleep or about to be |
//!
//! The rules (waiting in [`wait`], the owner's side in [`unlock`]):
//!
//! 1. **One CAS each way**, contended or not: the counts live in the word,
//!    and the thread's node keeps the word as it last left it (less the
//!    state bits) as the guess for its next CAS.
//! 2. **The owner runs batches.** A spinner waits its turn for twice the
//!    wake cost measured at start-up (`sys::wake_cost`), looking rarely;
//!    it takes a free lock early only when the ticks show the owner left
//!    (and, for an owner seen to cycle fast, a second look agrees).
//!    Then it sets WANT, and the next unlock reserves the lock for it
//!    (state 3). A spinner not served within its patience sleeps.
//! 3. **No wake for what a spinner does.** An unlock calls FUTEX_WAKE only
//!    when someone sleeps, no spinner is active and no woken sleeper is on
//!    its way (WAKING or ROTATING). The first unlock after a slow lock
//!    first waits up to `GIVER_PAUSES` (about 1 µs) for a spinner to
//!    appear: the thread that gave it the turn is on its way back.
//! 4. **No barging back after a turn.** The unlock that gave the turn
//!    marks the node; the next lock joins as the spinner or sleeps.
//! 5. **A small active set.** The policy bounds the spinners (0, 1 or
//!    127); other waiters pause and yield a few times, then sleep, and do
//!    not take a free lock kept for a spinner or a woken sleeper.
//! 6. **Rotation by time.** After a quantum of 50 wake costs in the active
//!    set (up to 4x that while only one to four threads sleep), the
//!    thread's next turn (or unlock) also wakes a sleeper for the spinner
//!    slot (ROTATING; with no spinner, state 2), and the thread sleeps.
//!    Sleepers sleep on the bell, a separate word that changes only when a
//!    wake is rung, and only a sleeper a wake was rung for may act.
//!
//! Invariants:
//! - Every decision (wake or not, hand to whom, sleep or claim) is made on
//!   the value one read-modify-write of the word returned, so no
//!   store-load ordering between two variables is needed (a first version
//!   with the counts beside the word lost a wake under loom).
//! - Only the owner moves the state away from 1: to 0 (anyone may take
//!   it), 2 (only a sleeper) or 3 (only a waiter).
//! - Every RMW that sets WAKING, ROTATING or state 2 rings the bell once it
//!   succeeded, so no sleeper sleeps through a change meant for it.
//! - Nothing in the word speaks for a thread outside `lock` and `unlock`
//!   (it may never call them again); what its next call needs is in its
//!   node. A fresh node per call loses batching, the guess and the
//!   quantum, not correctness.
//!
//! `--spin` does not apply (the budgets are times from the wake cost). At
//! most 65 535 threads may wait at once (the sleeper field). Known failure
//! modes, measured in the design notes: with far more threads than CPUs a
//! woken sleeper may preempt the owner.

mod layout;
#[cfg(all(test, not(loom)))]
mod tests;
mod unlock;
mod wait;
mod word;

use crate::primitive::Ordering;
use crate::sys::{DefaultFutex, Futex};
use crate::{Caps, LockConfig, LockStats, RawLock, TryLock};
#[cfg(not(loom))]
pub use layout::Packed;
pub use layout::{Layout, Padded};
use std::cell::Cell;
use std::marker::PhantomData;
use word::*;

/// What a thread's next lock does, decided by its last unlock.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Next {
    /// Try the fast path.
    #[default]
    Fast,
    /// The unlock gave a spinner its turn: queue instead of barging back
    /// in (the turn would otherwise buy the spinner one critical section).
    AfterTurn,
    /// The unlock ended the thread's quantum: sleep, behind the sleepers.
    Retire,
}

/// A thread's state across its acquisitions: callers that use a fresh
/// node per acquisition lose the batch protection, the CAS guess and the
/// quantum, not correctness.
#[derive(Debug, Default)]
pub struct AdaptiveNode {
    next: Cell<Next>,
    /// The word as the thread's last lock or unlock left it, less the
    /// state bits: the guess for its next CAS. While a spinner waits the
    /// word carries the spinner count, so a CAS that expects the bare 0
    /// or 1 fails and a second one is needed each way (measured: that
    /// halved throughput at a 0 ns hold); an owner that re-locks at once
    /// finds the word as it left it, and the guess makes that one CAS
    /// each way. Without the state bits the uncontended cycle leaves it
    /// 0 and never writes it.
    word: Cell<u32>,
    /// When the thread's stay in the active set began, ns (0: not yet
    /// measured; set at its first look at the clock after it slept;
    /// `u64::MAX`: the quantum is over, and stays over until it sleeps).
    since: Cell<u64>,
    /// Unlocks left before the next look at the clock.
    countdown: Cell<u32>,
    /// When the clock was last looked at, ns, and how many unlocks the
    /// countdown before it ran: their pace sets the next countdown.
    #[cfg(not(loom))]
    looked: Cell<(u64, u32)>,
    /// The thread took the lock on a slow path and has not unlocked since:
    /// the owner it took over from may be on its way back to the spinner
    /// slot, and the first unlock waits a moment for it rather than wake a
    /// sleeper for the slot.
    waited: Cell<bool>,
}

/// The adaptive mutex; see the module docs. `S` is where it keeps its
/// words: [`Padded`] for `contend lock`, [`Packed`] inside a
/// `pthread_mutex_t`.
pub struct Adaptive<F: Futex = DefaultFutex, S: Layout = Padded> {
    slots: S,
    futex: PhantomData<F>,
}

/// The time budgets `adaptive` derives from the measured wake cost, ns:
/// the same for every instance in a process.
#[cfg(not(loom))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budgets {
    /// The wake cost they derive from (the fallback where unmeasured).
    pub wake_ns: u64,
    /// How long a spinner waits before it asks for its turn.
    pub turn_ns: u64,
    /// How long a spinner that asked waits for its turn before it sleeps.
    pub patience_ns: u64,
    /// How long a thread stays in the active set before it makes way,
    /// with many asleep (`word::quantum_for` stretches it when few are).
    pub quantum_ns: u64,
    /// How many pauses the first unlock after a slow lock waits for the
    /// thread that gave it the turn before it wakes a sleeper.
    pub giver_pauses: u32,
}

/// The budgets of every `adaptive` lock in this process (measuring the
/// wake cost on first use).
#[cfg(not(loom))]
pub fn budgets() -> Budgets {
    let wake_ns = crate::sys::wake_cost::wake_cost().as_nanos() as u64;
    Budgets {
        wake_ns,
        turn_ns: TURN_WAKES * wake_ns,
        patience_ns: PATIENCE_WAKES * wake_ns,
        quantum_ns: QUANTUM_WAKES * wake_ns,
        giver_pauses: GIVER_PAUSES,
    }
}

/// Monotonic ns (about 25 ns through the vDSO, and read about
/// `LOOKS_PER_QUANTUM` times a quantum by the owner; the coarse clock's
/// resolution, a 4 ms tick at HZ=250, is too coarse for the quantum).
#[cfg(not(loom))]
use crate::sys::clock::monotonic_ns as now_ns;

// SAFETY: a thread returns from `lock` only after a CAS from state 0, 2 or
// 3 to state 1 succeeded (Acquire), and only the owner moves the state away
// from 1 (in `unlock`, Release): to 0 (anyone may take it), 2 (only a
// sleeper) or 3 (only a waiter). So at most one thread holds the lock.
unsafe impl<F: Futex, S: Layout> RawLock for Adaptive<F, S> {
    type Node = AdaptiveNode;
    const CAPS: Caps = Caps { spinners: true, max_workers: MAX_WAITERS + 1, ..Caps::OWN_WORD };

    fn new(config: &LockConfig) -> Self {
        Self { slots: S::new(config.spinners), futex: PhantomData }
    }

    fn state_word(&self) -> Option<u32> {
        Some(self.slots.word().load(Ordering::Relaxed))
    }

    #[inline]
    fn lock(&self, node: &AdaptiveNode, stats: &mut LockStats) {
        // The uncontended cycle reads the node and writes nothing to it:
        // with a store per field each way it ran at 0.87x parking_lot at
        // one thread, hold 0 (each locked instruction waits for the
        // stores before it to drain).
        let next = node.next.get();
        if next != Next::Fast {
            node.next.set(Next::Fast);
            let path = if next == Next::AfterTurn { Self::lock_after_turn } else { Self::sleep };
            return self.lock_slow(node, stats, path);
        }
        // One CAS from the word as this thread's last unlock left it (0
        // when nobody waits); failing that, one from the value the first
        // returned if the lock is free: barging into a free lock costs
        // nobody a wake.
        let guess = node.word.get();
        if let Err(w) =
            self.slots.word().compare_exchange(guess, guess | LOCKED, Ordering::Acquire, Ordering::Relaxed)
        {
            if w & STATE == UNLOCKED
                && self
                    .slots
                    .word()
                    .compare_exchange(w, w | LOCKED, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                node.word.set(w);
            } else {
                self.lock_slow(node, stats, Self::lock_contended);
            }
        }
    }

    #[inline]
    unsafe fn unlock(&self, node: &AdaptiveNode, stats: &mut LockStats) {
        let guess = node.word.get();
        if guess == UNLOCKED {
            // The guess is a bare lock: nothing to decide unless the CAS
            // finds that someone came meanwhile.
            if let Err(w) =
                self.slots.word().compare_exchange(LOCKED, UNLOCKED, Ordering::Release, Ordering::Relaxed)
            {
                self.unlock_slow(w, node, stats);
            }
        } else {
            self.unlock_counted(guess | LOCKED, node, stats);
        }
    }
}

// SAFETY: the fast path of `lock`.
unsafe impl<F: Futex, S: Layout> TryLock for Adaptive<F, S> {
    #[inline]
    fn try_lock(&self, _node: &AdaptiveNode, _stats: &mut LockStats) -> bool {
        self.take(&[UNLOCKED], 0, 0)
    }
}

/// The same lock over process-shared futex operations, for worker processes.
#[cfg(not(loom))]
pub type SharedAdaptive = Adaptive<crate::sys::futex::SharedFutex>;

/// The same lock in 8 bytes that are zero when unlocked, one spinner at a
/// time: what `contend run` puts inside a `pthread_mutex_t`.
#[cfg(not(loom))]
pub type PackedAdaptive = Adaptive<DefaultFutex, Packed>;

// SAFETY: the words are plain data and the futex operations are the shared
// ones, keyed on the page rather than the address space.
#[cfg(not(loom))]
unsafe impl crate::ProcessShared for SharedAdaptive {}
