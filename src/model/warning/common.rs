//! The warnings every family's sweep shares, about a measured point or
//! the machine, each saying what to do about it, in the spirit of
//! hyperfine's: numbers that a noisy or misconfigured machine bent should
//! not pass as clean. Judgements over measurements, so they live above
//! `measure/`, which never imports a model type.

use super::{Warning, WarningKind};
use crate::measure::cpu::CpuSplit;
use crate::measure::env::governor;
use crate::measure::stats::Stats;
use crate::model::run::{measured, RunRecord, Screened};

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

/// Without --precision, an outlier must move its point's mean by at
/// least this much, %, to be worth a warning: below it no verdict and no
/// table digit changes.
const MIN_INFLUENCE_PCT: f64 = 0.5;

/// Runs whose metric stands out from the others by median absolute
/// deviation (modified z-score above 3.5) *and* matter: the run alone
/// moved its point's mean by more than half the precision asked for
/// (`precision_pct`), or, without a target, by more than the 95% interval
/// of the other runs and at least [`MIN_INFLUENCE_PCT`]. A run 0.07% off
/// a tight median stands out by MAD and changes nothing; it is left to
/// the export's `stats.outliers`.
pub fn outliers(
    name: &str,
    metric: &str,
    stats: &Stats,
    values: &[f64],
    precision_pct: Option<f64>,
) -> Vec<Warning> {
    let n = values.len();
    stats
        .outliers
        .iter()
        .filter_map(|&i| {
            let others: Vec<f64> = (0..n).filter(|&j| j != i).map(|j| values[j]).collect();
            let rest = Stats::of(&others);
            if rest.mean == 0.0 {
                return None;
            }
            let moved = 100.0 * (stats.mean - rest.mean).abs() / rest.mean.abs();
            let (bound, against) = match precision_pct {
                Some(p) => (p / 2.0, format!("more than half the ±{p}% asked for")),
                None => {
                    let spread = rest.ci95_pct.unwrap_or(0.0).max(MIN_INFLUENCE_PCT);
                    (spread, format!("more than the other runs' ±{spread:.1}% interval"))
                }
            };
            (moved > bound).then(|| {
                Warning::point(
                    WarningKind::Outlier,
                    name,
                    format!(
                        "run {} of {} stands out ({metric} {} against a median of {}) and moved the \
                         mean by {moved:.1}%, {against}: something else ran then; rerun the point, or \
                         add --runs so one run weighs less",
                        i + 1,
                        stats.n,
                        plain(values[i]),
                        plain(stats.median)
                    ),
                )
            })
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

/// One line counting the runs screened out, if any were: how many, how
/// much of the machine steal and other load took during them, and what
/// to do.
pub fn screening<'a, S: RunRecord + 'a>(
    points: impl Iterator<Item = &'a [S]>,
    max_pct: Option<f64>,
) -> Option<Warning> {
    let max = max_pct?;
    let mut screened = Screened::default();
    points.for_each(|runs| screened.add(runs));
    (screened.count > 0).then(|| {
        let how = screened
            .busy_mean_max()
            .map(|(mean, max)| format!(" (they lost {mean:.0}% of the machine on average, up to {max:.0}%)"))
            .unwrap_or_default();
        Warning::sweep(
            WarningKind::Screening,
            format!(
                "{} run(s) re-made: steal or other load above --max-steal {max:.0}%{how}; the rejected runs \
                 are in the export (status \"rejected\"), out of the statistics. The host was busy: stop \
                 other work or rerun when it is quiet",
                screened.count
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

    #[test]
    fn an_outlier_is_named_only_when_it_moved_the_mean_enough() {
        // 0.07% off a tight median: MAD calls it an outlier, nothing moved.
        let tight = [1000.0, 1000.1, 999.9, 1000.0, 1000.7];
        let s = Stats::of(&tight);
        assert_eq!(s.outliers, vec![4]);
        assert!(outliers("p", "cs/s", &s, &tight, None).is_empty());
        assert!(outliers("p", "cs/s", &s, &tight, Some(2.0)).is_empty());
        // 5% off in five runs moves the mean by 1%: past the others'
        // interval without a target, but not past half of ±2% asked for
        // (the point met its precision), and past half of ±1%.
        let off = [1000.0, 1001.0, 999.0, 1000.0, 1050.0];
        let s = Stats::of(&off);
        assert_eq!(s.outliers, vec![4]);
        let w = outliers("p", "cs/s", &s, &off, None);
        assert!(
            w.len() == 1 && w[0].message.contains("run 5 of 5") && w[0].message.contains("by 1.0%"),
            "{w:?}"
        );
        assert!(outliers("p", "cs/s", &s, &off, Some(2.0)).is_empty());
        assert_eq!(outliers("p", "cs/s", &s, &off, Some(1.0)).len(), 1);
    }

    #[test]
    fn many_outliers_print_as_one_line_and_others_as_themselves() {
        let o = |p: &str| Warning::point(WarningKind::Outlier, p, "run 1 of 5 stands out");
        let warnings =
            [o("a"), o("a"), o("b"), o("c"), o("d"), Warning::sweep(WarningKind::Machine, "governor")];
        let lines = crate::model::warning::terminal_lines(&warnings);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(lines[0], "governor");
        assert!(
            lines[1].starts_with("5 runs stood out") && lines[1].contains("a; b; c; and 1 more"),
            "{lines:?}"
        );
        assert_eq!(crate::model::warning::terminal_lines(&warnings[..1]), ["a: run 1 of 5 stands out"]);
    }
}
