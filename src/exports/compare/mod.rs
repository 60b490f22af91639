//! `contend compare OLD.json NEW.json`, or several exports per side
//! (`OLD1 OLD2 OLD3 -- NEW1 NEW2 NEW3`): matches the points of exports of
//! the same family and judges each change. With several exports on a side
//! the invocation is the unit ([`invocations`]): each export's mean of a
//! point is one observation, and faster / slower / no significant change
//! holds its 5% level across invocations. With one export per side only
//! the runs of two invocations are there, and their spread understates
//! the spread between invocations: Welch's t-test over the runs can say
//! "no significant change", but a difference it finds may be the
//! invocations' own, and the verdict says so. A significant slowdown
//! beyond the threshold is a regression, for CI: exit 0 without one, 1
//! with one, 2 when the input is bad or nothing could be compared (a
//! comparison that compared nothing must not pass). With one export and
//! `--baseline`, [`paired`] compares its points with each other, run
//! against run of the same round.

pub mod args;
pub mod command;
pub(crate) mod entries;
pub mod export;
pub mod invocations;
mod judge;
pub mod paired;
pub mod table;

pub(crate) use entries::{entries, label, Entry};
use judge::judge_invocations;
pub(crate) use judge::{judge, judge_runs};

use export::Export;
use serde::Serialize;
use serde_json::Value;

/// Significance level of the verdicts.
pub const ALPHA: f64 = 0.05;

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
    /// One export per side, and its runs differ beyond their in-run
    /// spread: a change, or the two invocations' own difference; this
    /// compare cannot tell which.
    InRunOnly,
    /// Too few runs (or invocations) on a side to test.
    Untestable,
}

impl Verdict {
    /// As printed.
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoChange => "no significant change",
            Verdict::InRunOnly => "differs in-run only",
            Verdict::Untestable => "untestable (too few runs)",
        }
    }
}

/// What one observation of a verdict is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// One export per side: the runs (Welch's t-test), which share their
    /// invocation's conditions.
    Run,
    /// Several exports on a side: each export's mean of the point.
    Invocation,
}

/// One matched point.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Comparison {
    /// The point, in words.
    pub label: String,
    /// Old mean (over the runs, or over the invocations' means).
    pub old_mean: f64,
    /// New mean.
    pub new_mean: f64,
    /// new / old: the ratio of the means (per run), or of the geometric
    /// means of the invocations' means.
    pub ratio: f64,
    /// The ratio's 95% interval, if testable.
    pub ci95: Option<(f64, f64)>,
    /// The test's two-sided p-value, if testable.
    pub p: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
    /// A significant slowdown beyond the threshold (with one export per
    /// side: an in-run one, which may be the invocations' own).
    pub regression: bool,
    /// Exports on each side that have the point (old, new).
    pub invocations: (usize, usize),
    /// The spread between invocations, % (pooled standard deviation of the
    /// log means), with several exports on a side.
    pub spread_pct: Option<f64>,
    /// Invocations per side that would resolve a difference the size of
    /// the threshold at that spread (80% power); None past 1000.
    pub invocations_to_resolve: Option<usize>,
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
    /// What one observation is: a run, or an invocation.
    pub unit: Unit,
    /// What every compared point shares (`threads hold=1µs idle=0`); the
    /// points' labels name the rest.
    pub common: String,
    /// Exports given (old, new).
    pub exports: (usize, usize),
    /// The difference the threshold names, as a fraction (0.05).
    pub threshold: f64,
    /// Matched points, in the first new file's order.
    pub points: Vec<Comparison>,
    /// Points in only one of the sides.
    pub unmatched: Vec<String>,
}

impl Report {
    /// Whether any point regressed.
    pub fn regressed(&self) -> bool {
        self.points.iter().any(|c| c.regression)
    }
}

/// One side's exports, read; `side` names them in errors (OLD, NEW).
fn side(docs: &[Value], side: &str) -> Result<Vec<Export>, String> {
    if docs.is_empty() {
        return Err(format!("no {side} export given"));
    }
    docs.iter()
        .enumerate()
        .map(|(i, d)| {
            let name = if docs.len() == 1 { side.to_string() } else { format!("{side} {}", i + 1) };
            Export::read(d, &name)
        })
        .collect()
}

/// Compares the `new` exports with the `old` ones (one or more each);
/// `threshold` is the fraction (0.05) a significant slowdown must exceed
/// to count as a regression, and the difference the invocations-to-resolve
/// estimate is for.
pub fn compare(old: &[Value], new: &[Value], threshold: f64) -> Result<Report, String> {
    let (olds, news) = (side(old, "OLD")?, side(new, "NEW")?);
    let first = &news[0];
    let m = first.metric();
    for e in olds.iter().chain(&news) {
        if !std::ptr::eq(e.family(), first.family()) {
            return Err(format!(
                "the exports mix families (`{}` and `{}`): nothing to compare",
                e.family().name,
                first.family().name
            ));
        }
        if e.metric() != m {
            return Err(format!(
                "the exports measured {} and {}: nothing to compare",
                e.metric().name,
                m.name
            ));
        }
    }
    let entries_of = |exports: &[Export], side: &str| -> Result<Vec<Vec<Entry>>, String> {
        exports.iter().map(|e| entries(e).map_err(|err| format!("{side}: {err}"))).collect()
    };
    let (olds, news) = (entries_of(&olds, "OLD")?, entries_of(&news, "NEW")?);
    let unit = if olds.len() == 1 && news.len() == 1 { Unit::Run } else { Unit::Invocation };
    // Every point of any export, once, in the order first seen (new side first).
    let mut keys: Vec<&Value> = Vec::new();
    for e in news.iter().chain(&olds).flatten() {
        if !keys.contains(&&e.key) {
            keys.push(&e.key);
        }
    }
    // Labels name what varies; what all points share goes to the heading.
    let order: Vec<&'static str> =
        news.iter().chain(&olds).flatten().next().map_or(Vec::new(), |e| e.order.clone());
    let (varying, fixed): (Vec<&str>, Vec<&str>) =
        order.iter().partition(|f| keys.iter().any(|k| k[**f] != keys[0][**f]));
    // A single point keeps its whole label in its row.
    let common = match (varying.is_empty(), keys.first()) {
        (false, Some(k)) => label(k, &fixed),
        _ => String::new(),
    };
    let with_runs = |side: &[Vec<Entry>], key: &Value| -> Vec<Vec<f64>> {
        side.iter()
            .filter_map(|entries| entries.iter().find(|e| &e.key == key))
            .map(|e| e.values.clone())
            .filter(|v| !v.is_empty())
            .collect()
    };
    let mut points = Vec::new();
    let mut unmatched = Vec::new();
    for key in keys {
        let label = &match varying.is_empty() {
            true => label(key, &order),
            false => label(key, &varying),
        };
        let (o, n) = (with_runs(&olds, key), with_runs(&news, key));
        match (o.is_empty(), n.is_empty()) {
            (false, false) => {}
            (true, false) => {
                unmatched.push(format!("{label} (no runs in OLD)"));
                continue;
            }
            (false, true) => {
                unmatched.push(format!("{label} (no runs in NEW)"));
                continue;
            }
            (true, true) => {
                unmatched.push(format!("{label} (no runs)"));
                continue;
            }
        }
        points.push(match unit {
            Unit::Run => judge(label, &o[0], &n[0], &m, threshold),
            Unit::Invocation => judge_invocations(label, &o, &n, &m, threshold),
        });
    }
    if points.is_empty() {
        return Err(format!(
            "nothing was compared: no point of NEW has runs in OLD too ({})",
            if unmatched.is_empty() { "the files are empty".to_string() } else { unmatched.join("; ") }
        ));
    }
    Ok(Report {
        family: first.family().name.to_string(),
        metric: m.name,
        higher_is_better: m.higher_is_better,
        unit,
        common,
        exports: (old.len(), new.len()),
        threshold,
        points,
        unmatched,
    })
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
        let r = compare(std::slice::from_ref(&old), std::slice::from_ref(&new), 0.05).unwrap();
        assert_eq!(r.points.len(), 3);
        // One export per side: a difference is the runs', not yet a change.
        let v: Vec<Verdict> = r.points.iter().map(|c| c.verdict).collect();
        assert_eq!(v, [Verdict::InRunOnly, Verdict::NoChange, Verdict::InRunOnly]);
        assert!(r.points[0].regression && !r.points[2].regression);
        assert!((r.points[0].ratio - 0.8).abs() < 1e-9);
        let (lo, hi) = r.points[0].ci95.unwrap();
        assert!(lo < 0.8 && hi > 0.8 && hi - lo < 0.1, "{lo} {hi}");
        assert!(r.regressed());
        assert_eq!(r.unmatched.len(), 2);
        // The same slowdown under a 25% threshold is slower but tolerated.
        assert!(!compare(std::slice::from_ref(&old), std::slice::from_ref(&new), 0.25).unwrap().regressed());
    }

    #[test]
    fn several_exports_per_side_make_the_invocation_the_unit() {
        // Each invocation's runs agree within 0.1%, invocations by 2%:
        // pooled runs would call identical commands different.
        let inv = |level: f64| lock_export(&[("futex", &[level, level * 1.001, level * 0.999])]);
        let (a, b, c, d) = (inv(100.0), inv(102.0), inv(98.0), inv(101.0));
        let single = compare(std::slice::from_ref(&a), std::slice::from_ref(&b), 0.05).unwrap();
        assert_eq!((single.unit, single.points[0].verdict), (Unit::Run, Verdict::InRunOnly));
        let r = compare(&[a.clone(), b.clone()], &[c.clone(), d.clone()], 0.05).unwrap();
        assert_eq!(r.unit, Unit::Invocation);
        let p = &r.points[0];
        assert_eq!((p.verdict, p.invocations, r.exports), (Verdict::NoChange, (2, 2), (2, 2)));
        let spread = p.spread_pct.unwrap();
        assert!(spread > 1.0 && spread < 3.0, "{p:?}");
        assert!(p.invocations_to_resolve.unwrap() >= 3, "{p:?}");
        // A 10% shift beyond a 2% spread between invocations is found.
        let up =
            compare(&[a.clone(), b.clone(), c.clone()], &[inv(110.0), inv(112.0), inv(108.0)], 0.05).unwrap();
        assert_eq!(up.points[0].verdict, Verdict::Faster);
        let down = compare(&[a.clone(), b, c], &[inv(90.0), inv(92.0), inv(88.0)], 0.05).unwrap();
        assert!(down.points[0].verdict == Verdict::Slower && down.regressed());
        // One export on one side, two on the other: testable, the spread
        // coming from the side that has one.
        assert_ne!(
            compare(std::slice::from_ref(&a), &[d.clone(), inv(99.0)], 0.05).unwrap().points[0].verdict,
            Verdict::Untestable
        );
        // A point missing from an export counts the exports that have it.
        let other = lock_export(&[("pthread", &[1.0, 1.0])]);
        let r = compare(&[a.clone(), other], &[d.clone(), a], 0.05).unwrap();
        assert_eq!(r.points[0].invocations, (1, 2));
        assert!(r.unmatched.iter().any(|u| u.contains("pthread") && u.contains("no runs in NEW")), "{r:?}");
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
        let r = compare(&[doc(&[10.0, 11.0, 10.5])], &[doc(&[20.0, 21.0, 20.5])], 0.05).unwrap();
        assert_eq!(r.points[0].verdict, Verdict::InRunOnly);
        assert!(r.regressed());
        let (old, new) = ([doc(&[10.0]), doc(&[10.2])], [doc(&[20.0]), doc(&[20.5])]);
        assert_eq!(compare(&old, &new, 0.05).unwrap().points[0].verdict, Verdict::Slower);
    }

    #[test]
    fn alloc_exports_of_version_2_and_3_compare_alike() {
        let entry = |v: f64| {
            json!({"sample": {"pattern": "local", "allocator": "glibc"},
                   "runs": [{"ops_per_s": v}, {"ops_per_s": v + 1.0}, {"ops_per_s": v - 1.0}]})
        };
        let v2 = json!({"schema_version": 2, "family": "alloc", "results": [entry(100.0)]});
        let v3 = json!({"schema_version": 3, "family": "alloc", "points": [entry(100.0)]});
        let r = compare(&[v2], std::slice::from_ref(&v3), 0.05).unwrap();
        assert_eq!((r.points.len(), r.points[0].verdict), (1, Verdict::NoChange));
        // Version 3 has no `results`: an alloc v3 file written that way is refused.
        let wrong = json!({"schema_version": 3, "family": "alloc", "results": [entry(1.0)]});
        assert!(compare(&[wrong], &[v3], 0.05).unwrap_err().contains("`points`"));
    }

    #[test]
    fn mismatched_or_old_files_are_refused() {
        let lock = lock_export(&[]);
        let mut v1 = lock.clone();
        v1["schema_version"] = json!(1);
        assert!(compare(&[v1], std::slice::from_ref(&lock), 0.05).unwrap_err().contains("versions 2 to 5"));
        let mut alloc = lock.clone();
        alloc["family"] = json!("alloc");
        assert!(compare(std::slice::from_ref(&lock), &[alloc], 0.05).unwrap_err().contains("mix families"));
        assert!(compare(&[json!({})], std::slice::from_ref(&lock), 0.05).is_err());
        let one_run = lock_export(&[("futex", &[1.0])]);
        assert_eq!(
            compare(std::slice::from_ref(&one_run), std::slice::from_ref(&one_run), 0.05).unwrap().points[0]
                .verdict,
            Verdict::Untestable
        );
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
        let r = compare(std::slice::from_ref(&old), std::slice::from_ref(&new), 0.05).unwrap();
        assert_eq!((r.points[0].old_mean, r.points[0].new_mean), (100.5, 100.5));
        // A run whose status this contend does not know is refused, named.
        let bad = doc(json!([{"cs_per_s": 1.0, "status": "sideways"}]));
        assert!(compare(&[bad], &[new], 0.05).unwrap_err().contains("sideways"));
    }
}
