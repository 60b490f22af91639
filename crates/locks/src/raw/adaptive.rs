//! `adaptive`: a three-state futex mutex whose waiters follow one of the
//! FUTEX_LOCK RFC's three policies, in user space.
//!
//! | word | meaning |
//! |------|---------|
//! | 0 | unlocked |
//! | 1 | locked, no sleepers |
//! | 2 | locked, sleepers possible |
//! | `releases` | how many times the lock has been released (owners only write it) |
//! | `spinner` | the spinner token (`--spinners one`) |
//! | `avg` | moving average of the polls a successful spin needed |
//!
//! Origin: Darren Hart's FUTEX_LOCK RFC (2010) proposed kernel-side adaptive
//! spinning with three waiting policies: no spinning, one adaptive spinner,
//! many spinners. The protocol underneath is Drepper's mutex 3; the budget
//! is glibc's `PTHREAD_MUTEX_ADAPTIVE_NP` moving average.
//!
//! Policies (`--spinners`): `none` sleeps as soon as the fast path fails;
//! `one` lets at most one waiter spin (whoever holds the token) while the
//! rest sleep, so spinning never eats more than one CPU; `many` lets every
//! waiter spin before sleeping.
//!
//! The heuristic, honestly: the kernel spins while the owner is *running*,
//! and user space cannot see that. What it can see is the lock changing
//! hands: `releases` advances on every unlock. A spinner keeps polling while
//! releases keep coming, and gives up when the same owner has held the lock
//! for `limit` polls, taking that as a sign the owner is preempted or in a
//! long critical section, where sleeping is cheaper than spinning. `limit`
//! follows glibc: `min(--spin, 2 * avg + 10)`, where `avg` moves 1/8 of the
//! way towards the polls each spin used (a successful spin teaches it how
//! long holds last; a failed one pulls it towards the limit). A spinner also
//! stops after `4 * --spin` polls in all, so with `many` and a stream of
//! releases it cannot spin forever.
//!
//! Known failure mode: the evidence is indirect. A long critical section
//! whose owner is running looks like a preempted owner (the waiter sleeps,
//! and the unlocker pays a wake), and a preempted owner in a busy lock can
//! look like progress when others hand the lock around.

use super::mutex3::{self, UNLOCKED};
use crate::primitive::{spin_loop, AtomicBool, AtomicU32, Ordering};
use crate::sys::{DefaultFutex, Futex};
use crate::{Caps, LockConfig, LockStats, RawLock, Spinners, TryLock};
use std::marker::PhantomData;

/// The adaptive three-state mutex; see the module docs.
pub struct Adaptive<F: Futex = DefaultFutex> {
    word: AtomicU32,
    releases: AtomicU32,
    spinner: AtomicBool,
    avg: AtomicU32,
    cap: u32,
    policy: Spinners,
    futex: PhantomData<F>,
}

impl<F: Futex> Adaptive<F> {
    /// The raw lock word, for diagnostics and models.
    pub fn word(&self) -> u32 {
        self.word.load(Ordering::Relaxed)
    }

    #[inline]
    fn try_acquire(&self) -> bool {
        mutex3::try_acquire(&self.word)
    }

    /// Whether this waiter may spin under the policy; for `one`, takes the
    /// token (released by the caller).
    fn may_spin(&self) -> bool {
        match self.policy {
            Spinners::None => false,
            Spinners::Many => true,
            Spinners::One => {
                !self.spinner.load(Ordering::Relaxed) && !self.spinner.swap(true, Ordering::Acquire)
            }
        }
    }

    /// Spins while the lock keeps changing hands; true if it was acquired.
    fn spin(&self, stats: &mut LockStats) -> bool {
        let avg = self.avg.load(Ordering::Relaxed);
        let limit = self.cap.min(avg.saturating_mul(2).saturating_add(10)).max(1);
        let total_cap = self.cap.saturating_mul(4);
        let mut seen = self.releases.load(Ordering::Relaxed);
        let (mut since_release, mut polls) = (0u32, 0u32);
        loop {
            if self.word.load(Ordering::Relaxed) == UNLOCKED && self.try_acquire() {
                self.learn(avg, polls);
                return true;
            }
            polls += 1;
            since_release += 1;
            stats.spins += 1;
            let now = self.releases.load(Ordering::Relaxed);
            if now != seen {
                seen = now;
                since_release = 0;
            }
            if since_release >= limit || polls >= total_cap {
                self.learn(avg, limit);
                return false;
            }
            spin_loop();
        }
    }

    /// Moves the average 1/8 of the way towards `polls` (glibc's rule). Races
    /// between spinners only blur a statistic.
    fn learn(&self, avg: u32, polls: u32) {
        let next = i64::from(avg) + (i64::from(polls) - i64::from(avg)) / 8;
        self.avg
            .store(next.clamp(0, i64::from(self.cap)) as u32, Ordering::Relaxed);
    }

    #[cold]
    fn lock_contended(&self, stats: &mut LockStats) {
        if self.may_spin() {
            let got = self.spin(stats);
            if self.policy == Spinners::One {
                self.spinner.store(false, Ordering::Release);
            }
            if got {
                return;
            }
        }
        mutex3::sleep_until_acquired::<F>(&self.word, stats);
    }
}

// SAFETY: as Drepper's mutex 3: a thread returns from `lock` only after its
// CAS or swap observed UNLOCKED (Acquire), and the word returns to UNLOCKED
// only in `unlock` (Release). Spinning only adds CAS attempts.
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
        Self {
            word: AtomicU32::new(UNLOCKED),
            releases: AtomicU32::new(0),
            spinner: AtomicBool::new(false),
            avg: AtomicU32::new(0),
            cap: config.spin.max(1),
            policy: config.spinners,
            futex: PhantomData,
        }
    }

    fn state_word(&self) -> Option<u32> {
        Some(self.word.load(Ordering::Relaxed))
    }

    #[inline]
    fn lock(&self, _node: &(), stats: &mut LockStats) {
        if !self.try_acquire() {
            self.lock_contended(stats);
        }
    }

    #[inline]
    unsafe fn unlock(&self, _node: &(), stats: &mut LockStats) {
        // Only the owner writes `releases`, so load + store is enough.
        let n = self.releases.load(Ordering::Relaxed);
        self.releases.store(n.wrapping_add(1), Ordering::Relaxed);
        mutex3::release::<F>(&self.word, stats);
    }
}

// SAFETY: the fast path of `lock`.
unsafe impl<F: Futex> TryLock for Adaptive<F> {
    #[inline]
    fn try_lock(&self, _node: &(), _stats: &mut LockStats) -> bool {
        self.try_acquire()
    }
}

/// The same lock over process-shared futex operations, for worker processes.
#[cfg(not(loom))]
pub type SharedAdaptive = Adaptive<crate::sys::futex::SharedFutex>;

// SAFETY: the word is plain data and the futex operations are the shared
// ones, keyed on the page rather than the address space.
#[cfg(not(loom))]
unsafe impl crate::ProcessShared for SharedAdaptive {}
