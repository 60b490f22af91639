//! What lives in the run's arena besides the lock: the header every worker
//! reads (witness, stop flag, start gate, injected fault) and each worker's
//! published counters and state.

use crate::family::lock::workload::fault::Fault;
use crate::measure::shared_hist::SharedHistogram;
use crate::model::lock::WorkerCounts;
use crossbeam_utils::CachePadded;
use locks::gate::Gate;
use locks::sys::shm::Arena;
use locks::{LockStats, SharedCounts};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering::Relaxed};

/// Where a worker is, for diagnosing a stalled lock. With no idle work a
/// worker does not store IDLE: it stays HOLDING from its unlock to its
/// next WAITING, a few instructions later (a stall leaves no worker there).
pub(super) const IDLE: u32 = 0;
pub(super) const WAITING: u32 = 1;
pub(super) const HOLDING: u32 = 2;

/// A worker's published counters: written only by their owner, read by the
/// coordinator at the window edges.
#[derive(Default)]
pub struct Slot {
    pub(super) state: AtomicU32,
    acquisitions: AtomicU64,
    hold_ns: AtomicU64,
    stretched_holds: AtomicU64,
    /// The lock's own counts, which its slow paths store as they move
    /// ([`Slot::lock_stats`]).
    lock_counts: SharedCounts,
    /// Reader-writer runs only, so on the next line: the shared and the
    /// exclusive acquisitions, and the reads that saw a writer inside.
    reads: AtomicU64,
    writes: AtomicU64,
    overlaps: AtomicU64,
    /// Sampled acquisition latencies (after the counters, which the
    /// worker writes every critical section, so those stay on one line);
    /// of the writes, in a reader-writer run.
    pub(super) latency: SharedHistogram,
    /// Sampled latencies of the reads, in a reader-writer run.
    pub(super) read_latency: SharedHistogram,
}

impl Slot {
    /// The worker's `LockStats`, which publish the lock's counts here as
    /// its slow paths move them: the loop itself never looks at them.
    pub(super) fn lock_stats(&self) -> LockStats<'_> {
        LockStats::published_to(&self.lock_counts)
    }

    /// Counts one more critical section of `this_hold` ns and publishes
    /// what moved: the acquisitions every cycle, the hold time when the
    /// hold took any, the stretched holds when they grew (a preempted
    /// hold). At hold 0 the worker loop is bound by its stores (it stored
    /// 14 words a cycle, 3.9 ns, when each counter was stored every
    /// cycle), and a counter that did not move stays exact without one.
    #[inline(always)]
    pub(super) fn count(&self, tally: &mut Tally, this_hold: u64, stretched_above: u64) {
        tally.acquisitions += 1;
        self.acquisitions.store(tally.acquisitions, Relaxed);
        if this_hold != 0 {
            tally.hold_ns += this_hold;
            self.hold_ns.store(tally.hold_ns, Relaxed);
            if this_hold > stretched_above {
                tally.stretched += 1;
                self.stretched_holds.store(tally.stretched, Relaxed);
            }
        }
    }

    /// A reader-writer worker's reads and writes so far.
    #[inline(always)]
    pub(super) fn publish_kinds(&self, reads: u64, writes: u64) {
        self.reads.store(reads, Relaxed);
        self.writes.store(writes, Relaxed);
    }

    /// A reader-writer worker's reads that saw a writer inside, so far
    /// (stored when one does: the run then fails).
    #[cold]
    pub(super) fn publish_overlaps(&self, overlaps: u64) {
        self.overlaps.store(overlaps, Relaxed);
    }

    /// Reads that saw a writer inside (0 for a lock that works).
    pub(super) fn overlaps(&self) -> u64 {
        self.overlaps.load(Relaxed)
    }

    /// The worker's counters now. A reader-writer worker's (`rw`)
    /// acquisitions are its reads plus its writes, not its acquisitions
    /// counter: the coordinator loads each counter at its own instant
    /// while the worker runs, and two counters of one kind (reads and
    /// acquisitions) loaded a cycle apart gave a window more reads than
    /// acquisitions (a read counted after the acquisitions were loaded:
    /// u64::MAX writes). Reads and writes are each exact between their own
    /// two loads, and add up to the acquisitions by construction.
    pub(super) fn read(&self, rw: bool) -> WorkerCounts {
        let reads = self.reads.load(Relaxed);
        let acquisitions =
            if rw { reads + self.writes.load(Relaxed) } else { self.acquisitions.load(Relaxed) };
        let lock = self.lock_counts.load();
        WorkerCounts {
            acquisitions,
            hold_ns: self.hold_ns.load(Relaxed),
            stretched_holds: self.stretched_holds.load(Relaxed),
            spins: lock.spins,
            waits: lock.waits,
            wakes: lock.wakes,
            recoveries: lock.recoveries,
            reads,
        }
    }
}

/// A worker's running totals.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) acquisitions: u64,
    hold_ns: u64,
    stretched: u64,
}

/// The arena's shared header.
#[derive(Default)]
pub struct Header {
    pub(super) witness: CachePadded<AtomicU64>,
    /// 1 while a writer of a reader-writer lock is inside: its readers
    /// check it on entry and exit.
    pub(super) writer_in: CachePadded<AtomicU32>,
    pub(super) stop: CachePadded<AtomicBool>,
    pub(super) gate: CachePadded<Gate>,
    pub(super) fault: CachePadded<Fault>,
    /// The errno of the first worker that could not pin itself
    /// (`--affinity`; 0: none failed), and which worker it was.
    pub(super) pin_errno: AtomicI32,
    pub(super) pin_failed: AtomicU32,
}

pub(super) type LockArena<L> = Arena<L, Header, CachePadded<Slot>>;

/// One of the locks `--locks N` spreads the workers over, with its own
/// mutual-exclusion witness (the header's is the single lock's).
pub struct LockCell<L> {
    pub(super) lock: L,
    pub(super) witness: AtomicU64,
}

/// The locks of a run with `--locks N` above 1, each in its own cache
/// lines, in a mapping of their own (shared with worker processes when the
/// workers are processes). Worker `i` takes lock `i % N`.
pub(super) type LockTable<L> = Arena<(), (), CachePadded<LockCell<L>>>;

/// The lock worker `me` takes, and the witness that goes with it.
pub(super) fn lock_of<'a, L>(
    arena: &'a LockArena<L>,
    table: Option<&'a LockTable<L>>,
    me: usize,
) -> (&'a L, &'a AtomicU64) {
    match table {
        Some(t) => {
            let cell = t.slot(me % t.len());
            (&cell.lock, &cell.witness)
        }
        None => (arena.lock(), &arena.header().witness),
    }
}

/// The acquisitions the witnesses counted: the sum over the table, or the
/// single lock's.
pub(super) fn witnessed<L>(arena: &LockArena<L>, table: Option<&LockTable<L>>) -> u64 {
    match table {
        Some(t) => (0..t.len()).map(|i| t.slot(i).witness.load(Relaxed)).sum(),
        None => arena.header().witness.load(Relaxed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_writer_slot_counts_its_acquisitions_as_reads_plus_writes() {
        let slot = Slot::default();
        // The acquisitions counter one cycle ahead of the kinds, as the
        // coordinator can see it between the worker's two stores.
        let mut tally = Tally::default();
        for _ in 0..6 {
            slot.count(&mut tally, 0, u64::MAX);
        }
        slot.publish_kinds(3, 2);
        let rw = slot.read(true);
        assert_eq!((rw.acquisitions, rw.reads), (5, 3));
        // A mutex's slot keeps its own counter.
        assert_eq!(slot.read(false).acquisitions, 6);
    }

    #[test]
    fn a_slot_shows_what_its_worker_counted() {
        let (slot, mut tally) = (Slot::default(), Tally::default());
        slot.count(&mut tally, 0, u64::MAX);
        let c = slot.read(false);
        assert_eq!((c.acquisitions, c.hold_ns, c.spins), (1, 0, 0));
        // The lock's slow path counts: the slot shows it before the cycle
        // is counted.
        let mut stats = slot.lock_stats();
        stats.add_spins(3);
        stats.add_wait();
        let c = slot.read(false);
        assert_eq!((c.acquisitions, c.spins, c.waits), (1, 3, 1));
        slot.count(&mut tally, 700, 1_000);
        let c = slot.read(false);
        assert_eq!((c.acquisitions, c.hold_ns, c.stretched_holds, c.spins, c.waits), (2, 700, 0, 3, 1));
        // A stretched hold, a wake and a recovery.
        stats.add_wake();
        stats.add_recovery();
        slot.count(&mut tally, 9_000, 1_000);
        let c = slot.read(false);
        assert_eq!(
            (c.acquisitions, c.hold_ns, c.stretched_holds, c.wakes, c.recoveries),
            (3, 9_700, 1, 1, 1)
        );
    }
}
