//! `contend compare RUN.json --baseline NAME`: the points of one export
//! against a baseline point of the same export, run against run of the
//! same round. With `--order interleaved` each round ran every point once
//! within seconds, so a burst of host noise moves a round's runs together;
//! the ratio of two runs of one round cancels it (Bulej et al., "Duet
//! Benchmarking", ICPE 2020, pair runs in time the same way). The ratio's
//! 95% interval is Student's t over the rounds' log ratios, and the
//! verdict says faster, slower, or indistinguishable (the interval holds
//! 1). A sequential export has no rounds to pair: it falls back to Welch's
//! test over the runs and says so.

use crate::exports::compare::export::Export;
use crate::exports::compare::{entries, judge_runs, Entry, Verdict};
use crate::model::family::Metric;
use serde::Serialize;
use serde_json::Value;

/// Which points are the baseline: every point whose `field` reads `word`.
#[derive(Debug, Clone, PartialEq)]
pub struct Baseline {
    /// The key field (lock, hold, replica, ...); None: whichever field
    /// has a point reading `word` (a lock, primitive or allocator name).
    pub field: Option<String>,
    /// Its value as the point label writes it (`pthread`, `1µs`, `1`).
    pub word: String,
}

impl Baseline {
    /// Parses `NAME` or `FIELD=VALUE` (`pthread`, `hold=1us`,
    /// `replica=1`); `us` is read as `µs`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("--baseline needs a point: a lock name, or FIELD=VALUE (e.g. hold=1us)".into());
        }
        let normal = |v: &str| {
            let v = v.trim();
            match v.strip_suffix("us") {
                Some(n) if n.parse::<f64>().is_ok() => format!("{n}µs"),
                _ => v.to_string(),
            }
        };
        Ok(match text.split_once('=') {
            Some((f, v)) => Baseline { field: Some(f.trim().to_string()), word: normal(v) },
            None => Baseline { field: None, word: normal(text) },
        })
    }

    /// The field this baseline is about, given the export's entries.
    fn field<'e>(&'e self, entries: &'e [Entry]) -> Option<&'e str> {
        if let Some(f) = &self.field {
            return Some(f);
        }
        let order = entries.first()?.order.clone();
        order.iter().copied().find(|f| entries.iter().any(|e| word(e, f) == self.word))
    }
}

/// How `entry` writes `field`: `pthread`, `1µs`, `4`.
fn word(entry: &Entry, field: &str) -> String {
    let w = crate::exports::compare::label(&entry.key, &[field]);
    match w.split_once('=') {
        Some((f, v)) if f == field => v.to_string(),
        _ => w,
    }
}

/// One point against its baseline.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Paired {
    /// The point, in words.
    pub label: String,
    /// The point's identifying fields, as in the export (for scripts).
    pub key: Value,
    /// The baseline point it was compared with.
    pub baseline: String,
    /// Baseline mean of the metric.
    pub baseline_mean: f64,
    /// The point's mean.
    pub mean: f64,
    /// point / baseline: the geometric mean of the rounds' ratios
    /// (paired), or the ratio of the means (Welch).
    pub ratio: f64,
    /// The ratio's 95% interval, if testable.
    pub ci95: Option<(f64, f64)>,
    /// Rounds paired (0 with the Welch fallback).
    pub pairs: usize,
    /// The verdict.
    pub verdict: Verdict,
}

/// Everything a paired compare found.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PairedReport {
    /// The exports' family (lock, wakeup, alloc, run).
    pub family: String,
    /// The metric.
    pub metric: &'static str,
    /// Whether larger is better.
    pub higher_is_better: bool,
    /// Whether runs were paired by round (interleaved export), or the
    /// Welch fallback was used (sequential).
    pub paired: bool,
    /// One row per non-baseline point that has a baseline partner.
    pub points: Vec<Paired>,
    /// Points with no baseline partner.
    pub unmatched: Vec<String>,
}

/// Compares every point of `doc` with its baseline partner: the baseline
/// point that agrees with it on every other field.
pub fn compare_paired(doc: &Value, baseline: &Baseline) -> Result<PairedReport, String> {
    let doc = Export::read(doc, "the export")?;
    let m = doc.metric();
    let all = entries(&doc)?;
    let field = baseline.field(&all).ok_or_else(|| {
        format!(
            "--baseline {}: no point of the export has it (points: {})",
            baseline.word,
            all.iter().map(|e| e.label.as_str()).collect::<Vec<_>>().join("; ")
        )
    })?;
    let is_base = |e: &Entry| word(e, field) == baseline.word;
    if !all.iter().any(is_base) {
        return Err(format!("--baseline {field}={}: no point has it", baseline.word));
    }
    let paired = doc.interleaved();
    let mut points = Vec::new();
    let mut unmatched = Vec::new();
    for e in all.iter().filter(|e| !is_base(e)) {
        let partners: Vec<&Entry> = all.iter().filter(|b| is_base(b) && partners(b, e, field)).collect();
        if partners.is_empty() {
            unmatched.push(format!("{} (no baseline point)", e.label));
        }
        for b in partners {
            if e.values.is_empty() || b.values.is_empty() {
                unmatched.push(format!("{} (no measured runs)", e.label));
                continue;
            }
            points.push(if paired { by_rounds(e, b, &m) } else { welch_row(e, b, &m) });
        }
    }
    if points.is_empty() {
        return Err(format!(
            "--baseline {field}={}: nothing was compared ({})",
            baseline.word,
            if unmatched.is_empty() {
                "the export has no other point".to_string()
            } else {
                unmatched.join("; ")
            }
        ));
    }
    Ok(PairedReport {
        family: doc.family().name.to_string(),
        metric: m.name,
        higher_is_better: m.higher_is_better,
        paired,
        points,
        unmatched,
    })
}

/// Whether baseline point `b` is `e`'s partner: they agree on every field
/// but the baseline's own, where a field that one of them lacks (null: a
/// knob its lock does not have, as pthread has no spin budget) matches
/// anything. A point can so have several partners (pthread against
/// adaptive with each waiting policy); it is compared with each.
fn partners(b: &Entry, e: &Entry, field: &str) -> bool {
    let (Some(bk), Some(ek)) = (b.key.as_object(), e.key.as_object()) else {
        return false;
    };
    bk.iter().filter(|(k, _)| k.as_str() != field).all(|(k, bv)| {
        let ev = ek.get(k).unwrap_or(&Value::Null);
        bv.is_null() || ev.is_null() || bv == ev
    })
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The verdict from an interval of the ratio.
fn verdict(ci: Option<(f64, f64)>, m: &Metric) -> Verdict {
    match ci {
        None => Verdict::Untestable,
        Some((lo, _)) if lo > 1.0 => better(m, true),
        Some((_, hi)) if hi < 1.0 => better(m, false),
        Some(_) => Verdict::NoChange,
    }
}

fn better(m: &Metric, higher: bool) -> Verdict {
    if higher == m.higher_is_better {
        Verdict::Faster
    } else {
        Verdict::Slower
    }
}

/// Round-paired: the log ratio of each round's two runs, its mean and
/// Student's t interval, back on the ratio scale.
fn by_rounds(e: &Entry, b: &Entry, m: &Metric) -> Paired {
    let pairs: Vec<(f64, f64)> = e
        .rounds
        .iter()
        .filter_map(|&(round, v)| b.rounds.iter().find(|&&(r, _)| r == round).map(|&(_, base)| (v, base)))
        .filter(|(v, base)| *v > 0.0 && *base > 0.0)
        .collect();
    let n = pairs.len();
    let (ratio, ci) = crate::measure::stats::paired_ratio(&pairs).unwrap_or((f64::NAN, None));
    Paired {
        label: e.label.clone(),
        key: e.key.clone(),
        baseline: b.label.clone(),
        baseline_mean: mean(&b.values),
        mean: mean(&e.values),
        ratio,
        ci95: ci,
        pairs: n,
        verdict: verdict(ci, m),
    }
}

/// Unpaired: Welch's test over the runs, as `compare OLD NEW` does.
fn welch_row(e: &Entry, b: &Entry, m: &Metric) -> Paired {
    let c = judge_runs(&e.label, &b.values, &e.values, m, 0.0);
    let ci = c.ci95;
    Paired {
        label: e.label.clone(),
        key: e.key.clone(),
        baseline: b.label.clone(),
        baseline_mean: c.old_mean,
        mean: c.new_mean,
        ratio: c.ratio,
        ci95: ci,
        pairs: 0,
        verdict: match c.verdict {
            Verdict::Untestable => Verdict::Untestable,
            _ => verdict(ci, m),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A lock export whose points have (round, cs/s) runs.
    fn export(order: &str, points: &[(&str, &[(u64, f64)])]) -> Value {
        json!({
            "schema_version": 2, "family": "lock",
            "spec": {"repeat": {"order": order}},
            "points": points.iter().map(|(lock, runs)| json!({
                "point": {"lock": lock, "mode": "threads", "workers": 2, "spin": null,
                          "spinners": null, "hold": {"mode": "busy", "ns": 1000},
                          "idle": {"mode": "busy", "ns": 0}},
                "runs": runs.iter().map(|(r, v)| json!({"round": r, "status": "measured", "cs_per_s": v}))
                    .chain([json!({"round": 9, "status": "counting", "cs_per_s": 1.0})])
                    .collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })
    }

    #[test]
    fn pairing_by_round_cancels_a_shared_drift() {
        // Rounds drift by +-30% together; b is 5% faster in every round.
        // Unpaired, the drift hides it; paired, it is certain.
        let drift = [1.0, 1.3, 0.7, 1.2, 0.8, 1.1];
        let a: Vec<(u64, f64)> = drift.iter().enumerate().map(|(i, d)| (i as u64, 100.0 * d)).collect();
        let b: Vec<(u64, f64)> = drift
            .iter()
            .enumerate()
            .map(|(i, d)| (i as u64, 105.0 * d * if i % 2 == 0 { 1.001 } else { 0.999 }))
            .collect();
        let doc = export("interleaved", &[("a", &a), ("b", &b)]);
        let r = compare_paired(&doc, &Baseline::parse("a").unwrap()).unwrap();
        assert!(r.paired);
        assert_eq!(r.points.len(), 1);
        let p = &r.points[0];
        assert_eq!((p.pairs, p.verdict), (6, Verdict::Faster));
        let (lo, hi) = p.ci95.unwrap();
        assert!(lo > 1.04 && hi < 1.06 && (p.ratio - 1.05).abs() < 0.002, "{p:?}");
        // The same runs judged unpaired: the drift swamps 5%.
        let seq =
            compare_paired(&export("sequential", &[("a", &a), ("b", &b)]), &Baseline::parse("a").unwrap())
                .unwrap();
        assert!(!seq.paired);
        assert_eq!(seq.points[0].verdict, Verdict::NoChange);
    }

    #[test]
    fn only_rounds_both_points_measured_are_paired() {
        let doc = export(
            "interleaved",
            &[
                ("a", &[(0, 100.0), (1, 100.0), (3, 100.0)]),
                ("b", &[(0, 90.0), (1, 91.0), (2, 200.0), (3, 89.0)]),
            ],
        );
        let p = &compare_paired(&doc, &Baseline::parse("lock=a").unwrap()).unwrap().points[0];
        assert_eq!((p.pairs, p.verdict), (3, Verdict::Slower));
    }

    #[test]
    fn identical_points_are_indistinguishable() {
        let a: Vec<(u64, f64)> = (0..8).map(|i| (i, 100.0 + (i % 3) as f64)).collect();
        let b: Vec<(u64, f64)> = (0..8).map(|i| (i, 100.0 + ((i + 1) % 3) as f64)).collect();
        let p =
            &compare_paired(&export("interleaved", &[("a", &a), ("b", &b)]), &Baseline::parse("a").unwrap())
                .unwrap()
                .points[0];
        assert_eq!(p.verdict, Verdict::NoChange);
    }

    #[test]
    fn a_knob_one_lock_lacks_matches_any_value() {
        let mut doc = export(
            "interleaved",
            &[("adaptive", &[(0, 100.0), (1, 100.0)]), ("pthread", &[(0, 50.0), (1, 52.0)])],
        );
        doc["points"][0]["point"]["spinners"] = json!("one");
        doc["points"][0]["point"]["spin"] = json!(100);
        let r = compare_paired(&doc, &Baseline::parse("adaptive").unwrap()).unwrap();
        assert_eq!(r.points.len(), 1, "{:?}", r.unmatched);
        assert_eq!(r.points[0].verdict, Verdict::Slower);
        // A point that differs on a field both have is no partner.
        doc["points"][1]["point"]["workers"] = json!(4);
        assert!(compare_paired(&doc, &Baseline::parse("adaptive").unwrap())
            .unwrap_err()
            .contains("nothing was compared"));
    }

    #[test]
    fn baselines_parse_and_unknown_ones_are_refused() {
        assert_eq!(
            Baseline::parse("hold=1.03us").unwrap(),
            Baseline { field: Some("hold".into()), word: "1.03µs".into() }
        );
        let doc = export("interleaved", &[("a", &[(0, 1.0), (1, 1.0)])]);
        let e = compare_paired(&doc, &Baseline::parse("zzz").unwrap()).unwrap_err();
        assert!(e.contains("no point"), "{e}");
        assert!(Baseline::parse(" ").is_err());
    }
}
