//! `--export-json`: everything a run knows, with a schema version so readers
//! can tell layouts apart.

use crate::measure::env::Environment;
use crate::runner::sweep::PointResult;
use crate::spec::LockSpec;
use serde::Serialize;

/// Bumped whenever a field changes meaning or disappears.
pub const SCHEMA_VERSION: u32 = 1;

/// The JSON document of `contend lock`.
#[derive(Debug, Serialize)]
pub struct LockExport<'a> {
    /// Layout version of this document.
    pub schema_version: u32,
    /// Always "contend".
    pub tool: &'static str,
    /// Which family produced it: "lock".
    pub family: &'static str,
    /// Where the numbers came from.
    pub environment: &'a Environment,
    /// What was asked for.
    pub spec: &'a LockSpec,
    /// What the reader must know.
    pub warnings: &'a [String],
    /// One entry per point.
    pub points: &'a [PointResult],
}

/// Serializes the export, pretty-printed.
pub fn render(export: &LockExport<'_>) -> serde_json::Result<String> {
    serde_json::to_string_pretty(export)
}

/// The JSON document of `contend alloc`.
#[derive(Debug, Serialize)]
pub struct AllocExport<'a> {
    /// Layout version of this document.
    pub schema_version: u32,
    /// Always "contend".
    pub tool: &'static str,
    /// "alloc".
    pub family: &'static str,
    /// Where the numbers came from.
    pub environment: &'a Environment,
    /// What was asked for.
    pub spec: &'a crate::spec::alloc::AllocSpec,
    /// What the reader must know.
    pub warnings: &'a [String],
    /// One entry per pattern and allocator.
    pub samples: &'a [crate::runner::alloc_sweep::AllocSample],
}

/// The JSON document of `contend wakeup`.
#[derive(Debug, Serialize)]
pub struct WakeupExport<'a> {
    /// Layout version of this document.
    pub schema_version: u32,
    /// Always "contend".
    pub tool: &'static str,
    /// "wakeup".
    pub family: &'static str,
    /// Where the numbers came from.
    pub environment: &'a Environment,
    /// What was asked for.
    pub spec: &'a crate::spec::wakeup::WakeupSpec,
    /// What reading the clock costs.
    pub clock: &'a crate::measure::clock::ClockCost,
    /// What the outlier tracer did.
    pub trace: Option<&'a crate::measure::tracefs::TraceReport>,
    /// What the reader must know.
    pub warnings: &'a [String],
    /// One entry per point, full histograms included.
    pub points: &'a [crate::runner::wakeup_sweep::WakeupResult],
}
