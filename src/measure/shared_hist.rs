//! A latency histogram that one worker fills and the coordinator reads at
//! the window's edges, like every other published counter: fixed
//! log-linear buckets of atomics (HdrHistogram's layout: 32 sub-buckets
//! per power of two, so a bucket is at most 1/32 = 3.1% wide), living in
//! the run's arena, which worker processes share. No allocation, no
//! hand-back at the end, the same code for threads and processes; the
//! counts are converted into an [`hdrhistogram`] histogram
//! ([`Latencies`]) for the summary and the exports.

use crate::measure::latency::Latencies;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Values below this are their own bucket (exact).
const LINEAR: u64 = 64;
/// Sub-buckets per power of two above [`LINEAR`]: 2^5.
const SUB_BITS: u32 = 5;
const SUB: usize = 1 << SUB_BITS;
/// The largest power of two kept: 2^42 ns, 73 minutes; above it a value
/// counts in the last bucket.
const TOP_EXP: u32 = 42;
/// Buckets: 64 exact ones, then 32 per power of two from 2^6 to 2^42.
pub const BUCKETS: usize = LINEAR as usize + (TOP_EXP as usize - 6 + 1) * SUB;

/// The bucket that holds `ns`.
#[inline(always)]
pub fn index(ns: u64) -> usize {
    if ns < LINEAR {
        return ns as usize;
    }
    let exp = (63 - ns.leading_zeros()).min(TOP_EXP);
    let ns = ns.min((1 << (TOP_EXP + 1)) - 1);
    let sub = ((ns >> (exp - SUB_BITS)) as usize) & (SUB - 1);
    LINEAR as usize + (exp as usize - 6) * SUB + sub
}

/// The smallest and largest values bucket `i` holds.
pub fn bounds(i: usize) -> (u64, u64) {
    if i < LINEAR as usize {
        return (i as u64, i as u64);
    }
    let exp = (i - LINEAR as usize) / SUB + 6;
    let sub = ((i - LINEAR as usize) % SUB) as u64;
    let width = 1u64 << (exp - SUB_BITS as usize);
    let low = (SUB as u64 + sub) * width;
    (low, low + width - 1)
}

/// One worker's histogram.
pub struct SharedHistogram {
    counts: [AtomicU64; BUCKETS],
}

impl Default for SharedHistogram {
    fn default() -> Self {
        Self { counts: std::array::from_fn(|_| AtomicU64::new(0)) }
    }
}

impl SharedHistogram {
    /// Counts one value. Only the owning worker writes, so a load and a
    /// store do (no locked read-modify-write in the measured loop); a
    /// reader sees each count whole.
    #[inline(always)]
    pub fn record(&self, ns: u64) {
        let c = &self.counts[index(ns)];
        c.store(c.load(Relaxed) + 1, Relaxed);
    }

    /// Adds this histogram's counts to `into` (one entry per bucket).
    pub fn add_to(&self, into: &mut [u64]) {
        for (sum, c) in into.iter_mut().zip(&self.counts) {
            *sum += c.load(Relaxed);
        }
    }
}

/// A set of bucket counts (a snapshot, or the difference of two).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counts(pub Vec<u64>);

impl Default for Counts {
    fn default() -> Self {
        Self(vec![0; BUCKETS])
    }
}

impl Counts {
    /// What was counted between `earlier` and this snapshot.
    pub fn since(&self, earlier: &Counts) -> Counts {
        Counts(self.0.iter().zip(&earlier.0).map(|(a, b)| a.saturating_sub(*b)).collect())
    }

    /// As an HDR histogram: each bucket's count at its midpoint, which is
    /// within 1.6% of every value the bucket holds.
    pub fn to_latencies(&self) -> Latencies {
        let mut h = Latencies::new();
        for (i, &n) in self.0.iter().enumerate().filter(|(_, &n)| n > 0) {
            let (low, high) = bounds(i);
            h.record_n(low + (high - low) / 2, n);
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_range_without_gaps() {
        assert_eq!(bounds(0), (0, 0));
        assert_eq!(bounds(63), (63, 63));
        assert_eq!(bounds(64), (64, 65));
        for i in 1..BUCKETS {
            assert_eq!(bounds(i).0, bounds(i - 1).1 + 1, "bucket {i}");
            let (low, high) = bounds(i);
            assert_eq!(index(low), i);
            assert_eq!(index(high), i);
            // No bucket is wider than 1/32 of its values.
            assert!((high - low + 1) * 32 <= low.max(32), "bucket {i}: {low}..{high}");
        }
        assert_eq!(index(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn snapshots_subtract_and_convert() {
        let h = SharedHistogram::default();
        h.record(10);
        let mut before = Counts::default();
        h.add_to(&mut before.0);
        for ns in [10, 1_000, 1_000, 1_000_000] {
            h.record(ns);
        }
        let mut after = Counts::default();
        h.add_to(&mut after.0);
        let lat = after.since(&before).to_latencies();
        assert_eq!(lat.len(), 4);
        let s = lat.summary().unwrap();
        assert_eq!(s.min_ns, 10);
        assert!((s.p50_ns as f64 / 1_000.0 - 1.0).abs() < 0.02, "{}", s.p50_ns);
        assert!((s.max_ns as f64 / 1e6 - 1.0).abs() < 0.02, "{}", s.max_ns);
    }
}
