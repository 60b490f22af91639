//! The clock every latency is read from: CLOCK_MONOTONIC in nanoseconds
//! (through the vDSO, so no syscall), and what reading it costs. rt-tests
//! reads the same clock but keeps microseconds; at ns resolution the
//! clock's own cost is no longer negligible, so it is measured and printed
//! with every wake-up result.

use nix::time::{clock_getres, clock_gettime, ClockId};
use serde::Serialize;

/// Nanoseconds since boot on CLOCK_MONOTONIC; comparable between threads
/// and processes on every CPU (the kernel keeps it synchronized).
#[inline]
pub fn now_ns() -> u64 {
    let t = clock_gettime(ClockId::CLOCK_MONOTONIC).expect("CLOCK_MONOTONIC exists");
    t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
}

/// What reading the clock costs on this machine.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, schemars::JsonSchema)]
pub struct ClockCost {
    /// The clock's resolution as the kernel reports it, ns.
    pub resolution_ns: u64,
    /// Smallest difference between two back-to-back reads, ns.
    pub min_read_ns: u64,
    /// Median difference between two back-to-back reads, ns: the cost of
    /// one timestamp, which every measured round trip includes once.
    pub median_read_ns: u64,
}

/// Reads the clock back to back `reads` times and returns the cost.
pub fn measure_cost(reads: usize) -> ClockCost {
    let mut deltas: Vec<u64> = Vec::with_capacity(reads);
    let mut last = now_ns();
    for _ in 0..reads {
        let t = now_ns();
        deltas.push(t - last);
        last = t;
    }
    deltas.sort_unstable();
    let res = clock_getres(ClockId::CLOCK_MONOTONIC).expect("CLOCK_MONOTONIC exists");
    ClockCost {
        resolution_ns: res.tv_sec() as u64 * 1_000_000_000 + res.tv_nsec() as u64,
        min_read_ns: deltas.first().copied().unwrap_or(0),
        median_read_ns: deltas.get(deltas.len() / 2).copied().unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_moves_forward_and_its_cost_is_plausible() {
        let a = now_ns();
        let b = now_ns();
        assert!(b >= a);
        let cost = measure_cost(1000);
        assert!(cost.resolution_ns >= 1);
        assert!(cost.min_read_ns <= cost.median_read_ns);
        // A read that costs a millisecond would mean a broken clock source,
        // not a slow machine.
        assert!(cost.median_read_ns < 1_000_000, "{cost:?}");
    }
}
