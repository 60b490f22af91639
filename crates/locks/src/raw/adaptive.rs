//! `adaptive`: a futex mutex that avoids waking sleepers in the common
//! case, with the FUTEX_LOCK RFC's three waiting policies.
//!
//! One 32-bit word holds everything the protocol decides on:
//!
//! | bits | meaning |
//! |------|---------|
//! | 0-1 | state: 0 unlocked, 1 locked, 2 handed to a sleeper, 3 reserved for a waiter |
//! | 2 | WAKING: a sleeper is awake (woken, or not yet asleep) and will come |
//! | 3 | WANT: a spinner has waited its turn |
//! | 4 | ROTATING: a sleeper was woken to take the next spinner slot |
//! | 5-8 | ticks: slow-path unlocks, modulo 16 |
//! | 9-15 | spinners (at most 127) |
//! | 16-31 | sleepers: threads in the sleeping loop, asleep or about to be |
//!
//! Origin: Darren Hart's FUTEX_LOCK RFC (2010) proposed kernel-side adaptive
//! spinning with three policies: no spinning, one adaptive spinner, many
//! spinners. The design follows what measuring on a 2-CPU VM showed: a
//! sleeping waiter costs the unlocker a FUTEX_WAKE of 10 to 12 µs (the
//! inter-processor interrupt), against about 0.2 µs when nobody sleeps, so
//! a mutex whose waiters fall asleep after a few hundred polls plateaus
//! near 70% lock utilization at a 1 µs hold; and at a 0 ns hold, every
//! hand-over between CPUs costs more than the critical section. This one:
//!
//! 1. **Costs one CAS each way when nobody waits**, and one load and one
//!    CAS each way when a spinner waits: the counts live in the word, so
//!    the owner's unlock is a single RMW whatever it decides.
//! 2. **Lets the owner run batches.** A spinner waits its turn for twice
//!    the wake cost measured at start-up (`sys::wake_cost`, about 20 µs
//!    here), looking at the word rarely (backing off to about 3.5 µs
//!    between looks) so it does not pull the line away from an owner that
//!    re-locks at once. It takes a free lock early only when the ticks
//!    show the owner left rather than released and re-locked. Then it sets
//!    WANT, and the next unlock reserves the lock for it (state 3). A
//!    batch of 20 µs is some 600 critical sections at a 0 ns hold, so the
//!    hand-over is paid rarely, and both threads get equal batches.
//! 3. **Never wakes a sleeper to do what a spinner does.** An unlock makes
//!    the wake syscall only when someone sleeps, no spinner is active (it
//!    takes the lock instead) and no woken sleeper is on its way (WAKING).
//!    A spinner that has asked and is not served within twice the wake cost
//!    (the owner is preempted, or holds for long) sleeps: then sleeping is
//!    cheaper.
//! 4. **Does not barge back after giving a turn.** The unlock that gave the
//!    turn marks the thread's node; its next lock joins as the spinner (or
//!    sleeps) instead of re-taking the lock from the new owner, which would
//!    otherwise get a single critical section for its 20 µs wait.
//! 5. **Keeps the active set small** (Dice's Malthusian locks): the policy
//!    bounds the spinners (`none` 0, `one` 1, `many` 127); other waiters
//!    pause and yield a few times (the slot frees when its spinner takes
//!    its turn), then sleep, so on an oversubscribed machine waiters do
//!    not take the CPU away from the owner.
//! 6. **Rotates sleepers in.** Every fourth turn, if anyone sleeps, the
//!    unlock also wakes a sleeper and keeps the spinner slot for it
//!    (ROTATING); the thread that gave the turn finds no slot and retires
//!    to sleep. So the active pair changes about every 100 µs at a short
//!    hold, and sleepers do not starve. With no spinner at all (policy
//!    `none`), an unlock hands the lock straight to a sleeper (state 2) at
//!    most every millisecond instead, as parking_lot's eventual fairness
//!    does.
//!
//! Why one word: every decision (wake or not, hand off to whom, sleep or
//! claim) is made on the value a single read-modify-write returned, so the
//! protocol needs no store-load ordering between two variables. A first
//! version kept the counts beside the word and loom found a lost wake: a
//! spinner could turn sleeper between the unlocker's read of the counts
//! and its write of the word.
//!
//! The node's turn mark is state across acquisitions; a caller that uses
//! a fresh node each time only loses the batch protection. `--spin` does
//! not apply: the budgets are times derived from the measured wake cost.
//! At most 65 535 threads may wait at once (the sleeper field).
//!
//! Known failure modes: with many more threads than CPUs, a woken sleeper
//! may preempt the owner inside the lock (the scheduler favours the
//! thread that slept), and a spinner then spends its patience for
//! nothing; barging by threads that have not slept yet still favours them
//! over sleepers between rotations.

use crate::primitive::{spin_loop, AtomicU32, AtomicU64, Ordering};
use crate::sys::{DefaultFutex, Futex};
use crate::{Caps, LockConfig, LockStats, RawLock, Spinners, TryLock};
use crossbeam_utils::CachePadded;
#[cfg(loom)]
use loom::thread::yield_now;
use std::marker::PhantomData;
#[cfg(not(loom))]
use std::thread::yield_now;

const STATE: u32 = 0b11;
const UNLOCKED: u32 = 0;
const LOCKED: u32 = 1;
/// Locked on behalf of a sleeper, which takes it by setting state 1.
const HANDOFF: u32 = 2;
/// Locked on behalf of any waiter (spinner or sleeper); arrivals cannot
/// take it.
const TO_WAITER: u32 = 3;
/// A sleeper is awake (woken, or not yet asleep) and will come: unlocks
/// need not wake another, and a spinner slot is kept for it.
const WAKING: u32 = 1 << 2;
/// A spinner has waited its turn: the next unlock reserves the lock.
const WANT: u32 = 1 << 3;
/// A sleeper was woken to take the next spinner slot, kept for it; the
/// thread that gave the turn does not take it (it retires to sleep).
const ROTATING: u32 = 1 << 4;
/// Slow-path unlocks, modulo 16: a waiter's evidence that the owner
/// progresses, kept in the word so that an unlock writes one line.
const TICK: u32 = 1 << 5;
const TICKS: u32 = 0xf << 5;
const SPINNER: u32 = 1 << 9;
const SPINNERS: u32 = 0x7f << 9;
const SLEEPER: u32 = 1 << 16;
/// The most threads that may wait at once: the sleeper field's range.
const MAX_WAITERS: u32 = u16::MAX as u32;

/// How many times a waiter that found no free spinner slot looks again
/// (pausing, then yielding the CPU) before it sleeps: the slot is often
/// busy only until the spinner takes its turn, well under a wake's cost.
#[cfg(not(loom))]
const SLOT_RETRIES: u32 = 8;
/// Under loom, enough to cover the retry without blowing up the state space.
#[cfg(loom)]
const SLOT_RETRIES: u32 = 2;
/// Pauses before a spinner's second look at the word (about 0.1 µs at
/// 14 ns a pause): an owner that re-locks at once has cycled a few times
/// by then, which the ticks show.
const FIRST_PAUSES: u32 = 8;
/// The most pauses between two looks while a spinner waits for its turn
/// (about 3.5 µs): rare enough not to pull the line away from an owner
/// that re-locks at once, often enough to see a lock left free.
const QUIET_PAUSES: u32 = 256;
/// Every this many turns, if anyone sleeps, the turn also wakes a sleeper
/// to take the next spinner slot, and the thread that gave the turn finds
/// no slot and sleeps: the active set rotates through the sleepers.
#[cfg(not(loom))]
const ROTATE_EVERY: u32 = 4;
#[cfg(loom)]
const ROTATE_EVERY: u32 = 2;
/// How often sleepers are handed the lock when nobody spins, ns.
#[cfg(not(loom))]
const HANDOFF_PERIOD_NS: u64 = 1_000_000;
/// Slow unlocks between looks at the clock for the hand-off period.
#[cfg(not(loom))]
const CLOCK_EVERY: u32 = 64;

fn spinners(w: u32) -> u32 {
    (w & SPINNERS) >> 9
}

fn sleepers(w: u32) -> u32 {
    w >> 16
}

fn ticks(w: u32) -> u32 {
    (w & TICKS) >> 5
}

/// `n` pause instructions (about 14 ns each here).
fn pause(n: u32) {
    for _ in 0..n {
        spin_loop();
    }
}

/// Whether the owner left rather than released and re-locked: the ticks
/// moved by at most one between two looks.
fn left(before: u32, w: u32) -> bool {
    ticks(w).wrapping_sub(before) & 0xf <= 1
}

/// A thread's state across its acquisitions: whether its last unlock gave
/// a spinner its turn, so that its next lock queues instead of barging
/// back in (the turn would otherwise buy the spinner one critical
/// section). Callers that use a fresh node per acquisition just lose that.
#[derive(Debug, Default)]
pub struct AdaptiveNode {
    gave_turn: std::cell::Cell<bool>,
}

/// The adaptive mutex; see the module docs.
pub struct Adaptive<F: Futex = DefaultFutex> {
    word: CachePadded<AtomicU32>,
    /// The owner's own line: unlocks that could have handed the lock to a
    /// sleeper (nobody spinning), turns given, and when sleepers are next
    /// due a hand-off.
    slow_unlocks: CachePadded<AtomicU32>,
    turns: AtomicU32,
    next_handoff: AtomicU64,
    max_spinners: u32,
    /// How long a spinner waits before it asks for its turn, ns.
    turn_ns: u64,
    /// How long a spinner waits for its turn before it sleeps, ns.
    patience_ns: u64,
    futex: PhantomData<F>,
}

/// Monotonic ns (about 25 ns through the vDSO, and read once every
/// `CLOCK_EVERY` slow unlocks; the coarse clock's resolution, a 4 ms tick
/// at HZ=250, is too coarse for the period).
#[cfg(not(loom))]
fn now_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// A spinner's sense of time: nanoseconds, or under loom (which has no
/// clock) one tick per look at the word, so the model still reaches every
/// phase of the spin.
struct Stopwatch {
    #[cfg(not(loom))]
    start: std::time::Instant,
    #[cfg(loom)]
    ticks: u64,
}

impl Stopwatch {
    fn start() -> Self {
        Self {
            #[cfg(not(loom))]
            start: std::time::Instant::now(),
            #[cfg(loom)]
            ticks: 0,
        }
    }

    #[cfg(not(loom))]
    fn elapsed_ns(&mut self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    #[cfg(loom)]
    fn elapsed_ns(&mut self) -> u64 {
        self.ticks += 1;
        self.ticks
    }
}

impl<F: Futex> Adaptive<F> {
    /// The raw lock word, for diagnostics and models.
    pub fn word(&self) -> u32 {
        self.word.load(Ordering::Relaxed)
    }

    /// Sets state 1 if the state is one of `allowed`, applying `delta` to
    /// the counts in the same CAS (to leave the spinner or sleeper count)
    /// and clearing the bits in `clear`.
    #[inline]
    fn take(&self, allowed: &[u32], delta: i64, clear: u32) -> bool {
        self.word
            .fetch_update(Ordering::Acquire, Ordering::Relaxed, |w| {
                allowed
                    .contains(&(w & STATE))
                    .then(|| (i64::from((w & !STATE & !clear) | LOCKED) + delta) as u32)
            })
            .is_ok()
    }

    /// Whether an arriving thread may take a spinner slot: one is free and
    /// not kept for an awake sleeper.
    fn slot_free(&self, w: u32) -> bool {
        spinners(w) + u32::from(w & (WAKING | ROTATING) != 0) < self.max_spinners
    }

    /// Takes a spinner slot if the policy has one free.
    fn enter_spinning(&self) -> bool {
        self.word
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |w| {
                self.slot_free(w).then_some(w + SPINNER)
            })
            .is_ok()
    }

    /// Spins in a slot; true if it took the lock (leaving the slot in the
    /// same CAS). On false the thread has become a sleeper (same RMW).
    ///
    /// Two phases. Waiting its turn, the spinner looks at the word rarely
    /// (backing off to `QUIET_PAUSES`), and takes the lock only if it finds
    /// it free with the ticks moved by at most one since its last look:
    /// the owner has left, rather than released and re-locked, so taking
    /// it steals nothing. After `turn_ns` it sets WANT and polls closely
    /// until an unlock reserves the lock for it, or until `patience_ns`
    /// pass without one (the owner is preempted or holds for long:
    /// sleeping is then cheaper).
    fn spin(&self, stats: &mut LockStats) -> bool {
        let mut clock = Stopwatch::start();
        let mut asked_at: Option<u64> = None;
        let mut last_ticks: Option<u32> = None;
        let mut pauses = FIRST_PAUSES;
        loop {
            let w = self.word.load(Ordering::Relaxed);
            let left = last_ticks.is_some_and(|t| left(t, w));
            let free = match w & STATE {
                TO_WAITER => true,
                UNLOCKED => asked_at.is_some() || left,
                _ => false,
            };
            if free && self.take(&[UNLOCKED, TO_WAITER], -i64::from(SPINNER), WANT) {
                return true;
            }
            last_ticks = Some(ticks(w));
            stats.spins += 1;
            let now = clock.elapsed_ns();
            match asked_at {
                None if now >= self.turn_ns => {
                    self.word.fetch_or(WANT, Ordering::Relaxed);
                    asked_at = Some(now);
                }
                // Another spinner was served (the unlock cleared WANT): the
                // owner is making progress, so ask again and be patient anew.
                Some(_) if w & WANT == 0 => {
                    self.word.fetch_or(WANT, Ordering::Relaxed);
                    asked_at = Some(now);
                }
                Some(at) if now - at >= self.patience_ns => {
                    self.become_sleeper();
                    return false;
                }
                _ => {}
            }
            pause(if asked_at.is_some() { 1 } else { pauses });
            pauses = (pauses * 2).min(QUIET_PAUSES);
        }
    }

    /// From spinner to sleeper in one RMW, so no unlock can see neither;
    /// the last spinner out withdraws WANT, which would otherwise keep the
    /// lock reserved (idle) through a sleeper's wake-up.
    fn become_sleeper(&self) {
        let _ = self.word.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |w| {
            let next = w - SPINNER + SLEEPER;
            Some(if spinners(w) == 1 { next & !WANT } else { next })
        });
    }

    /// Spins in the slot just taken, and sleeps if the spin gives up.
    fn spin_or_sleep(&self, stats: &mut LockStats) {
        if !self.spin(stats) {
            self.sleep_until_acquired(stats, false);
        }
    }

    /// Counts this thread as a sleeper and runs the sleeping loop.
    fn sleep(&self, stats: &mut LockStats, retiring: bool) {
        self.word.fetch_add(SLEEPER, Ordering::Relaxed);
        self.sleep_until_acquired(stats, retiring);
    }

    /// The sleeping loop of a thread already counted as a sleeper: takes
    /// any state but 1 (leaving the count in the same CAS), or sleeps while
    /// the word is exactly what it read. A sleeper clears WAKING whenever it
    /// sees it: when it takes the lock (it was the woken one, or the wake
    /// went to nobody), and before it sleeps, so that it never sleeps on a
    /// word that tells unlocks not to wake it. Seeing WAKING or ROTATING
    /// with the lock held, it takes the spinner slot kept for it.
    ///
    /// A `retiring` thread (it just gave a turn) leaves ROTATING to the
    /// sleeper woken for it, and until it first sleeps takes a free lock
    /// only if the owner left (the ticks rule), not one the new owner is
    /// about to re-lock.
    #[cold]
    fn sleep_until_acquired(&self, stats: &mut LockStats, retiring: bool) {
        let mut polite: Option<u32> = retiring.then(|| ticks(self.word.load(Ordering::Relaxed)));
        loop {
            let w = self.word.load(Ordering::Relaxed);
            if w & STATE != LOCKED {
                if let Some(before) = polite {
                    if w & STATE == UNLOCKED && !left(before, w) {
                        polite = Some(ticks(w));
                        pause(FIRST_PAUSES);
                        continue;
                    }
                }
                if self.take(&[UNLOCKED, HANDOFF, TO_WAITER], -i64::from(SLEEPER), WAKING) {
                    return;
                }
                continue;
            }
            let mine = if polite.is_some() {
                WAKING
            } else {
                WAKING | ROTATING
            };
            if w & mine != 0 {
                // Awake, and a slot was kept for us: spin in it, or if the
                // policy has no slot to give, just clear the mark.
                let spin = spinners(w) < self.max_spinners;
                let next = if spin { w - SLEEPER + SPINNER } else { w } & !mine;
                let claimed = self
                    .word
                    .compare_exchange(w, next, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok();
                if claimed && spin && self.spin(stats) {
                    return;
                }
                continue;
            }
            stats.waits += 1;
            polite = None;
            F::wait(&self.word, w);
        }
    }

    #[cold]
    fn lock_contended(&self, stats: &mut LockStats) {
        for retry in 0..SLOT_RETRIES {
            if self.enter_spinning() {
                return self.spin_or_sleep(stats);
            }
            if self.max_spinners == 0 {
                break;
            }
            if self.take(&[UNLOCKED], 0, 0) {
                return;
            }
            if retry < 4 {
                pause(1 << retry);
            } else {
                // Oversubscribed, this gives the CPU to the owner; on an
                // idle CPU it returns at once.
                yield_now();
            }
        }
        self.sleep(stats, false);
    }

    /// The lock of a thread whose last unlock gave a spinner its turn: it
    /// spins in a free slot (the new owner's batch runs meanwhile), or
    /// retires to sleep; either way without barging.
    #[cold]
    fn lock_after_turn(&self, stats: &mut LockStats) {
        let mut taken = false;
        loop {
            if self.enter_spinning() {
                return self.spin_or_sleep(stats);
            }
            // The spinner we gave the turn to frees its slot as it takes
            // the lock, within a cache miss or two: wait for that (and look
            // once more after it), unless the slot is kept for a woken
            // sleeper: then we retire.
            let w = self.word.load(Ordering::Relaxed);
            if taken || w & (WAKING | ROTATING) != 0 {
                break;
            }
            taken = w & STATE != TO_WAITER;
            spin_loop();
        }
        self.sleep(stats, true);
    }

    /// The unlock of a word that holds more than state 1: waiters, or a
    /// bit to clear. Returns whether it gave a waiter its turn.
    #[cold]
    fn unlock_slow(&self, seen: u32, stats: &mut LockStats) -> bool {
        // The state is 1 and only we change it, but counts change under us
        // (a sleeper may even become a spinner), so every branch checks
        // the word the CAS will replace. Only the owner writes the
        // counters, so load + store is enough.
        let mut w = seen;
        let due = sleepers(w) > 0 && spinners(w) == 0 && {
            let slow = self.slow_unlocks.load(Ordering::Relaxed).wrapping_add(1);
            self.slow_unlocks.store(slow, Ordering::Relaxed);
            self.handoff_due(slow)
        };
        let rotate = w & WANT != 0 && sleepers(w) > 0 && {
            let turns = self.turns.load(Ordering::Relaxed).wrapping_add(1);
            self.turns.store(turns, Ordering::Relaxed);
            turns % ROTATE_EVERY == 0
        };
        loop {
            let mut rest = (w & !STATE & !WANT & !TICKS) | ((w + TICK) & TICKS);
            if sleepers(w) == 0 {
                // Nobody left to take a kept slot.
                rest &= !ROTATING;
            }
            let (next, wake) = if due && sleepers(w) > 0 {
                // Hand the lock to a sleeper; it clears WAKING when it takes.
                (rest | HANDOFF, true)
            } else if w & WANT != 0 && spinners(w) + sleepers(w) > 0 {
                // A spinner's turn. If it turned sleeper since, wake a
                // sleeper to take it (unless a wake is in flight). To
                // rotate, wake one to spin next, keeping it the slot.
                if spinners(w) == 0 {
                    let wake = w & WAKING == 0;
                    (rest | TO_WAITER | if wake { WAKING } else { 0 }, wake)
                } else if rotate && sleepers(w) > 0 && w & ROTATING == 0 {
                    (rest | TO_WAITER | ROTATING, true)
                } else {
                    (rest | TO_WAITER, false)
                }
            } else {
                // Release, and mark a wake in flight in the same RMW if one
                // is needed and none is in flight already.
                let wake = sleepers(w) > 0 && spinners(w) == 0 && w & WAKING == 0;
                (rest | if wake { WAKING } else { 0 }, wake)
            };
            match self
                .word
                .compare_exchange_weak(w, next, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => {
                    if wake {
                        stats.wakes += 1;
                        F::wake(&self.word, 1);
                    }
                    return next & STATE == TO_WAITER;
                }
                Err(now) => w = now,
            }
        }
    }

    /// Whether this unlock should hand the lock to a sleeper for fairness.
    #[cfg(not(loom))]
    #[inline]
    fn handoff_due(&self, slow: u32) -> bool {
        if slow % CLOCK_EVERY != 0 {
            return false;
        }
        let now = now_ns();
        if now < self.next_handoff.load(Ordering::Relaxed) {
            return false;
        }
        self.next_handoff
            .store(now + HANDOFF_PERIOD_NS, Ordering::Relaxed);
        true
    }

    /// Under loom: every other slow unlock, so the model covers hand-offs.
    #[cfg(loom)]
    #[inline]
    fn handoff_due(&self, slow: u32) -> bool {
        // The clock-based period does not exist under loom; the field is
        // still part of the struct.
        let _ = &self.next_handoff;
        slow % 2 == 0
    }
}

// SAFETY: a thread returns from `lock` only after a CAS from state 0, 2 or
// 3 to state 1 succeeded (Acquire), and only the owner moves the state away
// from 1 (in `unlock`, Release): to 0 (anyone may take it), 2 (only a
// sleeper) or 3 (only a waiter). So at most one thread holds the lock.
unsafe impl<F: Futex> RawLock for Adaptive<F> {
    type Node = AdaptiveNode;
    const CAPS: Caps = Caps {
        try_lock: true,
        counters: true,
        spinners: true,
        max_workers: MAX_WAITERS + 1,
        process_shared: true,
        ..Caps::PLAIN
    };

    fn new(config: &LockConfig) -> Self {
        #[cfg(not(loom))]
        let (turn_ns, patience_ns) = {
            let wake = crate::sys::wake_cost::wake_cost().as_nanos() as u64;
            (2 * wake, 2 * wake)
        };
        // Under loom the stopwatch ticks once per look at the word.
        #[cfg(loom)]
        let (turn_ns, patience_ns) = (1, 2);
        Self {
            word: CachePadded::new(AtomicU32::new(UNLOCKED)),
            slow_unlocks: CachePadded::new(AtomicU32::new(0)),
            turns: AtomicU32::new(0),
            next_handoff: AtomicU64::new(0),
            max_spinners: match config.spinners {
                Spinners::None => 0,
                Spinners::One => 1,
                Spinners::Many => SPINNERS >> 9,
            },
            turn_ns,
            patience_ns,
            futex: PhantomData,
        }
    }

    fn state_word(&self) -> Option<u32> {
        Some(self.word.load(Ordering::Relaxed))
    }

    #[inline]
    fn lock(&self, node: &AdaptiveNode, stats: &mut LockStats) {
        if node.gave_turn.replace(false) {
            return self.lock_after_turn(stats);
        }
        // Uncontended: one CAS. With waiters counted in the word, a second
        // one from the value the first returned: barging into a free lock
        // costs nobody a wake.
        if let Err(w) = self
            .word
            .compare_exchange(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed)
        {
            if w & STATE != UNLOCKED
                || self
                    .word
                    .compare_exchange(w, w | LOCKED, Ordering::Acquire, Ordering::Relaxed)
                    .is_err()
            {
                self.lock_contended(stats);
            }
        }
    }

    #[inline]
    unsafe fn unlock(&self, node: &AdaptiveNode, stats: &mut LockStats) {
        // Nobody waits and no bit is set: nothing to decide.
        if let Err(w) = self
            .word
            .compare_exchange(LOCKED, UNLOCKED, Ordering::Release, Ordering::Relaxed)
        {
            node.gave_turn.set(self.unlock_slow(w, stats));
        }
    }
}

// SAFETY: the fast path of `lock`.
unsafe impl<F: Futex> TryLock for Adaptive<F> {
    #[inline]
    fn try_lock(&self, _node: &AdaptiveNode, _stats: &mut LockStats) -> bool {
        self.take(&[UNLOCKED], 0, 0)
    }
}

/// The same lock over process-shared futex operations, for worker processes.
#[cfg(not(loom))]
pub type SharedAdaptive = Adaptive<crate::sys::futex::SharedFutex>;

// SAFETY: the words are plain data and the futex operations are the shared
// ones, keyed on the page rather than the address space.
#[cfg(not(loom))]
unsafe impl crate::ProcessShared for SharedAdaptive {}
