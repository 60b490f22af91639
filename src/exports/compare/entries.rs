//! The points of an export as [`compare`](super::compare) matches them:
//! the fields its family says identify a point, a readable label, and the
//! measured runs' metric by round.

use super::export::{Export, Run};
use crate::model::family::{KeyIn, Metric};
use crate::model::run::RunStatus;
use serde_json::Value;

/// One point of an export: what identifies it, a readable label, and its
/// runs' values.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(super) key: Value,
    pub(super) label: String,
    /// The key's fields, in label order.
    pub(super) order: Vec<&'static str>,
    pub(super) values: Vec<f64>,
    /// The measured runs as (round, value).
    pub(super) rounds: Vec<(u64, f64)>,
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
            // A run's parameter scan: {"name": N, "value": V} reads N=V,
            // as the run table names it.
            Value::Object(_) if name == "parameter" => {
                return crate::model::program::ParameterValue::in_export(v).map(|p| p.to_string());
            }
            Value::Object(o) => {
                o.values().map(|v| v.to_string().replace('"', "")).collect::<Vec<_>>().join(":")
            }
            other => other.to_string(),
        };
        Some(match name {
            // As the run table names them: "pthread", and "pthread
            // (unprofiled)" beside profiled points ([`order`] leaves the
            // field out where no point is profiled).
            "profiled" if v == &Value::Bool(true) => return None,
            "profiled" => "(unprofiled)".into(),
            // Names read as themselves; numbers get their field's name.
            "lock" | "primitive" | "pattern" | "allocator" | "mode" | "affinity" => text,
            _ => format!("{name}={text}"),
        })
    };
    order.iter().filter_map(|f| word(f, &key[*f])).collect::<Vec<_>>().join(" ")
}

/// The identity fields a label reads, in order: the family's, but
/// `profiled` only where some point of the export was (`points`: each
/// point's identifying fields).
pub(crate) fn order<'a>(
    identity: &[crate::model::family::Key],
    points: impl IntoIterator<Item = &'a serde_json::Map<String, Value>>,
) -> Vec<&'static str> {
    let profiled = points.into_iter().any(|p| p.get("profiled") == Some(&Value::Bool(true)));
    identity.iter().map(|k| k.name()).filter(|&n| n != "profiled" || profiled).collect()
}

/// A point's key: the fields its family says identify it, from the
/// point's `fields`.
pub(crate) fn key(identity: &[crate::model::family::Key], fields: &serde_json::Map<String, Value>) -> Value {
    Value::Object(identity.iter().map(|k| (k.name().to_string(), k.value(fields))).collect())
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
pub(crate) fn entries<'a>(export: &'a Export) -> Result<Vec<Entry>, String> {
    let family = export.family();
    let metric = export.metric();
    let points = export.points()?;
    let fields = |p: &'a super::export::Point| match family.key_in {
        KeyIn::Point => &p.point,
        KeyIn::Sample => &p.sample,
    };
    let order = order(family.identity, points.iter().map(fields));
    Ok(points
        .iter()
        .map(|p| {
            let key = key(family.identity, fields(p));
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
