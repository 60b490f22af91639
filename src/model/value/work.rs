//! Work inside (`--hold`) and outside (`--idle`) the critical section.
//!
//! `1us` or `busy:1us` spins on CLOCK_MONOTONIC until the time has passed, as
//! futex-scalability.c did, so the CPU stays busy (from a dithered phase,
//! so that its overshoot does not depend on how the loop was compiled);
//! `sleep:50us` calls nanosleep, so the thread leaves the CPU. `0` does
//! nothing at all (not even a clock read).

use crate::model::value::duration::{format_nanos, parse_nanos};
use locks::sys::clock::monotonic_ns;
use serde::Serialize;
use std::fmt;
use std::time::Duration;

/// Busy work ends at the first clock read past its length, and the reads
/// fall on a grid set by the loop's time per read (25 to 28 ns here): so
/// the overshoot is a fixed function of that time and of the length, a
/// sawtooth that moved the median overshoot of a 1 µs hold between 2 and
/// 27 ns as the length went up by 2 ns at a time. Two compilations of the
/// same loop (each lock's worker has its own) sat on different teeth:
/// at one thread and 1 µs, std's hold read 1.011 to 1.012 µs and
/// adaptive's 1.019, and std came out 0.6 to 0.9% faster than adaptive
/// and than futex and parking_lot, by the harness alone. Before its first
/// read the loop therefore steps 0 to `DITHER_STEPS` - 1 times (a cycle or
/// so each), by the start time's low bits: the phase of the grid is
/// spread over about a read, and the mean overshoot is about half a read
/// whatever the code's timing. It costs no clock read and no state.
const DITHER_STEPS: u64 = 64;

/// How the time is spent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WorkMode {
    /// Spin on the clock.
    Busy,
    /// nanosleep.
    Sleep,
}

/// A stretch of work: a mode and a length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Work {
    /// Busy-wait or sleep.
    pub mode: WorkMode,
    /// Requested length in nanoseconds.
    pub ns: u64,
}

impl Work {
    /// No work.
    pub const NONE: Work = Work { mode: WorkMode::Busy, ns: 0 };

    /// Busy work of `ns` nanoseconds.
    pub fn busy(ns: u64) -> Self {
        Work { mode: WorkMode::Busy, ns }
    }

    /// No work at all: not even `sleep:0`, which still yields.
    pub fn is_none(&self) -> bool {
        *self == Work::NONE
    }

    /// A hold longer than this (ns) was not just clock-read jitter: the thread
    /// was preempted or slept long (2x the request plus 5 µs). Never for no
    /// work.
    pub fn stretched_above(&self) -> u64 {
        if self.ns == 0 {
            u64::MAX
        } else {
            self.ns.saturating_mul(2).saturating_add(5_000)
        }
    }

    /// Does the work and returns how long it took in nanoseconds (0 for no
    /// work, where the clock is not read at all).
    #[inline(always)]
    pub fn run(&self) -> u64 {
        self.run_from(None)
    }

    /// [`Self::run`], counted from `start` when the caller has just read
    /// the clock (the acquisition a latency sample timed): one clock read
    /// serves both, so timing an acquisition does not lengthen the hold.
    #[inline(always)]
    pub fn run_from(&self, start: Option<u64>) -> u64 {
        if self.ns == 0 {
            if self.mode == WorkMode::Sleep {
                // `sleep:0` still enters nanosleep every cycle, as
                // lockscale's `-i 0` does: the thread yields for about the
                // timer slack, which lets woken waiters reach the lock
                // before the releaser takes it again. std's sleep skips
                // the syscall for a zero duration, so call it directly.
                let zero = nix::sys::time::TimeSpec::new(0, 0);
                let _ = nix::time::clock_nanosleep(
                    nix::time::ClockId::CLOCK_MONOTONIC,
                    nix::time::ClockNanosleepFlags::empty(),
                    &zero,
                );
            }
            return 0;
        }
        // The clock is read inline (clock_gettime through the vDSO), not
        // through std's Instant: a call into std's code would sit outside
        // the measured section and move with unrelated code
        // (crate::measure::section).
        let start = start.unwrap_or_else(monotonic_ns);
        match self.mode {
            WorkMode::Busy => {
                for i in 0..start % DITHER_STEPS {
                    std::hint::black_box(i);
                }
                loop {
                    let spent = monotonic_ns().saturating_sub(start);
                    if spent >= self.ns {
                        return spent;
                    }
                }
            }
            WorkMode::Sleep => {
                std::thread::sleep(Duration::from_nanos(self.ns));
                monotonic_ns().saturating_sub(start)
            }
        }
    }
}

impl fmt::Display for Work {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.mode, self.ns) {
            (WorkMode::Sleep, 0) => write!(f, "sleep:0"),
            (_, 0) => write!(f, "0"),
            (WorkMode::Busy, ns) => write!(f, "{}", format_nanos(ns)),
            (WorkMode::Sleep, ns) => write!(f, "sleep:{}", format_nanos(ns)),
        }
    }
}

/// Parses `1us`, `busy:1us`, `sleep:50us` or `0`.
pub fn parse_work(text: &str) -> Result<Work, String> {
    let t = text.trim();
    let (mode, rest) = match t.split_once(':') {
        None => (WorkMode::Busy, t),
        Some(("busy", rest)) => (WorkMode::Busy, rest),
        Some(("sleep", rest)) => (WorkMode::Sleep, rest),
        Some((other, _)) => {
            return Err(format!(
                "unknown mode `{other}` in `{t}` (expected busy:<duration> or sleep:<duration>)"
            ))
        }
    };
    Ok(Work { mode, ns: parse_nanos(rest)? })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse() {
        assert_eq!(parse_work("1us"), Ok(Work::busy(1_000)));
        assert_eq!(parse_work("busy:2.5us"), Ok(Work::busy(2_500)));
        assert_eq!(parse_work("sleep:50us"), Ok(Work { mode: WorkMode::Sleep, ns: 50_000 }));
        assert_eq!(parse_work("0"), Ok(Work::NONE));
        let sleep0 = parse_work("sleep:0").unwrap();
        assert_eq!((sleep0.mode, sleep0.ns), (WorkMode::Sleep, 0));
        assert_eq!(sleep0.to_string(), "sleep:0");
        assert_eq!(sleep0.run(), 0);
        assert!(parse_work("nap:1us").unwrap_err().contains("unknown mode `nap`"));
        assert!(parse_work("sleep:").is_err());
        assert!(parse_work("sleep:5").unwrap_err().contains("no unit"));
    }

    #[test]
    fn display_round_trips() {
        for text in ["0", "1µs", "sleep:50µs", "2.5µs"] {
            assert_eq!(parse_work(text).unwrap().to_string(), text);
        }
    }

    #[test]
    fn busy_work_lasts_at_least_its_length() {
        let w = Work::busy(20_000);
        assert!(w.run() >= 20_000);
        assert_eq!(Work::NONE.run(), 0);
    }
}
