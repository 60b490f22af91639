//! What a virtual speedup cannot show: a shorter section also makes its
//! mutex's sleeps rarer, and with them the kernel time they cost (the
//! futex calls, the context switches and the wake-ups of a convoy). A
//! virtual speedup changes no section, so the sped-up execution sleeps
//! as often as the baseline, and T − G keeps all of that time.
//!
//! Measured on the what-if validation's programs (interleaved, no
//! contend; the page's "user, system s saved" column): halving the
//! sections of the producer/consumer's queue mutex saved 0.024 s of user
//! time and 0.166 s of system time, and the readers-writers mutex 0.042 s
//! and 0.127 s; each program's system time fell by 48-49%, about as its
//! sections did. T − G read 0.83 and 0.82 where the real changes gave
//! 0.78 and 0.74, outside the intervals in every run of the page before
//! this; with the range reaching to the kernel time saved, inside in
//! three runs of three (docs/experiments/run.md).
//!
//! So a round's range reaches down to the time with a share of the
//! execution's kernel time saved too: the share its sleeps on the mutex
//! make of its voluntary context switches (in the profiled execution),
//! times the part of each section taken out (the sleeps fall as the
//! sections do, as a single queue's waits fall with its utilization),
//! spread over the CPUs the execution kept busy. That end assumes the
//! whole of that kernel time goes; the other end, T − G, that none does.

use crate::model::program::{MutexProfile, ProgramSample};

/// What a sped-up mutex's sleeps make of an execution's kernel time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Convoy {
    /// The share of the kernel time its sleeps are taken to cost, 0..=1.
    pub share: f64,
    /// The part of each section taken out (0.5: half as long).
    pub fraction: f64,
}

/// The share of the profiled execution's sleeps that were on `m`: its
/// kernel waits (or, where they were not counted, as in the what-if's
/// own profiled execution, its acquisitions that had to wait: glibc's
/// mutex sleeps on each) over the execution's voluntary context
/// switches, at most 1 (a FUTEX_WAIT that found the word changed counts
/// as a kernel wait and switches nothing).
pub fn sleep_share(m: &MutexProfile, profiled: &ProgramSample) -> f64 {
    share(m.kernel_waits.unwrap_or(m.counts.contended), profiled.voluntary_context_switches)
}

fn share(sleeps: u64, switches: i64) -> f64 {
    if switches > 0 {
        (sleeps as f64 / switches as f64).min(1.0)
    } else {
        0.0
    }
}

/// The sped-up execution `s`'s time, over the baseline `b`'s, with the
/// convoy's kernel time saved as well as the pauses owed: (T − G − f·K /
/// busy) / T_b, where K is `s`'s system time times the share and busy the
/// CPUs `s` kept busy. None when nothing would be saved or nothing would
/// be left.
pub fn time_ratio(s: &ProgramSample, b: &ProgramSample, convoy: Convoy) -> Option<f64> {
    let owed_s = s.sped.map_or(0.0, |sp| sp.owed_s());
    ratio(Times { wall_s: s.wall_s, user_s: s.user_s, sys_s: s.sys_s, owed_s }, b.wall_s, convoy)
}

/// What a sped-up execution measured, s.
#[derive(Debug, Clone, Copy)]
struct Times {
    wall_s: f64,
    user_s: f64,
    sys_s: f64,
    /// The pauses every thread owed (G).
    owed_s: f64,
}

fn ratio(t: Times, base_wall_s: f64, convoy: Convoy) -> Option<f64> {
    let kernel = t.sys_s * convoy.share * convoy.fraction;
    let cpu = t.user_s + t.sys_s;
    if kernel <= 0.0 || cpu <= 0.0 || t.wall_s <= 0.0 || base_wall_s <= 0.0 {
        return None;
    }
    let left = t.wall_s - t.owed_s - kernel * t.wall_s / cpu;
    (left > 0.0).then(|| left / base_wall_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_time_a_convoy_costs_comes_off_at_the_cpus_kept_busy() {
        // Two CPUs busy, 0.4 s of system time, all of it the mutex's,
        // half of it saved: 0.2 s of CPU, 0.1 s of wall time, beside the
        // 0.1 s of pauses owed.
        let t = Times { wall_s: 1.0, user_s: 1.6, sys_s: 0.4, owed_s: 0.1 };
        let half = |share| Convoy { share, fraction: 0.5 };
        let close = |a: Option<f64>, b: f64| assert!((a.unwrap() - b).abs() < 1e-9, "{a:?} {b}");
        close(ratio(t, 1.0, half(1.0)), 0.8);
        close(ratio(t, 1.0, half(0.5)), 0.85);
        close(ratio(t, 0.9, half(1.0)), 0.8 / 0.9);
        assert_eq!(ratio(t, 1.0, half(0.0)), None, "nothing saved: no end of its own");
        let all = Times { wall_s: 1.0, user_s: 0.1, sys_s: 1.9, owed_s: 0.9 };
        assert_eq!(ratio(all, 1.0, Convoy { share: 1.0, fraction: 1.0 }), None, "nothing left");
    }

    #[test]
    fn the_share_is_the_mutexs_sleeps_among_the_executions_at_most_all() {
        assert_eq!(share(250, 1000), 0.25);
        assert_eq!(share(4000, 1000), 1.0);
        assert_eq!(share(0, 1000), 0.0);
        assert_eq!(share(5, 0), 0.0);
    }
}
