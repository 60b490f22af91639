//! Warnings about a measured point, each saying what to do about it, in the
//! spirit of hyperfine's: numbers that a noisy or misconfigured machine
//! bent should not pass as clean.

use crate::measure::cpu::CpuSplit;
use crate::measure::env::governor;
use crate::measure::stats::Stats;
use crate::model::lock::PointResult;
use crate::model::run::{measured, RunRecord};
use crate::model::warning::{Warning, WarningKind};

/// Steal above this share of the window means the hypervisor took CPU time.
const STEAL_PCT: f64 = 5.0;
/// CPU busy time not explained by contend's workers above this share of
/// all CPUs means something else was running.
const OTHER_LOAD_PCT: f64 = 10.0;
/// A window that lets each worker through the lock fewer times than this
/// is too short for its hold time.
const MIN_CS_PER_WORKER: f64 = 100.0;

/// The warnings for one measured point.
pub fn for_point(r: &PointResult, cpus: usize) -> Vec<Warning> {
    let (p, s) = (&r.point, &r.sample);
    let name = p.label();
    let mut out = Vec::new();
    out.extend(noise(&name, &s.cpu, s.window_s, s.process.cpu_s, cpus));
    // The statistics' outlier indices count measured runs only.
    let cs: Vec<f64> = measured(&r.runs).map(|run| run.cs_per_s).collect();
    out.extend(outliers(&name, "cs/s", &r.stats, &cs));
    if p.workers > 0 && (s.acquisitions as f64 / f64::from(p.workers)) < MIN_CS_PER_WORKER {
        out.push(Warning::point(
            WarningKind::TooFewSamples,
            &name,
            format!(
                "only {:.0} critical sections per worker in the window: too short for a hold of {}; \
                 use a longer --duration",
                s.acquisitions as f64 / f64::from(p.workers),
                p.hold
            ),
        ));
    }
    out
}

/// Steal time and other load during a window of `window_s` in which our
/// workers used `own_cpu_s` of CPU time on `cpus` CPUs.
pub fn noise(name: &str, cpu: &CpuSplit, window_s: f64, own_cpu_s: f64, cpus: usize) -> Vec<Warning> {
    let mut out = Vec::new();
    if cpu.steal_pct > STEAL_PCT {
        out.push(Warning::point(
            WarningKind::Steal,
            name,
            format!(
                "the hypervisor stole {:.1}% of the CPU time in the window; the numbers are lower \
                 and noisier than on a quiet host (pin the VM's vCPUs, or rerun when the host is idle)",
                cpu.steal_pct
            ),
        ));
    }
    if let Some(other) = other_load_pct(cpu, window_s, own_cpu_s, cpus) {
        if other > OTHER_LOAD_PCT {
            out.push(Warning::point(
                WarningKind::OtherLoad,
                name,
                format!(
                    "{other:.0}% of the CPUs' time was busy with work other than contend's workers \
                     (other load on the machine); stop it, or expect skewed results"
                ),
            ));
        }
    }
    out
}

/// CPU busy time the system saw in a window beyond what our workers used,
/// % of all CPUs' time: other processes' load. None when it cannot be told.
pub fn other_load_pct(cpu: &CpuSplit, window_s: f64, own_cpu_s: f64, cpus: usize) -> Option<f64> {
    let capacity = window_s * cpus as f64;
    (capacity > 0.0 && own_cpu_s.is_finite()).then(|| {
        let busy = capacity * (cpu.usr_pct + cpu.sys_pct) / 100.0;
        100.0 * (busy - own_cpu_s) / capacity
    })
}

/// Below this much CPU time in a window (CPUs x seconds), /proc/stat's
/// 10 ms ticks are too coarse to judge steal: 0.5 CPU-seconds is 50 ticks,
/// a resolution of 2%.
const SCREEN_MIN_CPU_S: f64 = 0.5;

/// What `--max-steal` screens on: the larger of the hypervisor's steal
/// and other processes' load over a window, % of all CPUs' time; None
/// when the window is too short for the tick counts to tell (a 20 ms
/// allocator child spans a tick or two, and one tick reads as 25%).
pub fn disturbance_pct(cpu: &CpuSplit, window_s: f64, own_cpu_s: f64) -> Option<f64> {
    let cpus = crate::measure::env::cpus_online();
    if window_s * (cpus as f64) < SCREEN_MIN_CPU_S {
        return None;
    }
    let other = other_load_pct(cpu, window_s, own_cpu_s, cpus);
    Some(cpu.steal_pct.max(other.unwrap_or(0.0)))
}

/// Runs whose metric stands out from the others by median absolute
/// deviation (modified z-score above 3.5): something else was going on.
pub fn outliers(name: &str, metric: &str, stats: &Stats, values: &[f64]) -> Vec<Warning> {
    stats
        .outliers
        .iter()
        .map(|&i| {
            Warning::point(
                WarningKind::Outlier,
                name,
                format!(
                    "run {} of {} is an outlier ({metric} {} against a median of {}, by median \
                     absolute deviation): something else ran then; rerun it, or add --runs so it \
                     weighs less",
                    i + 1,
                    stats.n,
                    plain(values[i]),
                    plain(stats.median)
                ),
            )
        })
        .collect()
}

fn plain(v: f64) -> String {
    if v.abs() >= 1000.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// Warnings about the machine rather than a point.
pub fn for_machine() -> Vec<Warning> {
    match governor() {
        Some(g) if g != "performance" => vec![Warning::sweep(
            WarningKind::Machine,
            format!(
                "the cpufreq governor is `{g}`: frequency changes add noise (cpupower frequency-set -g \
                 performance)"
            ),
        )],
        _ => Vec::new(),
    }
}

/// One line counting the runs screened out, if any were.
pub fn screening(rejected: impl Iterator<Item = usize>, max_pct: Option<f64>) -> Option<Warning> {
    let n: usize = rejected.sum();
    let max = max_pct?;
    (n > 0).then(|| {
        Warning::sweep(
            WarningKind::Screening,
            format!(
                "{n} run(s) rejected and re-made: steal or other load above --max-steal {max:.0}% \
                 (kept in the export with status \"rejected\", out of the statistics)"
            ),
        )
    })
}

/// The host-drift note for an interleaved sweep whose points ran `runs`
/// (see [`crate::measure::drift`]); None for a sequential one, whose
/// "rounds" are run indices and share nothing.
pub fn drift<'a, S: RunRecord + 'a>(
    interleaved: bool,
    runs: impl Iterator<Item = &'a [S]>,
) -> Option<Warning> {
    if !interleaved {
        return None;
    }
    let points: Vec<Vec<(u32, f64)>> =
        runs.map(|r| measured(r).map(|s| (s.info().round, s.metric())).collect()).collect();
    crate::measure::drift::drift(&points)
        .and_then(|d| crate::measure::drift::note(&d))
        .map(|text| Warning::sweep(WarningKind::Drift, text))
}

/// The sweep ended early: how much of it was measured, and what that
/// means for the last point.
pub fn interrupted(sig: nix::sys::signal::Signal, measured: usize, total: usize, last: &str) -> Warning {
    Warning::sweep(
        WarningKind::Interrupted,
        format!("interrupted by {sig}: {measured} of {total} points measured{last}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::lock::LockSample;
    use crate::model::lock::Point;
    use crate::model::Mode;

    fn result(steal: f64, usr: f64, sys: f64, cpu_s: f64, acquisitions: u64) -> PointResult {
        let mut sample = blank();
        sample.window_s = 1.0;
        sample.cpu.steal_pct = steal;
        sample.cpu.usr_pct = usr;
        sample.cpu.sys_pct = sys;
        sample.process.cpu_s = cpu_s;
        sample.acquisitions = acquisitions;
        PointResult::single(Point::new("futex", Mode::Threads, 2), sample)
    }

    fn blank() -> LockSample {
        LockSample {
            run: Default::default(),
            window_s: 1.0,
            acquisitions: 0,
            cs_per_s: 0.0,
            mean_hold_ns: None,
            stretched_holds: 0,
            fairness: Default::default(),
            cpu: Default::default(),
            process: Default::default(),
            memory: Default::default(),
            fault: None,
            interrupted: None,
            futex: None,
            coordinator_cpu_s: 0.0,
            lock_counters: None,
            workers: Vec::new(),
            total_acquisitions: 0,
        }
    }

    #[test]
    fn a_clean_point_has_no_warning() {
        // 2 CPUs fully busy, all of it our workers' 2 CPU-seconds.
        assert!(for_point(&result(0.0, 60.0, 40.0, 2.0, 100_000), 2).is_empty());
    }

    #[test]
    fn each_problem_is_named() {
        let w = for_point(&result(7.5, 60.0, 40.0, 2.0, 100_000), 2);
        assert!(w.len() == 1 && w[0].to_string().contains("stole 7.5%"), "{w:?}");
        // 100% busy but our workers used only 1 of 2 CPU-seconds.
        let w = for_point(&result(0.0, 60.0, 40.0, 1.0, 100_000), 2);
        assert!(w.len() == 1 && w[0].to_string().contains("50% of the CPUs' time"), "{w:?}");
        let w = for_point(&result(0.0, 60.0, 40.0, 2.0, 10), 2);
        assert!(w.len() == 1 && w[0].to_string().contains("only 5 critical sections per worker"), "{w:?}");
    }
}
