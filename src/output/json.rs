//! `--export-json`: everything a run knows, with a schema version so readers
//! can tell layouts apart. Every family's document starts with the same
//! header (schema version, tool, family, environment, warnings).

use crate::family::lock::sweep::PointResult;
use crate::measure::env::Environment;
use serde::Serialize;

/// Bumped whenever a field changes meaning or disappears. Version 2 added
/// repetitions: every point carries `runs` (each run in full), `stats`
/// (mean, stdev, 95% interval, min/median/max and outliers of the family's
/// metric over the runs) and `stopped`; `sample` became the median run
/// (lock, alloc) or all runs merged (wakeup). Version 3: every family's
/// entries are under `points` (alloc's were under `results`); the spec
/// carries `export_ndjson`; runs may have status `cut_short`; alloc
/// samples carry `glibc_tunables`, lock faults `recovered_how`. The schema
/// is published in docs/schema/export.schema.json.
pub const SCHEMA_VERSION: u32 = 3;

/// The fields every export starts with.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Header<'a> {
    /// Layout version of this document.
    pub schema_version: u32,
    /// Always "contend".
    pub tool: &'static str,
    /// Which family produced it: lock, wakeup or alloc.
    pub family: &'static str,
    /// Where the numbers came from.
    pub environment: &'a Environment,
    /// What the reader must know.
    pub warnings: &'a [String],
}

impl<'a> Header<'a> {
    /// The header of a `family` export.
    pub fn new(family: &'static str, environment: &'a Environment, warnings: &'a [String]) -> Self {
        Header {
            schema_version: SCHEMA_VERSION,
            tool: "contend",
            family,
            environment,
            warnings,
        }
    }
}

/// The JSON document of `contend lock`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct LockExport<'a> {
    /// Version, family, environment, warnings.
    #[serde(flatten)]
    pub header: Header<'a>,
    /// What was asked for.
    pub spec: &'a crate::family::lock::spec::LockSpec,
    /// One entry per point, with every run.
    pub points: &'a [PointResult],
}

/// The JSON document of `contend alloc`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct AllocExport<'a> {
    /// Version, family, environment, warnings.
    #[serde(flatten)]
    pub header: Header<'a>,
    /// What was asked for.
    pub spec: &'a crate::family::alloc::spec::AllocSpec,
    /// One entry per pattern and allocator, with every run.
    pub points: &'a [crate::family::alloc::sweep::AllocResult],
}

/// The JSON document of `contend wakeup`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct WakeupExport<'a> {
    /// Version, family, environment, warnings.
    #[serde(flatten)]
    pub header: Header<'a>,
    /// What was asked for.
    pub spec: &'a crate::family::wakeup::spec::WakeupSpec,
    /// What reading the clock costs.
    pub clock: &'a crate::measure::clock::ClockCost,
    /// What the outlier tracer did.
    pub trace: Option<&'a crate::measure::tracefs::TraceReport>,
    /// One entry per point, full histograms included.
    pub points: &'a [crate::family::wakeup::sweep::WakeupResult],
}

/// The JSON document of `contend tune`: a lock export (so `contend
/// compare` reads it) with the budget the search found best.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct TuneExport<'a> {
    /// Version, family ("lock"), environment, warnings.
    #[serde(flatten)]
    pub header: Header<'a>,
    /// What was asked for.
    pub spec: &'a crate::tune::spec::TuneSpec,
    /// The spin budget with the highest mean throughput.
    pub best_spin: Option<u32>,
    /// Every budget measured, with all runs.
    pub points: &'a [PointResult],
}

/// Serializes any export, pretty-printed.
pub fn render<T: Serialize>(export: &T) -> serde_json::Result<String> {
    serde_json::to_string_pretty(export)
}
