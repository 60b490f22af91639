//! `contend compare OLD.json NEW.json`: matches the points of two exports
//! of the same family and judges each change with Welch's t-test over the
//! runs: the ratio of the means, its 95% interval (delta method, Welch's
//! degrees of freedom), and faster / slower / no significant change. A
//! significant slowdown beyond the threshold is a regression, for CI:
//! exit 0 without one, 1 with one, 2 when the input is bad or nothing
//! could be compared (a comparison that compared nothing must not pass).
//! With one export and `--baseline`, [`paired`] compares its points with
//! each other, run against run of the same round.

pub mod export;
pub mod paired;
pub mod table;

use crate::measure::stats::{t95, welch, Stats};
use crate::model::family::{KeyIn, Metric};
use crate::model::run::RunStatus;
use export::{Export, Run};
use serde::Serialize;
use serde_json::Value;

/// Significance level of the verdicts.
pub const ALPHA: f64 = 0.05;

/// One point of an export: what identifies it, a readable label, and its
/// runs' values.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    key: Value,
    label: String,
    /// The key's fields, in label order.
    order: Vec<&'static str>,
    values: Vec<f64>,
    /// The measured runs as (round, value).
    rounds: Vec<(u64, f64)>,
}

/// The key's fields in the given order, as words: `futex threads 4 spin=100
/// hold=1µs`.
pub(crate) fn label(key: &Value, order: &[&str]) -> String {
    let word = |name: &str, v: &Value| -> Option<String> {
        let text = match v {
            Value::Null => return None,
            Value::String(s) => s.clone(),
            // Work (hold, idle): {"mode": "busy"|"sleep", "ns": N}.
            Value::Object(o) if o.contains_key("ns") => {
                crate::model::family::work_text(v).unwrap_or_default()
            }
            Value::Object(o) => {
                o.values().map(|v| v.to_string().replace('"', "")).collect::<Vec<_>>().join(":")
            }
            other => other.to_string(),
        };
        Some(match name {
            // Names read as themselves; numbers get their field's name.
            "lock" | "primitive" | "pattern" | "allocator" | "mode" | "affinity" => text,
            _ => format!("{name}={text}"),
        })
    };
    order.iter().filter_map(|f| word(f, &key[*f])).collect::<Vec<_>>().join(" ")
}

/// The measured runs' (round, value) pairs; a run without a round takes
/// its index among them.
fn rounds(runs: &[Run], metric: &Metric) -> Vec<(u64, f64)> {
    runs.iter()
        .filter(|r| r.status == RunStatus::Measured)
        .enumerate()
        .filter_map(|(i, r)| Some((r.round.unwrap_or(i as u64), metric.of(&r.fields)?)))
        .collect()
}

/// Every point of `export`: its key (the fields its family says identify
/// it), its label, and its measured runs' metric.
pub(crate) fn entries(export: &Export) -> Result<Vec<Entry>, String> {
    let family = export.family();
    let metric = export.metric();
    let order: Vec<&'static str> = family.identity.iter().map(|k| k.name()).collect();
    Ok(export
        .points()?
        .iter()
        .map(|p| {
            let fields = match family.key_in {
                KeyIn::Point => &p.point,
                KeyIn::Sample => &p.sample,
            };
            let key = Value::Object(
                family.identity.iter().map(|k| (k.name().to_string(), k.value(fields))).collect(),
            );
            let runs = rounds(&p.runs, &metric);
            Entry {
                label: label(&key, &order),
                key,
                order: order.clone(),
                values: runs.iter().map(|&(_, v)| v).collect(),
                rounds: runs,
            }
        })
        .collect())
}

/// The verdict on one point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Significantly better.
    Faster,
    /// Significantly worse.
    Slower,
    /// No significant difference at the 5% level.
    NoChange,
    /// Too few runs on a side to test (fewer than two).
    Untestable,
}

impl Verdict {
    /// As printed.
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoChange => "no significant change",
            Verdict::Untestable => "untestable (fewer than 2 runs)",
        }
    }
}

/// One matched point.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Comparison {
    /// The point, in words.
    pub label: String,
    /// Old and new means.
    pub old_mean: f64,
    /// New mean.
    pub new_mean: f64,
    /// new / old.
    pub ratio: f64,
    /// Half-width of the ratio's 95% interval, if testable.
    pub ratio_ci95: Option<f64>,
    /// Welch's p-value, if testable.
    pub p: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
    /// A significant slowdown beyond the threshold.
    pub regression: bool,
}

/// Everything `contend compare` found.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Report {
    /// The exports' family (lock, wakeup, alloc, run).
    pub family: String,
    /// What was compared.
    pub metric: &'static str,
    /// Whether larger is better.
    pub higher_is_better: bool,
    /// Matched points, in the new file's order.
    pub points: Vec<Comparison>,
    /// Points in only one of the files.
    pub unmatched: Vec<String>,
}

impl Report {
    /// Whether any point regressed.
    pub fn regressed(&self) -> bool {
        self.points.iter().any(|c| c.regression)
    }
}

/// Compares two parsed exports; `threshold` is the fraction (0.05) a
/// significant slowdown must exceed to count as a regression.
pub fn compare(old: &Value, new: &Value, threshold: f64) -> Result<Report, String> {
    let (old, new) = (Export::read(old, "OLD")?, Export::read(new, "NEW")?);
    if !std::ptr::eq(old.family(), new.family()) {
        return Err(format!("OLD is a `{}` export and NEW a `{}` one", old.family().name, new.family().name));
    }
    let m = new.metric();
    if m != old.metric() {
        return Err(format!("OLD measured {} and NEW {}: nothing to compare", old.metric().name, m.name));
    }
    let olds = entries(&old).map_err(|e| format!("OLD: {e}"))?;
    let news = entries(&new).map_err(|e| format!("NEW: {e}"))?;
    let mut points = Vec::new();
    let mut unmatched = Vec::new();
    for n in &news {
        let Some(o) = olds.iter().find(|o| o.key == n.key) else {
            unmatched.push(format!("{} (only in NEW)", n.label));
            continue;
        };
        if o.values.is_empty() || n.values.is_empty() {
            unmatched.push(format!("{} (no runs)", n.label));
            continue;
        }
        points.push(judge(&n.label, &o.values, &n.values, &m, threshold));
    }
    for o in &olds {
        if !news.iter().any(|n| n.key == o.key) {
            unmatched.push(format!("{} (only in OLD)", o.label));
        }
    }
    if points.is_empty() {
        return Err(format!(
            "nothing was compared: no point of NEW has runs in OLD too ({})",
            if unmatched.is_empty() { "both files are empty".to_string() } else { unmatched.join("; ") }
        ));
    }
    Ok(Report {
        family: old.family().name.to_string(),
        metric: m.name,
        higher_is_better: m.higher_is_better,
        points,
        unmatched,
    })
}

pub(crate) fn judge(label: &str, old: &[f64], new: &[f64], m: &Metric, threshold: f64) -> Comparison {
    let (so, sn) = (Stats::of(old), Stats::of(new));
    let ratio = sn.mean / so.mean;
    let test = welch(old, new);
    // Delta method: the ratio's relative standard error is the root sum of
    // the means' relative standard errors.
    let ratio_ci95 = test.map(|w| {
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
        Some(w) if w.p >= ALPHA => Verdict::NoChange,
        Some(_) if (ratio > 1.0) == m.higher_is_better => Verdict::Faster,
        Some(_) => Verdict::Slower,
    };
    let beyond = if m.higher_is_better { ratio < 1.0 - threshold } else { ratio > 1.0 + threshold };
    Comparison {
        label: label.to_string(),
        old_mean: so.mean,
        new_mean: sn.mean,
        ratio,
        ratio_ci95,
        p: test.map(|w| w.p),
        verdict,
        regression: verdict == Verdict::Slower && beyond,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lock_export(points: &[(&str, &[f64])]) -> Value {
        json!({
            "schema_version": 2,
            "family": "lock",
            "points": points.iter().map(|(lock, runs)| json!({
                "point": {"lock": lock, "mode": "threads", "workers": 4, "spin": null,
                          "spinners": null, "hold": "1µs", "idle": "0"},
                "runs": runs.iter().map(|v| json!({"cs_per_s": v})).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })
    }

    #[test]
    fn verdicts_follow_the_t_test_and_the_threshold() {
        let old = lock_export(&[
            ("futex", &[100.0, 101.0, 99.0, 100.0]),
            ("pthread", &[100.0, 101.0, 99.0, 100.0]),
            ("tas", &[100.0, 101.0, 99.0, 100.0]),
            ("gone", &[1.0, 2.0]),
        ]);
        let new = lock_export(&[
            ("futex", &[80.0, 81.0, 79.0, 80.0]),      // 20% slower: a regression
            ("pthread", &[100.5, 99.5, 100.0, 101.0]), // noise
            ("tas", &[120.0, 121.0, 119.0, 120.0]),    // faster
            ("new", &[5.0, 6.0]),
        ]);
        let r = compare(&old, &new, 0.05).unwrap();
        assert_eq!(r.points.len(), 3);
        let v: Vec<Verdict> = r.points.iter().map(|c| c.verdict).collect();
        assert_eq!(v, [Verdict::Slower, Verdict::NoChange, Verdict::Faster]);
        assert!(r.points[0].regression && !r.points[2].regression);
        assert!((r.points[0].ratio - 0.8).abs() < 1e-9);
        let ci = r.points[0].ratio_ci95.unwrap();
        assert!(ci > 0.0 && ci < 0.05, "{ci}");
        assert!(r.regressed());
        assert_eq!(r.unmatched.len(), 2);
        // The same slowdown under a 25% threshold is slower but tolerated.
        assert!(!compare(&old, &new, 0.25).unwrap().regressed());
    }

    #[test]
    fn latency_is_better_when_lower() {
        let doc = |p50s: &[f64]| {
            json!({
                "schema_version": 2, "family": "wakeup",
                "points": [{
                    "point": {"primitive": "futex", "mode": "threads", "affinity": "cross",
                              "interval_ns": 1000, "sched": {"policy": "other", "priority": 0},
                              "placements": [{"a": [0], "b": [1]}]},
                    "runs": p50s.iter().map(|v| json!({"round_trip": {"summary": {"p50_ns": v}}})).collect::<Vec<_>>(),
                }],
            })
        };
        let r = compare(&doc(&[10.0, 11.0, 10.5]), &doc(&[20.0, 21.0, 20.5]), 0.05).unwrap();
        assert_eq!(r.points[0].verdict, Verdict::Slower);
        assert!(r.regressed());
    }

    #[test]
    fn alloc_exports_of_version_2_and_3_compare_alike() {
        let entry = |v: f64| {
            json!({"sample": {"pattern": "local", "allocator": "glibc"},
                   "runs": [{"ops_per_s": v}, {"ops_per_s": v + 1.0}, {"ops_per_s": v - 1.0}]})
        };
        let v2 = json!({"schema_version": 2, "family": "alloc", "results": [entry(100.0)]});
        let v3 = json!({"schema_version": 3, "family": "alloc", "points": [entry(100.0)]});
        let r = compare(&v2, &v3, 0.05).unwrap();
        assert_eq!((r.points.len(), r.points[0].verdict), (1, Verdict::NoChange));
        // Version 3 has no `results`: an alloc v3 file written that way is refused.
        let wrong = json!({"schema_version": 3, "family": "alloc", "results": [entry(1.0)]});
        assert!(compare(&wrong, &v3, 0.05).unwrap_err().contains("`points`"));
    }

    #[test]
    fn mismatched_or_old_files_are_refused() {
        let lock = lock_export(&[]);
        let mut v1 = lock.clone();
        v1["schema_version"] = json!(1);
        assert!(compare(&v1, &lock, 0.05).unwrap_err().contains("versions 2 and 3"));
        let mut alloc = lock.clone();
        alloc["family"] = json!("alloc");
        assert!(compare(&lock, &alloc, 0.05).unwrap_err().contains("`lock` export"));
        assert!(compare(&json!({}), &lock, 0.05).is_err());
        let one_run = lock_export(&[("futex", &[1.0])]);
        assert_eq!(compare(&one_run, &one_run, 0.05).unwrap().points[0].verdict, Verdict::Untestable);
    }

    #[test]
    fn only_measured_runs_count_and_unknown_fields_are_ignored() {
        let doc = |runs: Value| {
            json!({
                "schema_version": 3, "family": "lock", "tool": "contend", "later_field": [1, 2],
                "points": [{"point": {"lock": "futex", "workers": 2}, "stats": {}, "runs": runs}],
            })
        };
        let old = doc(json!([
            {"cs_per_s": 100.0, "status": "measured", "round": 0},
            {"cs_per_s": 1.0, "status": "rejected", "round": 0},
            {"cs_per_s": 101.0, "status": "measured", "round": 1},
            {"cs_per_s": 5.0, "status": "counting", "round": 2},
        ]));
        let new = doc(json!([{"cs_per_s": 100.0}, {"cs_per_s": 101.0}]));
        let r = compare(&old, &new, 0.05).unwrap();
        assert_eq!((r.points[0].old_mean, r.points[0].new_mean), (100.5, 100.5));
        // A run whose status this contend does not know is refused, named.
        let bad = doc(json!([{"cs_per_s": 1.0, "status": "sideways"}]));
        assert!(compare(&bad, &new, 0.05).unwrap_err().contains("sideways"));
    }
}
