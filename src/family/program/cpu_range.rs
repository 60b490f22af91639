//! What the CPU allows a program whose critical sections get shorter: the
//! range of its wall time, from using every CPU it could have (the floor)
//! to keeping the CPU share it had (the ceiling). `--what-if`
//! (`speedup`) bounds Coz's prediction by it, since Coz's rule assumes a
//! CPU per runnable thread, which a 2-CPU machine with more threads does
//! not give.

use crate::model::program::ProgramSample;

/// The CPUs a program can have: those online and those it may run on.
#[derive(Debug, Clone, Copy)]
pub struct Cpus {
    /// Online (what /proc/stat's idle share is a share of).
    pub online: usize,
    /// In the affinity mask contend passes on to the program.
    pub allowed: usize,
}

impl Cpus {
    /// This machine's, now.
    pub fn here() -> Self {
        Cpus { online: crate::measure::env::cpus_online(), allowed: crate::measure::env::cpus_allowed() }
    }
}

/// The wall times, as ratios to the baseline `b`, that the CPU allows the
/// program with the sections sped up in `s` shorter for real: its CPU
/// time less what the shorter sections save (G, the pauses they make
/// every other thread owe), over the CPU it could have had (the floor:
/// its own share of the baseline's CPUs and the share left idle, at most
/// the CPUs it may run on), and over the CPU share it had (the ceiling:
/// a shorter section does not make the program less parallel). None
/// when that cannot be told (no CPU split).
///
/// Why: Coz's T − G assumes a CPU per runnable thread. A program that
/// keeps every CPU busy gains from a shorter section only the CPU time it
/// saves, shared among the CPUs, whatever its critical path; measured on
/// the validation page's striped table (four threads, two CPUs, CPU
/// bound), T − G read 0.700 where the real change gave 0.900. The floor
/// alone, as the prediction, was the most the CPU allows: on the page of
/// 2026-12-02 it read 0.771 (0.762..0.779) for stats_phase.c's phase
/// section halved, where the real change gave 0.794 (0.759..0.831).
pub fn cpu_range(s: &ProgramSample, b: &ProgramSample, cpus: Cpus) -> Option<(f64, f64)> {
    let used = Used { cpu_s: b.user_s + b.sys_s, wall_s: b.wall_s, idle_pct: b.cpu?.idle_pct };
    range(used, s.sped?.owed_s(), cpus)
}

/// What an execution used: its CPU time and wall time, s, and the share
/// of the online CPUs' time left idle meanwhile, %.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Used {
    pub cpu_s: f64,
    pub wall_s: f64,
    pub idle_pct: f64,
}

/// [`cpu_range`] of an execution that used `used`, with `saved_s` of its
/// CPU time saved: (floor, ceiling).
pub(crate) fn range(used: Used, saved_s: f64, cpus: Cpus) -> Option<(f64, f64)> {
    let idle = used.idle_pct / 100.0 * cpus.online as f64 * used.wall_s;
    let capacity = (used.cpu_s + idle).min(cpus.allowed as f64 * used.wall_s);
    let left = used.cpu_s - saved_s;
    // The capacity is at least the CPU time used (idle is never negative,
    // and a program uses no more than the CPUs it may run on), so the
    // floor is at most the ceiling; max() only guards rounding.
    (capacity > 0.0 && left > 0.0).then(|| (left / capacity, (left / used.cpu_s).max(left / capacity)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_allows_from_every_cpu_it_could_have_to_the_share_it_had() {
        let two = Cpus { online: 2, allowed: 2 };
        let close = |a: Option<(f64, f64)>, b: (f64, f64)| {
            let a = a.unwrap();
            assert!((a.0 - b.0).abs() < 1e-9 && (a.1 - b.1).abs() < 1e-9, "{a:?} {b:?}");
        };
        let busy = Used { cpu_s: 2.0, wall_s: 1.0, idle_pct: 0.0 };
        // Both CPUs kept busy: a tenth of the CPU saved is a tenth of the
        // time, floor and ceiling alike.
        close(range(busy, 0.2, two), (0.9, 0.9));
        // One CPU busy, the other idle: the saving could go twice as fast,
        // or keep to its one CPU.
        let half = Used { cpu_s: 1.0, wall_s: 1.0, idle_pct: 50.0 };
        close(range(half, 0.5, two), (0.25, 0.5));
        // Held to one CPU (taskset), the idle one is not the program's.
        close(range(half, 0.5, Cpus { online: 2, allowed: 1 }), (0.5, 0.5));
        // Another process's load (no idle): the program keeps its share.
        let shared = Used { cpu_s: 0.7, wall_s: 1.0, idle_pct: 0.0 };
        close(range(shared, 0.07, two), (0.9, 0.9));
        assert_eq!(range(busy, 2.0, two), None, "nothing left: no range");
    }
}
