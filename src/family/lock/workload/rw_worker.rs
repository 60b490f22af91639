//! The measured loop of a reader-writer lock's worker: per acquisition it
//! draws read or write from its own seeded generator, then takes the lock
//! shared or exclusive, holds, releases, publishes and idles, as the mutex
//! loop does. Writers keep the mutual-exclusion witness; readers check
//! that no writer was inside while they were.

use crate::family::lock::workload::fault::monotonic_ns;
use crate::family::lock::workload::shared::{LockArena, Tally, HOLDING, IDLE, WAITING};
use crate::family::lock::workload::worker::{every_nth_timed, Cycle};
use locks::RawRwLock;
use std::sync::atomic::Ordering::Relaxed;

/// xorshift64 (Marsaglia 2003): three shifts per draw, no shared state,
/// so the choice costs the loop a few cycles and each worker's sequence
/// is the same in every run.
struct Draw(u64);

impl Draw {
    fn seeded(worker: usize) -> Self {
        // Any odd multiplier spreads the worker indices; never zero.
        Self((worker as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 32 random bits.
    #[inline(always)]
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 32) as u32
    }
}

/// The threshold below which a draw reads: `read_pct`% of 2^32.
fn read_threshold(read_pct: u32) -> u64 {
    (u64::from(read_pct.min(100)) << 32) / 100
}

/// Runs one reader-writer worker until the stop flag rises; in the
/// measured section, as the mutex worker is.
#[inline(never)]
#[allow(unsafe_code)] // link_section: a named code section, nothing else.
#[link_section = "contend_measured"]
pub(super) fn rw_worker<L: RawRwLock>(arena: &LockArena<L>, me: usize, work: Cycle, read_pct: u32) {
    let Cycle { hold, idle, latency_every } = work;
    let header = arena.header();
    if !header.gate.arrive_and_wait() {
        return;
    }
    let (lock, slot) = (arena.lock(), arena.slot(me));
    let (witness, writer_in) = (&*header.witness, &*header.writer_in);
    let node = L::Node::default();
    let mut stats = slot.lock_stats();
    let stretched_above = hold.stretched_above();
    let (mut tally, mut reads, mut overlaps) = (Tally::default(), 0u64, 0u64);
    let idles = !idle.is_none();
    let (mut draw, threshold) = (Draw::seeded(me), read_threshold(read_pct));
    // One cycle, as the mutex worker's macro, with the kind drawn first.
    // Whether it is timed is a constant of each copy; which kind it is
    // cannot be (the draw is the point), so each copy branches on it.
    macro_rules! cycle {
        ($timed:literal) => {{
            let read = u64::from(draw.next()) < threshold;
            slot.state.store(WAITING, Relaxed);
            let asked = if $timed { monotonic_ns() } else { 0 };
            let (this_hold, acquired) = if read {
                lock.with_shared(&node, &mut stats, || {
                    let acquired = if $timed { Some(monotonic_ns()) } else { None };
                    slot.state.store(HOLDING, Relaxed);
                    // A writer inside now, or one that came and went
                    // during the hold (the witness moved), overlapped us.
                    let (seen, busy) = (witness.load(Relaxed), writer_in.load(Relaxed));
                    let spent = hold.run_from(acquired);
                    let alone = busy == 0 && writer_in.load(Relaxed) == 0 && witness.load(Relaxed) == seen;
                    if !alone {
                        overlaps += 1;
                        slot.publish_overlaps(overlaps);
                    }
                    (spent, acquired)
                })
            } else {
                lock.with(&node, &mut stats, || {
                    let acquired = if $timed { Some(monotonic_ns()) } else { None };
                    slot.state.store(HOLDING, Relaxed);
                    writer_in.store(1, Relaxed);
                    let seen = witness.load(Relaxed);
                    let spent = hold.run_from(acquired);
                    witness.store(seen + 1, Relaxed);
                    writer_in.store(0, Relaxed);
                    (spent, acquired)
                })
            };
            if idles {
                slot.state.store(IDLE, Relaxed);
            }
            if let Some(acquired) = acquired {
                let into = if read { &slot.read_latency } else { &slot.latency };
                into.record(acquired.saturating_sub(asked));
            }
            slot.count(&mut tally, this_hold, stretched_above);
            reads += u64::from(read);
            slot.publish_kinds(reads, tally.acquisitions - reads);
            idle.run();
        }};
    }
    every_nth_timed!(header.stop, latency_every, cycle);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_draw_reads_its_share() {
        for pct in [0, 1, 50, 90, 100] {
            let (mut d, t) = (Draw::seeded(3), read_threshold(pct));
            let reads = (0..100_000).filter(|_| u64::from(d.next()) < t).count();
            let share = reads as f64 / 1000.0;
            assert!((share - f64::from(pct)).abs() < 1.0, "{pct}%: read {share}%");
        }
    }

    #[test]
    fn workers_draw_different_sequences() {
        let (mut a, mut b) = (Draw::seeded(0), Draw::seeded(1));
        assert!((0..8).any(|_| a.next() != b.next()));
    }
}
