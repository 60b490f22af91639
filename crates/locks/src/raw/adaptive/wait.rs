//! Waiting for the adaptive mutex: the fast path's misses, the spinner
//! who waits its turn, the waiters who pause and yield for a free slot,
//! and the sleepers on the bell.

use super::word::*;
use super::*;
use crate::primitive::spin_loop;
#[cfg(loom)]
use loom::thread::yield_now;
#[cfg(not(loom))]
use std::thread::yield_now;

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
    #[link_section = "contend_measured"] // crate docs: Placement
    fn start() -> Self {
        Self {
            #[cfg(not(loom))]
            start: std::time::Instant::now(),
            #[cfg(loom)]
            ticks: 0,
        }
    }

    #[cfg(not(loom))]
    #[link_section = "contend_measured"] // crate docs: Placement
    fn elapsed_ns(&mut self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    #[cfg(loom)]
    fn elapsed_ns(&mut self) -> u64 {
        self.ticks += 1;
        self.ticks
    }
}

impl<F: Futex, S: Layout> Adaptive<F, S> {
    /// The raw lock word, for diagnostics and models.
    pub fn word(&self) -> u32 {
        self.slots.word().load(Ordering::Relaxed)
    }

    /// Sets state 1 if the state is one of `allowed`, applying `delta` to
    /// the counts in the same CAS (to leave the spinner or sleeper count)
    /// and clearing the bits in `clear`.
    #[inline]
    pub(super) fn take(&self, allowed: &[u32], delta: i64, clear: u32) -> bool {
        self.slots
            .word()
            .fetch_update(Ordering::Acquire, Ordering::Relaxed, |w| {
                allowed
                    .contains(&(w & STATE))
                    .then(|| (i64::from((w & !STATE & !clear) | LOCKED) + delta) as u32)
            })
            .is_ok()
    }

    /// Takes a free lock (state 0, or 3 with nobody left to take it) that
    /// no spinner will take, leaving the sleeper count if `sleeper`. Only
    /// an `entitled` sleeper (a wake was rung for it) may take it from
    /// under a mark, clearing the marks: it is the woken thread, or the
    /// wake went to nobody, and a mark left with nobody entitled to it
    /// would stop the unlocks from waking anyone. Anyone else leaves a
    /// marked lock to the woken: a waiter that found no slot, or a sleeper
    /// that has just arrived, does not overtake those queued.
    pub(super) fn take_free(&self, sleeper: bool, entitled: bool) -> bool {
        let delta = if sleeper { SLEEPER } else { 0 };
        self.slots
            .word()
            .fetch_update(Ordering::Acquire, Ordering::Relaxed, |w| {
                let free = matches!(w & STATE, UNLOCKED | TO_WAITER);
                let nobody_else = spinners(w) == 0 && (entitled || w & (WAKING | ROTATING) == 0);
                (free && nobody_else).then(|| ((w & !STATE & !WAKING & !ROTATING) | LOCKED) - delta)
            })
            .is_ok()
    }

    /// Whether an arriving thread may take a spinner slot: one is free and
    /// not kept for an awake sleeper.
    pub(super) fn slot_free(&self, w: u32) -> bool {
        spinners(w) + u32::from(w & (WAKING | ROTATING) != 0) < self.slots.max_spinners()
    }

    /// Takes a spinner slot if the policy has one free.
    pub(super) fn enter_spinning(&self) -> bool {
        self.slots
            .word()
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |w| self.slot_free(w).then_some(w + SPINNER))
            .is_ok()
    }

    /// Spins in a slot; `Ok` if it took the lock (leaving the slot in the
    /// same CAS). `Err` if the thread has become a sleeper (same RMW),
    /// with the bell as it was before (see `sleep_until_acquired`).
    ///
    /// Two phases. Waiting its turn, the spinner looks at the word rarely
    /// (backing off to `QUIET_PAUSES`), and takes the lock only if it finds
    /// it free with the ticks moved by at most one since its last look
    /// (confirmed by a second look if the owner was seen to cycle fast:
    /// `left`): the owner has left, rather than released and re-locked, so
    /// taking it steals nothing. After `turn_ns` it sets WANT and polls closely
    /// until an unlock reserves the lock for it, or until `patience_ns`
    /// pass without one (the owner is preempted or holds for long:
    /// sleeping is then cheaper).
    #[link_section = "contend_measured"] // crate docs: Placement
    pub(super) fn spin(&self, stats: &mut LockStats) -> Result<(), u32> {
        let mut clock = Stopwatch::start();
        let mut asked_at: Option<u64> = None;
        let mut last_ticks: Option<u32> = None;
        let mut pauses = FIRST_PAUSES;
        let mut quick = false;
        // The pauses before this look, and whether a short one has seen the
        // owner unlock twice or more (see `left`).
        let mut paused = 0;
        let mut fast = false;
        loop {
            let w = self.slots.word().load(Ordering::Relaxed);
            let moved = last_ticks.map(|t| moved(t, w));
            fast |= paused <= FIRST_PAUSES && moved.is_some_and(|m| m > 1);
            let free = match w & STATE {
                TO_WAITER => true,
                UNLOCKED => asked_at.is_some() || left(moved, fast, || self.stays_free(w)),
                _ => false,
            };
            if free && self.take(&[UNLOCKED, TO_WAITER], -i64::from(SPINNER), WANT) {
                return Ok(());
            }
            last_ticks = Some(ticks(w));
            stats.add_spins(1);
            let now = clock.elapsed_ns();
            match asked_at {
                None if now >= self.slots.turn_ns() => {
                    self.slots.word().fetch_or(WANT, Ordering::Relaxed);
                    asked_at = Some(now);
                }
                // Another spinner was served (the unlock cleared WANT): the
                // owner is making progress, so ask again and be patient anew.
                Some(_) if w & WANT == 0 => {
                    self.slots.word().fetch_or(WANT, Ordering::Relaxed);
                    asked_at = Some(now);
                }
                Some(at) if now - at >= self.slots.patience_ns() => {
                    return Err(self.become_sleeper());
                }
                _ => {}
            }
            // A free lock seen after a quiet pause is looked at again
            // soon, once: an owner that re-locks at once has cycled by
            // then (the ticks say so), but one that left for its work
            // outside the lock has not, and the lock is taken while it
            // works (at a 10% duty cycle, the spinner otherwise saw the
            // ticks move over its 3.5 µs pause and waited its turn while
            // the other CPU idled).
            quick = w & STATE == UNLOCKED && !quick;
            paused = if asked_at.is_some() {
                1
            } else if quick {
                FIRST_PAUSES
            } else {
                pauses
            };
            pause(paused);
            pauses = (pauses * 2).min(QUIET_PAUSES);
        }
    }

    /// Whether the word seen free, `w`, is unchanged `CONFIRM_PAUSES`
    /// later (the confirming look of `left`).
    fn stays_free(&self, w: u32) -> bool {
        pause(CONFIRM_PAUSES);
        self.slots.word().load(Ordering::Relaxed) == w
    }

    /// From spinner to sleeper in one RMW, so no unlock can see neither;
    /// the last spinner out withdraws WANT, which would otherwise keep the
    /// lock reserved (idle) through a sleeper's wake-up. Returns the bell
    /// as it was before.
    pub(super) fn become_sleeper(&self) -> u32 {
        let seen = self.slots.bell().load(Ordering::Acquire);
        let _ = self.slots.word().fetch_update(Ordering::Relaxed, Ordering::Relaxed, |w| {
            let next = w - SPINNER + SLEEPER;
            Some(if spinners(w) == 1 { next & !WANT } else { next })
        });
        seen
    }

    /// Spins in the slot just taken, and sleeps if the spin gives up.
    pub(super) fn spin_or_sleep(&self, stats: &mut LockStats) {
        if let Err(seen) = self.spin(stats) {
            self.sleep_until_acquired(stats, seen);
        }
    }

    /// Counts this thread as a sleeper and runs the sleeping loop.
    pub(super) fn sleep(&self, stats: &mut LockStats) {
        // The bell before the count: any wake rung for a word that counts
        // this thread comes after this load (Acquire here, Release on the
        // ringer's increment, which follows its word RMW).
        let seen = self.slots.bell().load(Ordering::Acquire);
        self.slots.word().fetch_add(SLEEPER, Ordering::Relaxed);
        self.sleep_until_acquired(stats, seen);
    }

    /// The sleeping loop of a thread already counted as a sleeper, which
    /// had seen the bell at `seen` before it was counted.
    ///
    /// Wakes are meant to be first come, first served: the kernel wakes
    /// the longest sleeper (traced: 82 to 94% of wakes; but every woken
    /// thread is entitled, so those still waiting for a CPU compete for
    /// the marks), and only a sleeper that a wake was rung for may act on
    /// what the wake announced (a mark, or state 2). A sleeper is
    /// *entitled* when the bell has rung since it last looked: every ring
    /// follows an RMW that saw sleepers counted, and each of those had
    /// looked before, so someone entitled always comes; a thread that just
    /// arrived (the turn-giver retiring, a waiter that found no slot) has
    /// not, and goes to sleep behind the others instead of taking the
    /// slot kept for the woken one (measured before this rule: threads
    /// that had just run took most of the wakes, and at 256 threads the
    /// busiest got 6 times the share of the idlest).
    ///
    /// The entitled take state 2, claim the slot kept for them (or clear
    /// the mark if the policy has no slot), or take a free lock nobody
    /// spins for. The others take only a lock nobody is designated for:
    /// free (or reserved for a waiter) with no spinner and no mark.
    #[cold]
    #[link_section = "contend_measured"] // crate docs: Placement
    pub(super) fn sleep_until_acquired(&self, stats: &mut LockStats, mut seen: u32) {
        loop {
            // The bell before the word: a wake rung after this load makes
            // the wait below return at once, and one rung before it comes
            // with a word change this load sees.
            let rung = self.slots.bell().load(Ordering::Acquire);
            let w = self.slots.word().load(Ordering::Relaxed);
            let entitled = rung != seen;
            let marks = w & (WAKING | ROTATING);
            if entitled && w & STATE == HANDOFF {
                if self.take(&[HANDOFF], -i64::from(SLEEPER), WAKING | ROTATING) {
                    return;
                }
                continue;
            }
            if entitled && marks != 0 {
                // Awake, and a slot was kept for us: spin in it (even if the
                // lock is free: the spinner takes it once it sees the owner
                // left), or if the policy has no slot to give, clear the
                // mark. One mark per sleeper: with both set, two were woken.
                let mark = if marks & ROTATING != 0 { ROTATING } else { WAKING };
                let spin = spinners(w) < self.slots.max_spinners();
                let next = if spin { w - SLEEPER + SPINNER } else { w } & !mark;
                let claimed =
                    self.slots.word().compare_exchange(w, next, Ordering::Relaxed, Ordering::Relaxed).is_ok();
                if claimed && spin {
                    match self.spin(stats) {
                        Ok(()) => return,
                        Err(again) => seen = again,
                    }
                }
                continue;
            }
            if self.take_free(true, entitled) {
                return;
            }
            // Held, or free with a spinner or a woken sleeper to take it:
            // a spinner either takes the lock or turns sleeper, awake, in
            // one RMW, so the lock is never left free with only sleepers
            // to notice.
            stats.add_wait();
            seen = rung;
            F::wait(self.slots.bell(), rung);
        }
    }

    /// Runs a slow path of `lock`; if the thread slept in it, its next
    /// quantum starts afresh. The guess for the word is then 0 (not known:
    /// the slow paths' CAS loops do not report what they wrote).
    ///
    /// Never inlined: inlined at its two call sites in `lock`, it made the
    /// caller's loop keep the node in memory, and the uncontended cycle ran
    /// at 0.979x parking_lot (10 interleaved rounds, 95% interval 0.977 to
    /// 0.981; 0.998, 0.993 to 1.003, with this attribute).
    #[cold]
    #[inline(never)]
    #[link_section = "contend_measured"] // crate docs: Placement
    pub(super) fn lock_slow(
        &self,
        node: &AdaptiveNode,
        stats: &mut LockStats,
        path: fn(&Self, &mut LockStats),
    ) {
        let waits = stats.counts().waits;
        path(self, stats);
        node.word.set(UNLOCKED);
        node.waited.set(true);
        if stats.counts().waits != waits {
            node.since.set(0);
            node.countdown.set(0);
        }
    }

    /// The lock of a thread whose fast path found the lock taken: spins in
    /// a free slot; else looks again a few times (pausing, then yielding),
    /// taking the lock only if nobody is designated for it, then sleeps.
    pub(super) fn lock_contended(&self, stats: &mut LockStats) {
        for retry in 0..SLOT_RETRIES {
            if self.enter_spinning() {
                return self.spin_or_sleep(stats);
            }
            if self.slots.max_spinners() == 0 {
                break;
            }
            if self.take_free(false, false) {
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
        self.sleep(stats);
    }

    /// The lock of a thread whose last unlock gave a spinner its turn: it
    /// spins in a free slot (the new owner's batch runs meanwhile), or
    /// retires to sleep; either way without barging.
    pub(super) fn lock_after_turn(&self, stats: &mut LockStats) {
        let mut taken = false;
        loop {
            if self.enter_spinning() {
                return self.spin_or_sleep(stats);
            }
            // The spinner we gave the turn to frees its slot as it takes
            // the lock, within a cache miss or two: wait for that (and look
            // once more after it), unless the slot is kept for a woken
            // sleeper: then we retire.
            let w = self.slots.word().load(Ordering::Relaxed);
            if taken || w & (WAKING | ROTATING) != 0 {
                break;
            }
            taken = w & STATE != TO_WAITER;
            spin_loop();
        }
        self.sleep(stats);
    }
}
