//! The event counts a lock records on its slow paths ([`LockStats`]), and
//! where a measuring harness reads them while the worker runs
//! ([`SharedCounts`]).
//!
//! A lock publishes a count as it moves, on the slow path that moved it,
//! so the harness's loop never looks at the counts. It used to: after each
//! critical section it summed the four counts and stored them when the sum
//! had moved. For a lock that never touches its `LockStats` (std's,
//! parking_lot's) the compiler folded that away; for one that does (a slow
//! path that takes `&mut LockStats` may have changed them) it stayed, four
//! loads, three adds and a branch a cycle. That charged adaptive about 10%
//! at one thread, hold 0 (`scripts/experiments/ab-binaries.py`, 16 pairs:
//! 1.099, 1.048..1.153 without the check), a cost of the harness the
//! opaque locks did not pay.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A worker's event counts, as plain numbers.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct LockCounts {
    /// Failed user-space attempts (a CAS that lost, or a poll that saw the
    /// lock taken) before the lock was acquired or the waiter slept.
    pub spins: u64,
    /// Futex waits issued (including ones that returned EAGAIN at once).
    pub waits: u64,
    /// Futex wakes issued.
    pub wakes: u64,
    /// Acquisitions that found the previous owner dead (robust locks).
    pub recoveries: u64,
}

/// The counts a worker's lock records, kept by the worker (so counting
/// costs no shared-memory traffic where nobody reads them) and, when
/// made with [`LockStats::published_to`], stored as they move where the
/// harness reads them. The counts only grow, through the `add_*` methods.
#[derive(Debug, Default)]
pub struct LockStats<'a> {
    counts: LockCounts,
    published: Option<&'a SharedCounts>,
}

/// A worker's counts where another thread or process reads them while it
/// runs: written only through that worker's [`LockStats`].
#[derive(Debug, Default)]
pub struct SharedCounts {
    spins: AtomicU64,
    waits: AtomicU64,
    wakes: AtomicU64,
    recoveries: AtomicU64,
}

impl SharedCounts {
    /// The counts as last published.
    pub fn load(&self) -> LockCounts {
        LockCounts {
            spins: self.spins.load(Relaxed),
            waits: self.waits.load(Relaxed),
            wakes: self.wakes.load(Relaxed),
            recoveries: self.recoveries.load(Relaxed),
        }
    }
}

impl<'a> LockStats<'a> {
    /// Counts on from what `shared` holds (zero when fresh), and stores
    /// each count there as it moves. One `LockStats` at a time per
    /// `SharedCounts`: it is the only writer.
    pub fn published_to(shared: &'a SharedCounts) -> Self {
        Self { counts: shared.load(), published: Some(shared) }
    }

    /// The counts so far.
    #[inline]
    pub fn counts(&self) -> LockCounts {
        self.counts
    }

    /// `n` more spins.
    #[inline]
    pub fn add_spins(&mut self, n: u64) {
        self.add(n, |c| &mut c.spins, |s| &s.spins);
    }

    /// One more futex wait.
    #[inline]
    pub fn add_wait(&mut self) {
        self.add(1, |c| &mut c.waits, |s| &s.waits);
    }

    /// One more futex wake.
    #[inline]
    pub fn add_wake(&mut self) {
        self.add(1, |c| &mut c.wakes, |s| &s.wakes);
    }

    /// One more acquisition that found the previous owner dead.
    #[inline]
    pub fn add_recovery(&mut self) {
        self.add(1, |c| &mut c.recoveries, |s| &s.recoveries);
    }

    /// Adds `n` to one count, and publishes it if this worker publishes.
    #[inline(always)]
    fn add(
        &mut self,
        n: u64,
        count: fn(&mut LockCounts) -> &mut u64,
        shared: fn(&SharedCounts) -> &AtomicU64,
    ) {
        let count = count(&mut self.counts);
        *count += n;
        if let Some(published) = self.published {
            shared(published).store(*count, Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_count_is_published_as_it_moves() {
        let shared = SharedCounts::default();
        let mut stats = LockStats::published_to(&shared);
        stats.add_spins(3);
        assert_eq!(shared.load(), LockCounts { spins: 3, ..LockCounts::default() });
        stats.add_wait();
        stats.add_wake();
        stats.add_wake();
        stats.add_recovery();
        let want = LockCounts { spins: 3, waits: 1, wakes: 2, recoveries: 1 };
        assert_eq!((stats.counts(), shared.load()), (want, want));
        // A later LockStats on the same counts goes on from them.
        let mut again = LockStats::published_to(&shared);
        again.add_spins(1);
        assert_eq!(shared.load().spins, 4);
    }

    #[test]
    fn unpublished_stats_count_alone() {
        let mut stats = LockStats::default();
        stats.add_spins(2);
        stats.add_wait();
        assert_eq!(stats.counts(), LockCounts { spins: 2, waits: 1, ..LockCounts::default() });
    }
}
