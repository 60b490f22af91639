//! What `compare` reads of an export: the header (schema version, family),
//! the spec, and per point its fields and its runs' status and round;
//! which fields identify a point and where a run keeps its metric is the
//! family's to say ([`crate::model::family`]). Everything else in the
//! document is ignored, so a later schema that adds fields still reads.

use crate::exports::families;
use crate::model::family::{Family, Metric};
use crate::model::run::RunStatus;
use serde::Deserialize;
use serde_json::{Map, Value};

/// An export, as far as compare reads it.
#[derive(Debug, Deserialize)]
pub struct Export {
    /// Layout version (2 or 3 are read).
    pub schema_version: u64,
    /// Which family wrote it (read with [`families::of`]).
    #[serde(skip)]
    pub family: Option<&'static Family>,
    /// What was asked for: compare reads the run order, and the family
    /// may read its metric from it (`contend run --metric`).
    #[serde(default)]
    pub spec: Value,
    /// The points (every family, version 3; lock and wakeup, version 2).
    pub points: Option<Vec<Point>>,
    /// Version 2 kept alloc's points here.
    pub results: Option<Vec<Point>>,
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

/// One run of a point: its status and round, and everything else (the
/// family's metric is read from it).
#[derive(Debug, Deserialize)]
pub struct Run {
    /// Measured, rejected, counting or cut short; exports before the
    /// field existed have measured runs only.
    #[serde(default)]
    pub status: RunStatus,
    /// Its round; absent in exports that predate it (the run's index
    /// stands in).
    pub round: Option<u64>,
    /// The run's fields.
    #[serde(flatten)]
    pub fields: Value,
}

/// The oldest schema version compare reads (the first with every run);
/// the newest is the one this contend writes.
pub const OLDEST_READ: u64 = 2;

impl Export {
    /// Reads `doc`, named `name` in errors; refuses other versions.
    pub fn read(doc: &Value, name: &str) -> Result<Self, String> {
        let newest = crate::output::json::SCHEMA_VERSION as u64;
        match doc.get("schema_version").and_then(Value::as_u64) {
            Some(v) if (OLDEST_READ..=newest).contains(&v) => {}
            Some(v) => {
                return Err(format!(
                "{name} has schema_version {v}; compare reads versions {OLDEST_READ} to {newest} (exports \
                     with every run): measure again with this contend"
            ))
            }
            None => return Err(format!("{name} is not a contend export (no schema_version)")),
        }
        let family = families::of(doc).map_err(|e| format!("{name}: {e}"))?;
        let mut export = Export::deserialize(doc)
            .map_err(|e| format!("{name} is not a complete `{}` export: {e}", family.name))?;
        export.family = Some(family);
        Ok(export)
    }

    /// The family that wrote it.
    pub fn family(&self) -> &'static Family {
        self.family.expect("set by Export::read")
    }

    /// What each run's number is.
    pub fn metric(&self) -> Metric {
        (self.family().metric)(&self.spec)
    }

    /// The points, where this version keeps them.
    pub fn points(&self) -> Result<&[Point], String> {
        let (field, list) = match (self.family().name, self.schema_version) {
            ("alloc", 2) => ("results", &self.results),
            _ => ("points", &self.points),
        };
        list.as_deref()
            .ok_or_else(|| format!("`{field}` is missing: not a complete `{}` export", self.family().name))
    }

    /// Whether the runs were made in interleaved rounds (the default
    /// since the field exists, and what older exports did).
    pub fn interleaved(&self) -> bool {
        self.spec["repeat"]["order"].as_str() != Some("sequential")
    }
}
