//! `adaptive`: a futex mutex that avoids waking sleepers in the common
//! case, with the FUTEX_LOCK RFC's three waiting policies.
//!
//! One 32-bit word holds everything the protocol decides on:
//!
//! | bits | meaning |
//! |------|---------|
//! | 0-1 | state: 0 unlocked, 1 locked, 2 handed to a sleeper, 3 reserved for a waiter |
//! | 2 | a wake was issued and no sleeper has seen it yet |
//! | 3-10 | spinners (at most 255) |
//! | 11-31 | sleepers: threads in the sleeping loop, asleep or about to be |
//!
//! plus `releases`, the number of unlocks, on its own cache line (only the
//! owner writes it; spinners read it as evidence of progress).
//!
//! Origin: Darren Hart's FUTEX_LOCK RFC (2010) proposed kernel-side adaptive
//! spinning with three policies: no spinning, one adaptive spinner, many
//! spinners. The design follows what measuring on a 2-CPU VM showed: a
//! sleeping waiter costs the unlocker a FUTEX_WAKE of 10 to 12 µs (the
//! inter-processor interrupt), against about 0.2 µs when nobody sleeps, so
//! a mutex whose waiters fall asleep after a few hundred polls plateaus
//! near 70% lock utilization at a 1 µs hold. This one:
//!
//! 1. **Spins while the owner makes progress.** A spinner keeps polling as
//!    long as `releases` advances, with exponential backoff while it does
//!    not (so it stops bouncing the line the owner works on), and gives up
//!    after `--spin` polls or twice the wake cost measured at start-up
//!    (`sys::wake_cost`) without a release: then sleeping is cheaper.
//! 2. **Hands the lock to a spinner, not a sleeper.** An unlock makes the
//!    wake syscall only when someone sleeps, no spinner is active (it takes
//!    the lock instead), and no earlier wake is still in flight (the woken
//!    thread needs about a wake's time to run; waking another meanwhile
//!    would pay a second IPI for nothing).
//! 3. **Takes turns.** While a spinner waits, every fourth unlock reserves
//!    the lock for waiters (state 3), so an owner that re-locks at once
//!    cannot keep the spinner out for ever.
//! 4. **Keeps the active set small** (Dice's Malthusian locks): the policy
//!    bounds the spinners (`none` 0, `one` 1, `many` 255) and the rest
//!    sleep, so on an oversubscribed machine spinners do not take the CPU
//!    away from the owner.
//! 5. **Rotates sleepers in.** At most every millisecond, an unlock that
//!    sees sleepers hands the lock straight to one (state 2, which only a
//!    thread in the sleeping loop may take), as parking_lot's eventual
//!    fairness does.
//!
//! Why one word: every decision (wake or not, hand off to whom, sleep or
//! claim) is made on the value a single read-modify-write returned, so the
//! protocol needs no store-load ordering between two variables. A first
//! version kept the counts beside the word and loom found a lost wake: a
//! spinner could turn sleeper between the unlocker's read of the counts
//! and its write of the word.
//!
//! Known failure mode: barging can still keep a sleeper out for up to one
//! hand-off period; and when owners are preempted inside the lock, a
//! spinner spends its budget for nothing.

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
const WAKING: u32 = 1 << 2;
const SPINNER: u32 = 1 << 3;
const SPINNERS: u32 = 0xff << 3;
const SLEEPER: u32 = 1 << 11;

/// While a spinner waits, every this many unlocks go to it.
const SPINNER_TURN: u32 = 4;
/// How many times a waiter that found no free spinner slot looks again
/// (pausing, then yielding the CPU) before it sleeps: the slot is often
/// busy only until the spinner takes its turn, well under a wake's cost.
#[cfg(not(loom))]
const SLOT_RETRIES: u32 = 32;
/// Under loom, enough to cover the retry without blowing up the state space.
#[cfg(loom)]
const SLOT_RETRIES: u32 = 2;
/// How often sleepers are rotated in, ns.
#[cfg(not(loom))]
const HANDOFF_PERIOD_NS: u64 = 1_000_000;
/// Unlocks between looks at the clock for the hand-off period.
#[cfg(not(loom))]
const CLOCK_EVERY: u32 = 64;

fn spinners(w: u32) -> u32 {
    (w & SPINNERS) >> 3
}

fn sleepers(w: u32) -> u32 {
    w >> 11
}

/// The adaptive mutex; see the module docs.
pub struct Adaptive<F: Futex = DefaultFutex> {
    word: CachePadded<AtomicU32>,
    releases: CachePadded<AtomicU32>,
    next_handoff: AtomicU64,
    max_spinners: u32,
    max_polls: u32,
    spin_ns: u64,
    futex: PhantomData<F>,
}

/// Monotonic ns from the coarse clock (a few ns through the vDSO; its
/// resolution, a scheduler tick, is plenty for a 1 ms period).
#[cfg(not(loom))]
fn coarse_now_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
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
        let mut w = self.word.load(Ordering::Relaxed);
        loop {
            if !allowed.contains(&(w & STATE)) {
                return false;
            }
            let next = (i64::from((w & !STATE & !clear) | LOCKED) + delta) as u32;
            match self
                .word
                .compare_exchange_weak(w, next, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(now) => w = now,
            }
        }
    }

    /// Takes a spinner slot if the policy has one free.
    fn enter_spinning(&self) -> bool {
        let mut w = self.word.load(Ordering::Relaxed);
        while spinners(w) < self.max_spinners {
            match self
                .word
                .compare_exchange_weak(w, w + SPINNER, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(now) => w = now,
            }
        }
        false
    }

    /// Spins in a slot; true if it took the lock (leaving the slot in the
    /// same CAS). On false the thread has become a sleeper (same RMW).
    fn spin(&self, stats: &mut LockStats) -> bool {
        #[cfg(not(loom))]
        let mut quiet_since = std::time::Instant::now();
        let (mut polls, mut backoff) = (0u32, 0u32);
        let mut seen = self.releases.load(Ordering::Relaxed);
        loop {
            if self.take(&[UNLOCKED, TO_WAITER], -i64::from(SPINNER), 0) {
                return true;
            }
            polls += 1;
            stats.spins += 1;
            let now = self.releases.load(Ordering::Relaxed);
            if now != seen {
                // The owner is making progress: keep spinning, poll soon.
                (seen, backoff, polls) = (now, 0, 0);
                #[cfg(not(loom))]
                {
                    quiet_since = std::time::Instant::now();
                }
            } else {
                backoff = (backoff + 1).min(4);
            }
            #[cfg(not(loom))]
            let quiet_too_long = polls % 16 == 0 && quiet_since.elapsed().as_nanos() as u64 >= self.spin_ns;
            #[cfg(loom)]
            let quiet_too_long = false;
            if polls >= self.max_polls || quiet_too_long {
                // From spinner to sleeper in one RMW: no unlock can see
                // neither.
                self.word.fetch_add(SLEEPER - SPINNER, Ordering::Relaxed);
                return false;
            }
            for _ in 0..(1u32 << backoff) {
                spin_loop();
            }
        }
    }

    /// The sleeping loop of a thread already counted as a sleeper: takes
    /// any state but 1 (leaving the count in the same CAS), or sleeps while
    /// the word is exactly what it read. A sleeper clears WAKING whenever it
    /// sees it: when it takes the lock (it was the woken one, or the wake
    /// went to nobody), and before it sleeps, so that it never sleeps on a
    /// word that tells unlocks not to wake it.
    #[cold]
    fn sleep_until_acquired(&self, stats: &mut LockStats) {
        loop {
            let w = self.word.load(Ordering::Relaxed);
            if w & STATE != LOCKED {
                if self.take(&[UNLOCKED, HANDOFF, TO_WAITER], -i64::from(SLEEPER), WAKING) {
                    return;
                }
                continue;
            }
            if w & WAKING != 0 {
                let _ = self
                    .word
                    .compare_exchange(w, w & !WAKING, Ordering::Relaxed, Ordering::Relaxed);
                continue;
            }
            stats.waits += 1;
            F::wait(&self.word, w);
        }
    }

    #[cold]
    fn lock_contended(&self, stats: &mut LockStats) {
        for retry in 0..SLOT_RETRIES {
            if self.enter_spinning() {
                if self.spin(stats) {
                    return;
                }
                return self.sleep_until_acquired(stats);
            }
            if self.max_spinners == 0 {
                break;
            }
            if self.take(&[UNLOCKED], 0, 0) {
                return;
            }
            if retry < 4 {
                for _ in 0..(1u32 << retry) {
                    spin_loop();
                }
            } else {
                // Oversubscribed, this gives the CPU to the owner; on an
                // idle CPU it returns at once.
                yield_now();
            }
        }
        self.word.fetch_add(SLEEPER, Ordering::Relaxed);
        self.sleep_until_acquired(stats);
    }

    /// Whether this unlock should hand the lock to a sleeper for fairness.
    #[cfg(not(loom))]
    #[inline]
    fn handoff_due(&self, released: u32) -> bool {
        if released % CLOCK_EVERY != 0 {
            return false;
        }
        let now = coarse_now_ns();
        if now < self.next_handoff.load(Ordering::Relaxed) {
            return false;
        }
        self.next_handoff
            .store(now + HANDOFF_PERIOD_NS, Ordering::Relaxed);
        true
    }

    /// Under loom: every other unlock, so the model covers hand-offs.
    #[cfg(loom)]
    #[inline]
    fn handoff_due(&self, released: u32) -> bool {
        // The clock-based period does not exist under loom; the field is
        // still part of the struct.
        let _ = &self.next_handoff;
        released % 2 == 0
    }
}

// SAFETY: a thread returns from `lock` only after a CAS from state 0, 2 or
// 3 to state 1 succeeded (Acquire), and only the owner moves the state away
// from 1 (in `unlock`, Release): to 0 (anyone may take it), 2 (only a
// sleeper) or 3 (only a waiter). So at most one thread holds the lock.
unsafe impl<F: Futex> RawLock for Adaptive<F> {
    type Node = ();
    const CAPS: Caps = Caps {
        spin: true,
        try_lock: true,
        counters: true,
        spinners: true,
        process_shared: true,
        ..Caps::PLAIN
    };

    fn new(config: &LockConfig) -> Self {
        #[cfg(not(loom))]
        let spin_ns = 2 * crate::sys::wake_cost::wake_cost().as_nanos() as u64;
        #[cfg(loom)]
        let spin_ns = 0;
        Self {
            word: CachePadded::new(AtomicU32::new(UNLOCKED)),
            releases: CachePadded::new(AtomicU32::new(0)),
            next_handoff: AtomicU64::new(0),
            max_spinners: match config.spinners {
                Spinners::None => 0,
                Spinners::One => 1,
                Spinners::Many => 255,
            },
            max_polls: config.spin.max(1),
            spin_ns,
            futex: PhantomData,
        }
    }

    fn state_word(&self) -> Option<u32> {
        Some(self.word.load(Ordering::Relaxed))
    }

    #[inline]
    fn lock(&self, _node: &(), stats: &mut LockStats) {
        if !self.take(&[UNLOCKED], 0, 0) {
            self.lock_contended(stats);
        }
    }

    #[inline]
    unsafe fn unlock(&self, _node: &(), stats: &mut LockStats) {
        // Only the owner writes `releases`, so load + store is enough.
        let released = self.releases.load(Ordering::Relaxed).wrapping_add(1);
        self.releases.store(released, Ordering::Relaxed);
        // The state is 1 and only we change it; counts may change under us,
        // but sleepers cannot leave while we hold the lock.
        let w = self.word.load(Ordering::Relaxed);
        if sleepers(w) > 0 && self.handoff_due(released) {
            self.word.fetch_add(HANDOFF - LOCKED, Ordering::Release);
            stats.wakes += 1;
            F::wake(&self.word, 1);
            return;
        }
        if released % SPINNER_TURN == 0 && spinners(w) > 0 {
            let old = self.word.fetch_add(TO_WAITER - LOCKED, Ordering::Release);
            // The spinner seen may have turned sleeper (and slept) since:
            // with no spinner left, wake a sleeper to take the lock.
            if spinners(old) == 0 && sleepers(old) > 0 {
                stats.wakes += 1;
                F::wake(&self.word, 1);
            }
            return;
        }
        // Release and mark a wake in flight in one RMW, if one is needed
        // and none is in flight already; the woken sleeper (or, if the
        // wake finds nobody asleep, the next sleeper to look) clears it.
        let mut w = self.word.load(Ordering::Relaxed);
        loop {
            let wake = sleepers(w) > 0 && spinners(w) == 0 && w & WAKING == 0;
            let next = (w - LOCKED) | if wake { WAKING } else { 0 };
            match self
                .word
                .compare_exchange_weak(w, next, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => {
                    if wake {
                        stats.wakes += 1;
                        F::wake(&self.word, 1);
                    }
                    return;
                }
                Err(now) => w = now,
            }
        }
    }
}

// SAFETY: the fast path of `lock`.
unsafe impl<F: Futex> TryLock for Adaptive<F> {
    #[inline]
    fn try_lock(&self, _node: &(), _stats: &mut LockStats) -> bool {
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
