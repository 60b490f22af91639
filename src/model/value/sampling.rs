//! `--latency-every`: how many acquisitions a worker makes per one it
//! times. Timing one costs two clock reads (one before lock(), one on
//! entry that the busy hold reuses as its own start) and a histogram
//! count, about 64 ns of CPU; but where the lock is contended it costs
//! more than its CPU: the read before lock() delays the attempt by ~20
//! ns, long enough for a waiter to take a lock its releaser would have
//! taken again. Timing every acquisition makes the futex lock 7 to 21% faster
//! at 4 threads and a 1 µs hold; 1 in 32 makes it 2.6% slower, 1 in 256
//! 1.5%, 1 in 1024 within noise (docs/results/latency-cost.md). `auto`
//! spaces the timed acquisitions by that disturbance, not by the CPU.

use serde::Serialize;
use std::fmt;

/// What one timed acquisition disturbs, ns, as `auto` reckons: about a
/// wake-up's worth (the on/off comparisons above put a contended timed
/// acquisition's effect between one and several critical sections of a
/// 1 µs hold).
pub const DISTURBANCE_NS: u64 = 2_500;

/// The cost `auto` allows, as a share of the cycle: 1/400 (0.25%).
const BUDGET_DIVISOR: u64 = 400;

/// The widest spacing `auto` picks: at hold 0 a worker cycles in about
/// 12 ns alone, and 1 in 4096 still gives ~6,000 samples a second.
const MOST_SPACED: u32 = 4096;

/// How acquisitions are chosen for timing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LatencyEvery {
    /// One in a power of two chosen per point from its hold and idle.
    Auto,
    /// None: no clock is read for latency.
    Off,
    /// One in this many, per worker (1: every acquisition).
    Every(u32),
}

impl LatencyEvery {
    /// The spacing for a point that holds `hold_ns` and idles `idle_ns`
    /// per cycle (0: none timed). For `auto`: the smallest power of two
    /// that keeps [`DISTURBANCE_NS`] within 0.25% of hold + idle + 12 ns
    /// (a worker's cycle alone; contention only lengthens it): 1 in 1024
    /// at a 1 µs hold, 1 in 128 at 10 µs, every one from 1 ms.
    pub fn for_cycle(self, hold_ns: u64, idle_ns: u64) -> u32 {
        match self {
            LatencyEvery::Off => 0,
            LatencyEvery::Every(n) => n,
            LatencyEvery::Auto => {
                let cycle = hold_ns.saturating_add(idle_ns).saturating_add(12);
                let wanted = (DISTURBANCE_NS * BUDGET_DIVISOR).div_ceil(cycle);
                u32::try_from(wanted.next_power_of_two()).unwrap_or(MOST_SPACED).clamp(1, MOST_SPACED)
            }
        }
    }
}

impl fmt::Display for LatencyEvery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LatencyEvery::Auto => write!(f, "auto"),
            LatencyEvery::Off => write!(f, "off"),
            LatencyEvery::Every(n) => write!(f, "{n}"),
        }
    }
}

/// Parses `auto`, `off` or a count >= 1.
pub fn parse_latency_every(text: &str) -> Result<LatencyEvery, String> {
    match text.trim() {
        "auto" => Ok(LatencyEvery::Auto),
        "off" | "0" => Ok(LatencyEvery::Off),
        t => super::parse_count(t)
            .map(LatencyEvery::Every)
            .map_err(|e| format!("{e}; or `auto` (the default) or `off`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_spaces_by_the_cycle() {
        let auto = LatencyEvery::Auto;
        assert_eq!(auto.for_cycle(0, 0), 4096);
        assert_eq!(auto.for_cycle(1_000, 0), 1024);
        assert_eq!(auto.for_cycle(10_000, 0), 128);
        assert_eq!(auto.for_cycle(1_000_000, 0), 1);
        assert_eq!(auto.for_cycle(500, 500), 1024);
        assert_eq!(LatencyEvery::Off.for_cycle(0, 0), 0);
        assert_eq!(LatencyEvery::Every(3).for_cycle(0, 0), 3);
    }

    #[test]
    fn parses_the_three_forms() {
        assert_eq!(parse_latency_every("auto"), Ok(LatencyEvery::Auto));
        assert_eq!(parse_latency_every("off"), Ok(LatencyEvery::Off));
        assert_eq!(parse_latency_every("0"), Ok(LatencyEvery::Off));
        assert_eq!(parse_latency_every("8"), Ok(LatencyEvery::Every(8)));
        assert!(parse_latency_every("-1").unwrap_err().contains("auto"));
        assert!(parse_latency_every("sometimes").is_err());
    }
}
