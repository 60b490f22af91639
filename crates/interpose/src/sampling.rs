//! Which critical sections of the sped-up mutex `speedup.rs` times.
//!
//! Timing a section takes two clock reads inside it (about 23 ns each on
//! the 2-vCPU KVM guest of docs/results), and a section of a few hundred
//! ns made longer by that can tip a contended mutex into a convoy: the
//! what-if's baseline (the same accounts at 0%) is then another program
//! than the one it predicts for. So each thread times its first
//! [`LEARN`] sections, then a random one in `n`, with `n` chosen from the
//! mean length of the sections it timed so that the reads add about
//! 1/[`SHARE`] of it, and counts a timed section `n` times: the pauses
//! owed and the sections counted are then estimates, unbiased whatever
//! `n` was (each section is timed with probability 1/n and weighs n).
//! The debt is paid in slices of milliseconds (`PAY_AT`), against which
//! the lumps a weight makes (n sections at once) are small.
//!
//! Measured on the what-if validation's striped.c, whose hot stripe's
//! sections last about 240 ns (timed: one in 21): the baseline with the
//! hot stripe's accounts took 1.45-1.62x the time of glibc's mutex alone
//! with every section timed, 1.18-1.23x sampled (new over old 0.755
//! (0.728..0.783) and 0.814 (0.732..0.905), two interleaved runs of 8
//! rounds; voluntary context switches about 10,000 against 1,600-6,200).

use std::cell::Cell;

/// Sections a thread times before it samples.
pub const LEARN: u32 = 16;
/// At least one section in this many is timed, on average.
const MAX_N: i64 = 64;
/// What two clock reads cost inside a section, ns (measured on the
/// guest above: 23 ns each).
const CLOCK_PAIR_NS: i64 = 50;
/// The reads may add 1/SHARE of a section, on average.
const SHARE: i64 = 100;

#[derive(Clone, Copy)]
struct Sampler {
    /// xorshift64* state (0: not seeded yet).
    rng: u64,
    /// Sections timed so far.
    timed: u32,
    /// Typical length of the timed sections, ns (a moving average that
    /// long outliers move little).
    mean_ns: i64,
}

thread_local! {
    static SAMPLER: Cell<Sampler> = const { Cell::new(Sampler { rng: 0, timed: 0, mean_ns: 0 }) };
}

/// One in how many sections to time, for sections of mean length
/// `mean_ns`.
fn one_in(mean_ns: i64) -> i64 {
    let mean = mean_ns.max(1);
    ((CLOCK_PAIR_NS * SHARE + mean - 1) / mean).clamp(1, MAX_N)
}

/// Whether the section this thread begins is timed: its weight (how many
/// sections it counts for), or None.
pub fn draw() -> Option<i64> {
    SAMPLER.with(|c| {
        let mut s = c.get();
        if s.timed < LEARN {
            return Some(1);
        }
        let n = one_in(s.mean_ns);
        if n == 1 {
            return Some(1);
        }
        if s.rng == 0 {
            // Distinct per thread: the address of this thread's own state.
            s.rng = (c as *const Cell<Sampler> as u64) | 1;
        }
        s.rng ^= s.rng >> 12;
        s.rng ^= s.rng << 25;
        s.rng ^= s.rng >> 27;
        let r = s.rng.wrapping_mul(0x2545_F491_4F6C_DD1D);
        c.set(s);
        ((r >> 32) % n as u64 == 0).then_some(n)
    })
}

/// A timed section lasted `h` ns.
pub fn timed(h: i64) {
    SAMPLER.with(|c| {
        let mut s = c.get();
        // A section the holder was preempted in lasts a time slice: it
        // moves the mean by at most an eighth, so that a few of them do
        // not make every section timed.
        s.mean_ns = if s.timed == 0 { h } else { s.mean_ns + (h.min(2 * s.mean_ns) - s.mean_ns) / 8 };
        s.timed = s.timed.saturating_add(1);
        c.set(s);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_sections_are_timed_less_often_and_weigh_as_many() {
        assert_eq!(one_in(10_000), 1, "a long section is always timed");
        assert_eq!(one_in(500), 10);
        assert_eq!(one_in(20), MAX_N);
        std::thread::spawn(|| {
            for _ in 0..LEARN {
                assert_eq!(draw(), Some(1), "the first sections are all timed");
                timed(500);
            }
            // Each section is timed with probability 1/10 and weighs 10:
            // over many, the weights add up to about the sections.
            let total: i64 = (0..100_000).filter_map(|_| draw()).sum();
            assert!((80_000..120_000).contains(&total), "{total}");
        })
        .join()
        .unwrap();
    }
}
