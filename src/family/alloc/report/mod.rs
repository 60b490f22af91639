//! The alloc family's formats: table, CSV, gnuplot columns.

pub mod csv;
pub mod gnuplot;
pub mod table;

use crate::family::alloc::spec::AllocSpec;
use crate::family::alloc::sweep::{AllocOutcome, AllocResult};
use crate::output::columns::Shown;
use crate::output::document::Report;
use crate::output::json::Header;
use crate::output::results::Results;
use comfy_table::presets::ASCII_MARKDOWN;
use serde::Serialize;
use serde_json::Value;

/// The JSON document of `contend alloc`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct AllocExport<'a> {
    /// Version, family, environment, warnings.
    #[serde(flatten)]
    pub header: Header<'a>,
    /// What was asked for.
    pub spec: &'a AllocSpec,
    /// One entry per pattern and allocator, with every run.
    pub points: &'a [AllocResult],
}

/// `contend alloc`'s results.
pub type AllocReport<'a> = Results<'a, AllocSpec, AllocOutcome>;

impl Report for AllocReport<'_> {
    fn terminal(&self) -> String {
        table::table(&self.outcome.results, &Shown::planned(table::GROUPS, &self.spec.output))
    }
    fn csv(&self) -> String {
        csv::render(&self.outcome.results)
    }
    fn markdown(&self) -> String {
        table::table_with(
            &self.outcome.results,
            &Shown::planned(table::GROUPS, &self.spec.output),
            ASCII_MARKDOWN,
        )
    }
    fn gnuplot(&self) -> String {
        gnuplot::render(&self.outcome.results)
    }
    fn plot(&self) -> Option<Result<String, String>> {
        None
    }
    fn document(&self) -> serde_json::Result<Value> {
        serde_json::to_value(AllocExport {
            header: Header::new("alloc", self.environment, &self.outcome.warnings),
            spec: self.spec,
            points: &self.outcome.results,
        })
    }
}
