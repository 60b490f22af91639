//! The top of `contend report`'s page: one row per export with its
//! answer, so that a reader of five exports learns the results before the
//! figures, tables and warnings below. The answer is the family's metric
//! (which says which way is better): the best and the worst point by
//! their mean over the runs and how far apart they are, and for `contend
//! run` each lock whose ratio to glibc's mutex has an interval that
//! clears 1. Warnings are counted by kind here; each export's section
//! lists them, folded, under its tables.

use crate::exports::compare::entries::{key, label, order};
use crate::model::family::KeyIn;
use crate::output::number::si;
use serde_json::Value;

/// The export's answer in a sentence or two.
pub(crate) fn answer<'a>(doc: &'a Value) -> Result<String, String> {
    let family = crate::exports::families::of(doc)?;
    let metric = (family.metric)(&doc["spec"]);
    let points = doc["points"].as_array().map(Vec::as_slice).unwrap_or_default();
    let fields = |p: &'a Value| {
        match family.key_in {
            KeyIn::Point => &p["point"],
            KeyIn::Sample => &p["sample"],
        }
        .as_object()
    };
    let order = order(family.identity, points.iter().filter_map(fields));
    let mut scored: Vec<(String, f64)> = points
        .iter()
        .filter_map(|p| {
            Some((label(&key(family.identity, fields(p)?), &order), p["stats"]["mean"].as_f64()?))
        })
        .collect();
    // Best first.
    scored.sort_by(|a, b| a.1.total_cmp(&b.1));
    if metric.higher_is_better {
        scored.reverse();
    }
    let mut out = match (scored.first(), scored.last()) {
        (None, _) | (_, None) => "no point was measured".to_string(),
        (Some((name, v)), _) if scored.len() == 1 => format!("{name}: {} {}", value(*v), metric.name),
        (Some((best, b)), Some((worst, w))) => format!(
            "best of {} points by {}: {best} ({}); worst: {worst} ({}), {} apart",
            scored.len(),
            metric.name,
            value(*b),
            value(*w),
            apart(*b, *w)
        ),
    };
    if family.name == "run" {
        out += &run_ratios(doc, metric.name);
    }
    Ok(out)
}

/// A metric's mean as the tables show it: SI above 1000, else three
/// significant digits.
fn value(v: f64) -> String {
    if v.abs() >= 1000.0 {
        si(v)
    } else {
        format!("{v:.3}")
    }
}

/// How many times the larger of two means is the smaller (`x1.23`).
fn apart(a: f64, b: f64) -> String {
    let (lo, hi) = if a.abs() < b.abs() { (a.abs(), b.abs()) } else { (b.abs(), a.abs()) };
    if lo > 0.0 {
        format!("x{:.2}", hi / lo)
    } else {
        "one of them 0".into()
    }
}

/// `contend run`: the locks whose ratio to glibc's mutex clears 1 with
/// its interval, else that none does.
fn run_ratios(doc: &Value, metric: &str) -> String {
    let all = doc["vs_glibc"].as_array().map(Vec::as_slice).unwrap_or_default();
    let clear: Vec<String> = all
        .iter()
        .filter_map(|v| {
            let (r, lo, hi) = (v["ratio"].as_f64()?, v["ci95"][0].as_f64()?, v["ci95"][1].as_f64()?);
            let mut lock = v["lock"].as_str()?.to_string();
            if let Some(p) = crate::model::program::ParameterValue::in_export(&v["parameter"]) {
                lock += &format!(" {p}");
            }
            (lo > 1.0 || hi < 1.0).then(|| format!("{lock} x{r:.3} ({lo:.3}..{hi:.3})"))
        })
        .collect();
    match (all.is_empty(), clear.is_empty()) {
        (true, _) => String::new(),
        (false, true) => ". No lock's ratio to pthread clears 1 with its 95% interval".into(),
        (false, false) => {
            format!(". Against pthread's {metric}, beyond the 95% interval: {}", clear.join(", "))
        }
    }
}

/// The warnings grouped by kind (in words: `other load`), the largest
/// group first, each in the export's order.
pub(crate) fn by_kind(warnings: &[Value]) -> Vec<(String, Vec<&Value>)> {
    let mut groups: Vec<(String, Vec<&Value>)> = Vec::new();
    for w in warnings {
        let kind = w["kind"].as_str().unwrap_or("other").replace('_', " ");
        match groups.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, ws)) => ws.push(w),
            None => groups.push((kind, vec![w])),
        }
    }
    groups.sort_by_key(|g| std::cmp::Reverse(g.1.len()));
    groups
}

/// The groups counted: `12 steal, 3 outlier` ("none" for none).
pub(crate) fn counted(groups: &[(String, Vec<&Value>)]) -> String {
    if groups.is_empty() {
        return "none".into();
    }
    groups.iter().map(|(k, ws)| format!("{} {k}", ws.len())).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn the_answer_names_the_best_and_worst_by_the_metric() {
        let point =
            |lock: &str, mean: f64| json!({"point": {"lock": lock, "workers": 4}, "stats": {"mean": mean}});
        let doc =
            json!({"family": "lock", "spec": {}, "points": [point("futex", 2e6), point("pthread", 1e6)]});
        let a = super::answer(&doc).unwrap();
        assert!(a.starts_with("best of 2 points by"), "{a}");
        assert!(a.contains("futex") && a.contains("worst: pthread") && a.contains("x2.00 apart"), "{a}");
    }

    #[test]
    fn warnings_are_counted_by_kind_most_first() {
        let w = |k: &str| json!({"kind": k, "message": ""});
        let all = [w("outlier"), w("other_load"), w("other_load")];
        let groups = super::by_kind(&all);
        assert_eq!(
            groups.iter().map(|(k, ws)| (k.as_str(), ws.len())).collect::<Vec<_>>(),
            [("other load", 2), ("outlier", 1)]
        );
        assert_eq!(super::counted(&groups), "2 other load, 1 outlier");
        assert_eq!(super::counted(&[]), "none");
    }
}
