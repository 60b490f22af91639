//! What `compare` reads of an export, as typed structs: the header
//! (schema version, family), the run order, and per point its identifying
//! fields and its runs' status, round and metric. Everything else in the
//! document is ignored, so a later schema that adds fields still reads.
//! A point's identity stays a map of named fields: points are matched and
//! baselines picked field by field, and which fields exist depends on the
//! family and the lock.

use crate::model::run::RunStatus;
use serde::Deserialize;
use serde_json::{Map, Value};

/// The families an export may be of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// `contend lock` (and `contend tune`).
    Lock,
    /// `contend wakeup`.
    Wakeup,
    /// `contend alloc`.
    Alloc,
}

impl Family {
    /// As the export and the report write it.
    pub fn name(self) -> &'static str {
        match self {
            Family::Lock => "lock",
            Family::Wakeup => "wakeup",
            Family::Alloc => "alloc",
        }
    }
}

/// An export, as far as compare reads it.
#[derive(Debug, Deserialize)]
pub struct Export {
    /// Layout version (2 or 3 are read).
    pub schema_version: u64,
    /// Which family wrote it.
    pub family: Family,
    /// What was asked for: compare reads the run order only.
    #[serde(default)]
    pub spec: Spec,
    /// The points (every family, version 3; lock and wakeup, version 2).
    pub points: Option<Vec<Point>>,
    /// Version 2 kept alloc's points here.
    pub results: Option<Vec<Point>>,
}

/// The part of the spec compare reads.
#[derive(Debug, Default, Deserialize)]
pub struct Spec {
    /// The repetition plan.
    #[serde(default)]
    pub repeat: Repeat,
}

/// The part of the repetition plan compare reads.
#[derive(Debug, Default, Deserialize)]
pub struct Repeat {
    /// `interleaved` or `sequential`; absent in exports that predate it.
    pub order: Option<String>,
}

/// One point of an export.
#[derive(Debug, Deserialize)]
pub struct Point {
    /// What was run (lock and wakeup).
    #[serde(default)]
    pub point: Map<String, Value>,
    /// The detail sample (alloc names its point here).
    #[serde(default)]
    pub sample: Map<String, Value>,
    /// Every run.
    #[serde(default)]
    pub runs: Vec<Run>,
}

/// One run of a point.
#[derive(Debug, Deserialize)]
pub struct Run {
    /// Measured, rejected, counting or cut short; exports before the
    /// field existed have measured runs only.
    #[serde(default)]
    pub status: RunStatus,
    /// Its round; absent in exports that predate it (the run's index
    /// stands in).
    pub round: Option<u64>,
    /// lock: critical sections per second.
    pub cs_per_s: Option<f64>,
    /// alloc: operations per second.
    pub ops_per_s: Option<f64>,
    /// wakeup: the round-trip distribution.
    pub round_trip: Option<RoundTrip>,
}

/// The part of a wake-up distribution compare reads.
#[derive(Debug, Deserialize)]
pub struct RoundTrip {
    /// Its summary; absent when nothing was recorded.
    pub summary: Option<Summary>,
}

/// The part of a latency summary compare reads.
#[derive(Debug, Deserialize)]
pub struct Summary {
    /// The median, ns.
    pub p50_ns: f64,
}

impl Export {
    /// Reads `doc`, named `name` in errors; refuses other versions.
    pub fn read(doc: &Value, name: &str) -> Result<Self, String> {
        match doc.get("schema_version").and_then(Value::as_u64) {
            Some(2 | 3) => {}
            Some(v) => {
                return Err(format!(
                    "{name} has schema_version {v}; compare reads versions 2 and 3 (exports with every \
                     run): measure again with this contend"
                ))
            }
            None => return Err(format!("{name} is not a contend export (no schema_version)")),
        }
        Export::deserialize(doc).map_err(|e| {
            let family =
                doc.get("family").and_then(Value::as_str).map_or(String::new(), |f| format!(" `{f}`"));
            format!("{name} is not a complete{family} export: {e}")
        })
    }

    /// The points, where this version keeps them.
    pub fn points(&self) -> Result<&[Point], String> {
        let (field, list) = match (self.family, self.schema_version) {
            (Family::Alloc, 2) => ("results", &self.results),
            _ => ("points", &self.points),
        };
        list.as_deref()
            .ok_or_else(|| format!("`{field}` is missing: not a complete `{}` export", self.family.name()))
    }

    /// Whether the runs were made in interleaved rounds (the default
    /// since the field exists, and what older exports did).
    pub fn interleaved(&self) -> bool {
        self.spec.repeat.order.as_deref() != Some("sequential")
    }
}

impl Run {
    /// The family's metric of this run.
    pub fn metric(&self, family: Family) -> Option<f64> {
        match family {
            Family::Lock => self.cs_per_s,
            Family::Alloc => self.ops_per_s,
            Family::Wakeup => self.round_trip.as_ref().and_then(|r| r.summary.as_ref()).map(|s| s.p50_ns),
        }
    }
}
