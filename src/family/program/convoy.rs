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

impl Convoy {
    /// The wall time execution `s` would be shorter with the convoy's
    /// kernel time saved, f·K / busy, s: K is `s`'s system time times the
    /// share, and busy the CPUs `s` kept busy. The round's end is then
    /// T − G less this, over the baseline (`speedup::predicted`, the same
    /// rule as T − G's). None when nothing would be saved.
    pub fn saved_s(self, s: &ProgramSample) -> Option<f64> {
        saved(self, s.wall_s, s.user_s, s.sys_s)
    }
}

fn saved(convoy: Convoy, wall_s: f64, user_s: f64, sys_s: f64) -> Option<f64> {
    let kernel = sys_s * convoy.share * convoy.fraction;
    let cpu = user_s + sys_s;
    (kernel > 0.0 && cpu > 0.0 && wall_s > 0.0).then(|| kernel * wall_s / cpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_time_a_convoy_costs_comes_off_at_the_cpus_kept_busy() {
        // Two CPUs busy, 0.4 s of system time, all of it the mutex's,
        // half of it saved: 0.2 s of CPU, 0.1 s of wall time (beside the
        // pauses owed, which speedup::predicted takes out).
        let half = |share| Convoy { share, fraction: 0.5 };
        let close = |a: Option<f64>, b: f64| assert!((a.unwrap() - b).abs() < 1e-9, "{a:?} {b}");
        close(saved(half(1.0), 1.0, 1.6, 0.4), 0.1);
        close(saved(half(0.5), 1.0, 1.6, 0.4), 0.05);
        close(saved(Convoy { share: 1.0, fraction: 1.0 }, 1.0, 0.1, 1.9), 0.95);
        assert_eq!(saved(half(0.0), 1.0, 1.6, 0.4), None, "nothing saved: no end of its own");
        assert_eq!(saved(half(1.0), 1.0, 0.0, 0.0), None, "no CPU time: nothing to spread");
    }

    #[test]
    fn the_share_is_the_mutexs_sleeps_among_the_executions_at_most_all() {
        assert_eq!(share(250, 1000), 0.25);
        assert_eq!(share(4000, 1000), 1.0);
        assert_eq!(share(0, 1000), 0.0);
        assert_eq!(share(5, 0), 0.0);
    }
}
