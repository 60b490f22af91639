//! The warnings every family's sweep shares, about a measured point or
//! the machine, each saying what to do about it, in the spirit of
//! hyperfine's: numbers that a noisy or misconfigured machine bent should
//! not pass as clean. Judgements over measurements, so they live above
//! `measure/`, which never imports a model type.

use super::{Warning, WarningKind};
use crate::measure::cpu::CpuSplit;
use crate::measure::env::governor;
use crate::measure::stats::Stats;
use crate::model::run::{measured, RunRecord};

/// Steal above this share of the window means the hypervisor took CPU time.
const STEAL_PCT: f64 = 5.0;
/// CPU busy time not explained by contend's workers above this share of
/// all CPUs means something else was running.
const OTHER_LOAD_PCT: f64 = 10.0;

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
    if let Some(other) = cpu.other_load_pct(window_s, own_cpu_s, cpus) {
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
