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
//! 1. **Costs one CAS each way**, whether or not a spinner waits: the
//!    counts live in the word, so the owner's unlock is a single RMW
//!    whatever it decides, and the thread's node remembers the value
//!    it last wrote (less the state bits), so an owner that re-locks at
//!    once CASes from the word as it left it rather than from a bare 0
//!    or 1 that no longer matches (that guess doubled throughput at a
//!    0 ns hold). Uncontended, nothing is written to the node.
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
//!    takes the lock instead) and no woken sleeper is on its way (WAKING
//!    or ROTATING).
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
//!    not take the CPU away from the owner. They do not take a free lock
//!    that a spinner or a woken sleeper is about to take.
//! 6. **Rotates by time, first come first served.** A thread stays in the
//!    active set (owner or spinner) for a quantum of 50 wake costs (about
//!    500 µs), counted from when it last slept. At the first turn it
//!    gives after that (or, with no spinner, the first unlock), if anyone
//!    sleeps, the unlock also wakes a sleeper to take the spinner slot
//!    (ROTATING, if a sleeper is left that was not woken already; with
//!    no spinner it hands the lock to a sleeper: state 2), and the thread
//!    goes to sleep itself. A rotation
//!    costs one wake per quantum, about 2%. Sleepers sleep on a separate
//!    futex word, the bell, which changes only when a wake is rung, so a
//!    woken sleeper that finds nothing for it gets back to sleep in one
//!    syscall (on the lock word, whose ticks change at every unlock, it
//!    looped on failing waits). Only a sleeper for which a wake was rung
//!    may act on it, so that the kernel's first-in first-out wake order
//!    is the rotation order: a thread that has just run takes the slot
//!    kept for the one woken only if a ring lands between its look at
//!    the bell and its wait (at 256 threads, acquisitions right after a
//!    wait the kernel refused that way were 3% of those after a sleep).
//!    In effect, when dozens of woken threads wait for a CPU, they
//!    rejoin in the scheduler's order (see the known failure modes).
//!
//! Why one word: every decision (wake or not, hand off to whom, sleep or
//! claim) is made on the value a single read-modify-write returned, so the
//! protocol needs no store-load ordering between two variables. A first
//! version kept the counts beside the word and loom found a lost wake: a
//! spinner could turn sleeper between the unlocker's read of the counts
//! and its write of the word. The bell is not part of the decisions: it
//! only tells a sleeper that something was decided for the sleepers since
//! it last looked.
//!
//! Nothing in the word speaks for a thread that is outside `lock` and
//! `unlock`: it may never call them again. (Counting the owner that gives
//! a turn as the next spinner in the same RMW would spare the new owner a
//! wake while the giver walks back to the slot; tried, it left 255
//! sleepers asleep for good when the threads stopped, since a counted
//! spinner tells every unlock that nobody needs waking.) What is left to
//! a thread's next call lives in its node.
//!
//! The node (turn mark, CAS guess, quantum) is state across acquisitions;
//! a caller that uses a fresh node each time loses those, not correctness.
//! `--spin` does not apply: the budgets are times derived from the
//! measured wake cost. At most 65 535 threads may wait at once (the
//! sleeper field).
//!
//! Known failure modes: with many more threads than CPUs, a woken sleeper
//! may preempt the owner inside the lock (the scheduler favours the
//! thread that slept), and a spinner then spends its patience for
//! nothing. And at hundreds of threads with a 0 ns hold, most stays end
//! before their quantum, so the shares spread over short windows (Jain's
//! index about 0.8 over 300 ms at 256 threads, where parking_lot, which
//! wakes a thread at every contended unlock, gets 0.96). Measured per
//! thread over two runs: about 90% of the sleeps came from a thread that
//! found the spinner slot kept for a woken sleeper. That sleeper was rung
//! by a release that found no spinner, because the thread that had just
//! given the turn had not yet got back to the slot. Such stays lasted a
//! median of 400 to 2 200 critical sections, against 9 000 to 21 000 for
//! those that ran their quantum, so a thread's share follows how many
//! full quanta it happened to get (correlation 0.7 across threads).
//! The spread is short-term: over longer windows the counts even out as
//! a random count of stays would, Jain being about k/(k+1) for k stays
//! per thread. At 256 threads, 0 ns, 3 runs each: 0.77 to 0.80 over
//! 300 ms, 0.93 over 1 s, 0.97 over 3 s, against parking_lot's 0.87 to
//! 0.97, 0.98 to 0.99 and 0.99 to 1.00.
//!
//! Nor do the sleepers come round in turn (in one run threads slept 9 to
//! 37 times), and the kernel is not the cause. Traced with
//! `scripts/futex-order.py`, each FUTEX_WAKE on the bell woke the thread
//! that had waited longest (82 to 94% of wakes in 5 runs; the rest
//! mostly one place behind). But the woken thread then needs a CPU
//! while the owner and the spinner hold both: from wake-up to leaving
//! the syscall took a median of 1.2 to 2.0 ms, p90 8 to 12 ms.
//! Meanwhile the unlocks go on ringing, and at the median wake 35 to 46
//! woken threads were not yet back. Any of them may claim the mark rung
//! for another, so sleepers rejoin in the scheduler's order among the
//! woken, not in the order they slept.
//!
//! And a CPU idles where parking_lot's do not. Traced with
//! `scripts/sched-idle.py` at a 0 ns hold (two 1 s runs each, at most 4%
//! steal), the CPUs were idle 7 to 13% of the time at 4 threads, 13 to
//! 16% at 16 and 5 to 14% at 256, nearly always from a worker going to
//! sleep, against about 1% for parking_lot at 16 threads, whose waiters
//! yield (some 430 000 times to 700 sleeps). Woken workers took a median
//! of 26 to 42 µs to run at 4 threads, 64 to 85 µs at 16 and 0.8 to
//! 2.7 ms at 256 (parking_lot: 10 to 20 µs). Of the wakes that took over
//! 100 µs, at 4 threads most went to an idle CPU that had halted (226
//! of 371: this guest does not poll before it halts, so the hypervisor
//! decides when the vCPU runs again); at 16 threads most waited behind
//! a busy CPU while the other was idle for some of that time (3 450 of
//! 6 449, against 1 115 sent to an idle CPU): the scheduler queued the
//! woken thread beside the owner or the spinner and did not move it.
//! At 256 a quarter did (2 496 of 9 135), and most of the rest queued
//! behind two busy CPUs. The idle CPU is the spinner's; whether it
//! costs throughput (the owner runs its batch meanwhile) was not
//! measured.
//!
//! Measured and not kept (A/B against this design, 300 ms runs):
//! - Only a thread the kernel woke may act on a ring (a bit in the bell
//!   marks rings that found nobody queued): Jain medians 0.88 and 0.84
//!   against 0.82 and 0.88, in series of 6 and 10 pairs; no change.
//! - No ring while a woken thread is not yet back (a counter beside the
//!   word, in a throwaway build). The order became first come, first
//!   served: at 90% of the wakes or more no woken thread was still
//!   waiting, and they came back in a median of 31 µs. But Jain fell to
//!   0.78 against 0.86 (5 pairs) and CPU idle rose from 12% to 39%:
//!   stays still differ in length, and the slot kept for a woken thread
//!   stays empty until it runs.
//! - The same done in the protocol (an AWAKE bit in the word: unlocks
//!   that see a woken thread on its way set their marks without ringing,
//!   and that thread rings for what is left once back), with the first
//!   slow unlock after a turn waiting up to 0.9 µs for the turn-giver to
//!   come back to the slot. At 256 threads and 0 ns: Jain median 0.93
//!   against 0.88 and 6% more throughput (8 pairs); at 16 threads and
//!   0 ns: 12% less throughput (5 pairs). On the way loom found a lost
//!   wake and two livelocks (a thread woken just after its look was not
//!   entitled to the mark it owed; two sleepers each ringing for the
//!   other), and the fixed version's rotation model did not finish in
//!   25 minutes where this design's takes 8: too long for CI, so it is
//!   not in.
//! - A quantum of 5 wake costs, short enough for every stay to reach:
//!   about 30% less throughput in two runs, and Jain as uneven.
//! - The quantum counted across stays that ended early: no change (Jain
//!   median 0.80 both ways, 8 runs each).
//! - Loading the word before each CAS instead of keeping the guess in
//!   the node (so nothing is written to the node): at one thread, 0 ns,
//!   42.9M cs/s against 55.2M (10 pairs, medians); at 16 threads, a
//!   median 0.80x over 8 back-to-back pairs.
//! - No other node writes in a contended unlock (the clock looked at
//!   when the ticks wrap instead of a per-thread countdown, `next`
//!   written only when not Fast): at 0 ns, medians of back-to-back
//!   pairs 0.99x and 0.98x at 16 threads (20 pairs each, under 30 to
//!   40% steal and under none), 0.92x at 256 (12 pairs): no gain.
//! - A waiting spinner that yields when an unlock has not happened since
//!   its last look (to give back the CPU to an owner preempted on it):
//!   0.93x at 16 threads, 0 ns (16 pairs, 44% steal): not shown to help.

use crate::primitive::{spin_loop, AtomicU32, Ordering};
use crate::sys::{DefaultFutex, Futex};
use crate::{Caps, LockConfig, LockStats, RawLock, Spinners, TryLock};
use crossbeam_utils::CachePadded;
#[cfg(loom)]
use loom::thread::yield_now;
use std::cell::Cell;
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
/// thread whose quantum ended does not take it (it retires to sleep), and
/// unlocks need not wake another.
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
/// Slow unlocks between looks at the clock for the owner's quantum
/// (about 25 ns a look through the vDSO: at a 0 ns hold, 1% of a
/// critical section).
#[cfg(not(loom))]
const CLOCK_EVERY: u32 = 32;
/// The quantum, in wake costs: a thread stays in the active set (owner or
/// spinner) this long before it makes way for a sleeper, so a rotation,
/// which costs one wake, costs about 2% of the time it buys. (At 25, 4
/// threads at a 1 µs hold lost some 5% of throughput to rotations; at 50,
/// 256 threads still share within Jain 0.95 at a 1 µs hold over 200 ms.)
#[cfg(not(loom))]
const QUANTUM_WAKES: u64 = 50;

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
    /// measured; set at its first look at the clock after it slept).
    since: Cell<u64>,
    /// Slow unlocks left before the next look at the clock.
    countdown: Cell<u32>,
}

/// The adaptive mutex; see the module docs.
pub struct Adaptive<F: Futex = DefaultFutex> {
    word: CachePadded<AtomicU32>,
    /// What sleepers sleep on: a count of the wakes rung. Sleeping on the
    /// word itself fails whenever it changed since the sleeper read it,
    /// which with an owner cycling every 20 ns is nearly always, so a
    /// woken sleeper that found nothing for it could not get back to
    /// sleep: it looped on failing waits (hundreds per wake, measured)
    /// and barged in. The bell changes only when a wake is meant.
    bell: CachePadded<AtomicU32>,
    max_spinners: u32,
    /// How long a spinner waits before it asks for its turn, ns.
    turn_ns: u64,
    /// How long a spinner waits for its turn before it sleeps, ns.
    patience_ns: u64,
    /// How long a thread stays active before it makes way, ns.
    #[cfg(not(loom))]
    quantum_ns: u64,
    futex: PhantomData<F>,
}

/// Monotonic ns (about 25 ns through the vDSO, and read once every
/// `CLOCK_EVERY` slow unlocks; the coarse clock's resolution, a 4 ms tick
/// at HZ=250, is too coarse for the quantum).
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

    /// Takes a free lock (state 0, or 3 with nobody left to take it) that
    /// no spinner will take, leaving the sleeper count if `sleeper`. Only
    /// an `entitled` sleeper (a wake was rung for it) may take it from
    /// under a mark, clearing the marks: it is the woken thread, or the
    /// wake went to nobody, and a mark left with nobody entitled to it
    /// would stop the unlocks from waking anyone. Anyone else leaves a
    /// marked lock to the woken: a waiter that found no slot, or a sleeper
    /// that has just arrived, does not overtake those queued.
    fn take_free(&self, sleeper: bool, entitled: bool) -> bool {
        let delta = if sleeper { SLEEPER } else { 0 };
        self.word
            .fetch_update(Ordering::Acquire, Ordering::Relaxed, |w| {
                let free = matches!(w & STATE, UNLOCKED | TO_WAITER);
                let nobody_else = spinners(w) == 0 && (entitled || w & (WAKING | ROTATING) == 0);
                (free && nobody_else).then(|| ((w & !STATE & !WAKING & !ROTATING) | LOCKED) - delta)
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

    /// Spins in a slot; `Ok` if it took the lock (leaving the slot in the
    /// same CAS). `Err` if the thread has become a sleeper (same RMW),
    /// with the bell as it was before (see `sleep_until_acquired`).
    ///
    /// Two phases. Waiting its turn, the spinner looks at the word rarely
    /// (backing off to `QUIET_PAUSES`), and takes the lock only if it finds
    /// it free with the ticks moved by at most one since its last look:
    /// the owner has left, rather than released and re-locked, so taking
    /// it steals nothing. After `turn_ns` it sets WANT and polls closely
    /// until an unlock reserves the lock for it, or until `patience_ns`
    /// pass without one (the owner is preempted or holds for long:
    /// sleeping is then cheaper).
    fn spin(&self, stats: &mut LockStats) -> Result<(), u32> {
        let mut clock = Stopwatch::start();
        let mut asked_at: Option<u64> = None;
        let mut last_ticks: Option<u32> = None;
        let mut pauses = FIRST_PAUSES;
        let mut quick = false;
        loop {
            let w = self.word.load(Ordering::Relaxed);
            let left = last_ticks.is_some_and(|t| left(t, w));
            let free = match w & STATE {
                TO_WAITER => true,
                UNLOCKED => asked_at.is_some() || left,
                _ => false,
            };
            if free && self.take(&[UNLOCKED, TO_WAITER], -i64::from(SPINNER), WANT) {
                return Ok(());
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
            pause(if asked_at.is_some() {
                1
            } else if quick {
                FIRST_PAUSES
            } else {
                pauses
            });
            pauses = (pauses * 2).min(QUIET_PAUSES);
        }
    }

    /// From spinner to sleeper in one RMW, so no unlock can see neither;
    /// the last spinner out withdraws WANT, which would otherwise keep the
    /// lock reserved (idle) through a sleeper's wake-up. Returns the bell
    /// as it was before.
    fn become_sleeper(&self) -> u32 {
        let seen = self.bell.load(Ordering::Acquire);
        let _ = self.word.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |w| {
            let next = w - SPINNER + SLEEPER;
            Some(if spinners(w) == 1 { next & !WANT } else { next })
        });
        seen
    }

    /// Spins in the slot just taken, and sleeps if the spin gives up.
    fn spin_or_sleep(&self, stats: &mut LockStats) {
        if let Err(seen) = self.spin(stats) {
            self.sleep_until_acquired(stats, seen);
        }
    }

    /// Counts this thread as a sleeper and runs the sleeping loop.
    fn sleep(&self, stats: &mut LockStats) {
        // The bell before the count: any wake rung for a word that counts
        // this thread comes after this load (Acquire here, Release on the
        // ringer's increment, which follows its word RMW).
        let seen = self.bell.load(Ordering::Acquire);
        self.word.fetch_add(SLEEPER, Ordering::Relaxed);
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
    fn sleep_until_acquired(&self, stats: &mut LockStats, mut seen: u32) {
        loop {
            // The bell before the word: a wake rung after this load makes
            // the wait below return at once, and one rung before it comes
            // with a word change this load sees.
            let rung = self.bell.load(Ordering::Acquire);
            let w = self.word.load(Ordering::Relaxed);
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
                let spin = spinners(w) < self.max_spinners;
                let next = if spin { w - SLEEPER + SPINNER } else { w } & !mark;
                let claimed = self
                    .word
                    .compare_exchange(w, next, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok();
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
            stats.waits += 1;
            seen = rung;
            F::wait(&self.bell, rung);
        }
    }

    /// Runs a slow path of `lock`; if the thread slept in it, its next
    /// quantum starts afresh. The guess for the word is then 0 (not known:
    /// the slow paths' CAS loops do not report what they wrote).
    #[cold]
    fn lock_slow(&self, node: &AdaptiveNode, stats: &mut LockStats, path: fn(&Self, &mut LockStats)) {
        let waits = stats.waits;
        path(self, stats);
        node.word.set(UNLOCKED);
        if stats.waits != waits {
            node.since.set(0);
            node.countdown.set(0);
        }
    }

    /// The lock of a thread whose fast path found the lock taken: spins in
    /// a free slot; else looks again a few times (pausing, then yielding),
    /// taking the lock only if nobody is designated for it, then sleeps.
    fn lock_contended(&self, stats: &mut LockStats) {
        for retry in 0..SLOT_RETRIES {
            if self.enter_spinning() {
                return self.spin_or_sleep(stats);
            }
            if self.max_spinners == 0 {
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
        self.sleep(stats);
    }

    /// The unlock of a word that holds more than state 1 (waiters, or a
    /// bit to clear), starting from `seen`, the word as last seen or
    /// guessed. Records in the node what it wrote and what its next lock
    /// does.
    #[inline(never)]
    fn unlock_slow(&self, seen: u32, node: &AdaptiveNode, stats: &mut LockStats) {
        // The state is 1 and only we change it, but counts change under us
        // (a sleeper may even become a spinner), so every branch decides
        // on the word the CAS will replace. The quantum is looked at once,
        // the first time someone sleeps.
        let mut over: Option<bool> = None;
        let mut w = seen;
        loop {
            let mut rest = (w & !STATE & !WANT & !TICKS) | ((w + TICK) & TICKS);
            if sleepers(w) == 0 {
                // Nobody left to take a kept slot.
                rest &= !ROTATING;
            }
            let over_now = sleepers(w) > 0 && *over.get_or_insert_with(|| self.quantum_over(node));
            let (next, wake, retire) = if w == LOCKED {
                // The guess was a bare lock: nothing to decide.
                (UNLOCKED, false, false)
            } else if over_now && spinners(w) == 0 {
                // Our quantum is over and nobody spins: hand the lock to a
                // sleeper (it clears WAKING when it takes) and retire.
                (rest | HANDOFF, true, true)
            } else if w & WANT != 0 && spinners(w) + sleepers(w) > 0 {
                // A spinner's turn. If it turned sleeper since, wake a
                // sleeper to take it (unless one is on its way). If our
                // quantum is over, also wake one to take our place (the
                // slot is kept for it) and retire. (Waiting for the turn
                // rather than giving it early: a spinner that has not
                // asked looks rarely, and would leave the lock idle.) A
                // mark needs a sleeper of its own: ROTATING over a WAKING in
                // flight with one sleeper counted left one of the two with
                // nobody to claim it, and no later sleeper was ever woken
                // (hung at a stop, many spinners, 4 threads, 90% duty).
                let spare = sleepers(w) > u32::from(w & WAKING != 0);
                if spinners(w) == 0 {
                    let wake = w & (WAKING | ROTATING) == 0;
                    (rest | TO_WAITER | if wake { WAKING } else { 0 }, wake, false)
                } else if over_now && w & ROTATING == 0 && spare {
                    (rest | TO_WAITER | ROTATING, true, true)
                } else {
                    (rest | TO_WAITER, false, over_now)
                }
            } else {
                // Release, and mark a wake in flight in the same RMW if one
                // is needed and none is in flight already (a sleeper woken
                // to rotate in is one: it comes to spin).
                let wake = sleepers(w) > 0 && spinners(w) == 0 && w & (WAKING | ROTATING) == 0;
                (rest | if wake { WAKING } else { 0 }, wake, false)
            };
            match self
                .word
                .compare_exchange_weak(w, next, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => {
                    if wake {
                        self.ring(stats);
                    }
                    node.word.set(next & !STATE);
                    node.next.set(if retire {
                        Next::Retire
                    } else if next & STATE == TO_WAITER {
                        Next::AfterTurn
                    } else {
                        Next::Fast
                    });
                    return;
                }
                Err(now) => w = now,
            }
        }
    }

    /// Wakes a sleeper: rings the bell, then makes the syscall. Every RMW
    /// that sets WAKING, ROTATING or state 2 rings once it succeeded, so a
    /// sleeper never sleeps through a change meant for it.
    fn ring(&self, stats: &mut LockStats) {
        stats.wakes += 1;
        self.bell.fetch_add(1, Ordering::Release);
        F::wake(&self.bell, 1);
    }

    /// Whether the owner's quantum is over (looking at the clock every
    /// `CLOCK_EVERY` calls; the first look starts the quantum). Once over
    /// it stays over, looking every call, until the thread retires.
    #[cfg(not(loom))]
    fn quantum_over(&self, node: &AdaptiveNode) -> bool {
        let left = node.countdown.get();
        if left > 0 {
            node.countdown.set(left - 1);
            return false;
        }
        let now = now_ns();
        let over = match node.since.get() {
            0 => {
                node.since.set(now);
                false
            }
            since => now.saturating_sub(since) >= self.quantum_ns,
        };
        if !over {
            node.countdown.set(CLOCK_EVERY - 1);
        }
        over
    }

    /// Under loom (no clock): every other call, so the model covers both.
    #[cfg(loom)]
    fn quantum_over(&self, node: &AdaptiveNode) -> bool {
        let left = node.countdown.get();
        node.countdown.set(if left > 0 { left - 1 } else { 1 });
        left == 0
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
        let wake = crate::sys::wake_cost::wake_cost().as_nanos() as u64;
        #[cfg(not(loom))]
        let (turn_ns, patience_ns) = (2 * wake, 2 * wake);
        // Under loom the stopwatch ticks once per look at the word.
        #[cfg(loom)]
        let (turn_ns, patience_ns) = (1, 2);
        Self {
            word: CachePadded::new(AtomicU32::new(UNLOCKED)),
            bell: CachePadded::new(AtomicU32::new(0)),
            max_spinners: match config.spinners {
                Spinners::None => 0,
                Spinners::One => 1,
                Spinners::Many => SPINNERS >> 9,
            },
            turn_ns,
            patience_ns,
            #[cfg(not(loom))]
            quantum_ns: QUANTUM_WAKES * wake,
            futex: PhantomData,
        }
    }

    fn state_word(&self) -> Option<u32> {
        Some(self.word.load(Ordering::Relaxed))
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
            let path = if next == Next::AfterTurn {
                Self::lock_after_turn
            } else {
                Self::sleep
            };
            return self.lock_slow(node, stats, path);
        }
        // One CAS from the word as this thread's last unlock left it (0
        // when nobody waits); failing that, one from the value the first
        // returned if the lock is free: barging into a free lock costs
        // nobody a wake.
        let guess = node.word.get();
        if let Err(w) =
            self.word
                .compare_exchange(guess, guess | LOCKED, Ordering::Acquire, Ordering::Relaxed)
        {
            if w & STATE == UNLOCKED
                && self
                    .word
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
            if let Err(w) = self
                .word
                .compare_exchange(LOCKED, UNLOCKED, Ordering::Release, Ordering::Relaxed)
            {
                self.unlock_slow(w, node, stats);
            }
        } else {
            self.unlock_slow(guess | LOCKED, node, stats);
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
