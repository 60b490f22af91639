//! The wakeup family's formats: table, CSV, gnuplot columns, SVG plot.

pub mod csv;
pub mod gnuplot;
pub mod histogram;
pub mod plot;
pub mod table;

use crate::family::wakeup::spec::WakeupSpec;
use crate::family::wakeup::sweep::{WakeupOutcome, WakeupResult};
use crate::output::columns::Shown;
use crate::output::document::Report;
use crate::output::json::Header;
use crate::output::results::{plot_title, Results};
use comfy_table::presets::ASCII_MARKDOWN;
use serde::Serialize;
use serde_json::Value;

/// The JSON document of `contend wakeup`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct WakeupExport<'a> {
    /// Version, family, environment, warnings.
    #[serde(flatten)]
    pub header: Header<'a>,
    /// What was asked for.
    pub spec: &'a WakeupSpec,
    /// What reading the clock costs.
    pub clock: &'a crate::measure::clock::ClockCost,
    /// What the outlier tracer did.
    pub trace: Option<&'a crate::measure::tracefs::TraceReport>,
    /// One entry per point, full histograms included.
    pub points: &'a [WakeupResult],
}

/// `contend wakeup`'s results.
pub type WakeupReport<'a> = Results<'a, WakeupSpec, WakeupOutcome>;

impl Report for WakeupReport<'_> {
    fn terminal(&self) -> String {
        let o = self.outcome;
        let mut text = table::render(
            &o.results,
            &o.clock,
            o.trace.as_ref(),
            &Shown::planned(table::GROUPS, &self.spec.output),
        );
        if let Some(bucket) = self.spec.histogram_bucket_ns {
            text += &histogram::render(&o.results, bucket);
        }
        text
    }
    fn csv(&self) -> String {
        csv::render(&self.outcome.results)
    }
    fn markdown(&self) -> String {
        let o = self.outcome;
        table::render_with(
            &o.results,
            &o.clock,
            o.trace.as_ref(),
            &Shown::planned(table::GROUPS, &self.spec.output),
            ASCII_MARKDOWN,
        )
    }
    fn gnuplot(&self) -> String {
        gnuplot::render(&self.outcome.results)
    }
    fn plot(&self) -> Option<Result<String, String>> {
        Some(plot::render(&self.outcome.results, &plot_title(self.environment)))
    }
    fn document(&self) -> serde_json::Result<Value> {
        let o = self.outcome;
        serde_json::to_value(WakeupExport {
            header: Header::new("wakeup", self.environment, &o.warnings),
            spec: self.spec,
            clock: &o.clock,
            trace: o.trace.as_ref(),
            points: &o.results,
        })
    }
}
