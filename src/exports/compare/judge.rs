//! The verdict on one point: Welch's t-test over the runs of one
//! invocation per side, or the test over invocation means
//! ([`super::invocations`]), and whether a slowdown is a regression.

use super::{invocations, Comparison, Verdict, ALPHA};
use crate::measure::stats::{t95, welch, Stats};
use crate::model::family::Metric;

/// The verdict of an interval (or a p-value without one) on a ratio.
fn verdict_of(significant: bool, ratio: f64, m: &Metric) -> Verdict {
    match significant {
        false => Verdict::NoChange,
        true if (ratio > 1.0) == m.higher_is_better => Verdict::Faster,
        true => Verdict::Slower,
    }
}

/// Whether `ratio` is worse than the threshold allows.
fn beyond(ratio: f64, m: &Metric, threshold: f64) -> bool {
    if m.higher_is_better {
        ratio < 1.0 - threshold
    } else {
        ratio > 1.0 + threshold
    }
}

/// One point over invocation means ([`invocations::across`]).
pub(super) fn judge_invocations(
    label: &str,
    old: &[Vec<f64>],
    new: &[Vec<f64>],
    m: &Metric,
    threshold: f64,
) -> Comparison {
    let means = |side: &[Vec<f64>]| side.iter().map(|v| Stats::of(v).mean).collect::<Vec<f64>>();
    let (o, n) = (means(old), means(new));
    let test = invocations::across(&o, &n);
    let verdict = match test {
        None => Verdict::Untestable,
        Some(t) => verdict_of(t.p < ALPHA, t.ratio, m),
    };
    let ratio = test.map_or(Stats::of(&n).mean / Stats::of(&o).mean, |t| t.ratio);
    Comparison {
        label: label.to_string(),
        old_mean: Stats::of(&o).mean,
        new_mean: Stats::of(&n).mean,
        ratio,
        ci95: test.map(|t| t.ci95),
        p: test.map(|t| t.p),
        verdict,
        regression: verdict == Verdict::Slower && beyond(ratio, m, threshold),
        invocations: (o.len(), n.len()),
        spread_pct: test.map(|t| t.spread_pct),
        invocations_to_resolve: test.and_then(|t| invocations::to_resolve(t.spread_pct, threshold)),
    }
}

/// One point over the runs of one invocation per side: Welch's t-test.
/// A difference it finds is "in-run only" (see [`Verdict::InRunOnly`]);
/// `compare --baseline`'s unpaired fallback reads the raw verdict.
pub(crate) fn judge(label: &str, old: &[f64], new: &[f64], m: &Metric, threshold: f64) -> Comparison {
    let c = judge_runs(label, old, new, m, threshold);
    Comparison {
        verdict: match c.verdict {
            Verdict::Faster | Verdict::Slower => Verdict::InRunOnly,
            v => v,
        },
        ..c
    }
}

/// Welch's t-test over two sets of runs, its verdict as the runs give it.
pub(crate) fn judge_runs(label: &str, old: &[f64], new: &[f64], m: &Metric, threshold: f64) -> Comparison {
    let (so, sn) = (Stats::of(old), Stats::of(new));
    let ratio = sn.mean / so.mean;
    let test = welch(old, new);
    // Delta method: the ratio's relative standard error is the root sum of
    // the means' relative standard errors.
    let half = test.map(|w| {
        let rel = |s: &Stats| (s.stdev / (s.n as f64).sqrt()) / s.mean;
        let se = (rel(&so).powi(2) + rel(&sn).powi(2)).sqrt() * ratio;
        if w.df.is_finite() {
            t95(w.df) * se
        } else {
            0.0
        }
    });
    let verdict = match test {
        None => Verdict::Untestable,
        Some(w) => verdict_of(w.p < ALPHA, ratio, m),
    };
    Comparison {
        label: label.to_string(),
        old_mean: so.mean,
        new_mean: sn.mean,
        ratio,
        ci95: half.map(|h| (ratio - h, ratio + h)),
        p: test.map(|w| w.p),
        verdict,
        regression: verdict == Verdict::Slower && beyond(ratio, m, threshold),
        invocations: (1, 1),
        spread_pct: None,
        invocations_to_resolve: None,
    }
}
