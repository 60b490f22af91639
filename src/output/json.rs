//! `--export-json`: everything a run knows, with a schema version so readers
//! can tell layouts apart. Every family's document starts with the same
//! header (schema version, tool, family, environment, warnings).

use crate::measure::env::Environment;
use crate::model::warning::Warning;
use serde::Serialize;

/// Bumped whenever a field changes meaning or disappears. Version 2 added
/// repetitions: every point carries `runs` (each run in full), `stats`
/// (mean, stdev, 95% interval, min/median/max and outliers of the family's
/// metric over the runs) and `stopped`; `sample` became the median run
/// (lock, alloc) or all runs merged (wakeup). Version 3: every family's
/// entries are under `points` (alloc's were under `results`); the spec
/// carries `export_ndjson`; runs may have status `cut_short`; alloc
/// samples carry `glibc_tunables`, lock faults `recovered_how`; warnings
/// are objects (`kind`, `point`, `message`) where they were strings.
/// Version 4: `contend run` lists the locks the program failed under in
/// `failed` (with why and every execution), never in `points`; runs may
/// have status `failed` and points stop `failed`; a run's sample carries
/// `exit_code`, `signal`, `said` and `failure`; a recommendation's tried
/// lock carries `failed` (why) where it had `stopped` (a flag). Version 5:
/// a latency distribution carries its histogram only in HdrHistogram's
/// encoding (`hdr_v2_base64`); the `buckets` list that said the same at
/// 30 times the size is gone. The schema is published in
/// docs/schema/export.schema.json.
pub const SCHEMA_VERSION: u32 = 5;

/// The fields every export starts with.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Header<'a> {
    /// Layout version of this document.
    pub schema_version: u32,
    /// Always "contend".
    pub tool: &'static str,
    /// Which family produced it: lock, wakeup, alloc or run.
    pub family: &'static str,
    /// Where the numbers came from.
    pub environment: &'a Environment,
    /// What the reader must know.
    pub warnings: &'a [Warning],
}

impl<'a> Header<'a> {
    /// The header of a `family` export.
    pub fn new(family: &'static str, environment: &'a Environment, warnings: &'a [Warning]) -> Self {
        Header { schema_version: SCHEMA_VERSION, tool: "contend", family, environment, warnings }
    }
}

/// Serializes any export, pretty-printed.
pub fn render<T: Serialize>(export: &T) -> serde_json::Result<String> {
    serde_json::to_string_pretty(export)
}
