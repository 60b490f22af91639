//! `contend tune`'s report: the lock family's tables and plot over the
//! budgets measured, the search's summary, and a lock-shaped export (so
//! `contend compare` reads it) with the best budget.

use crate::family::lock::report as lock_report;
use crate::measure::env::Environment;
use crate::model::lock::PointResult;
use crate::output::columns::Shown;
use crate::output::document::Report;
use crate::output::json::Header;
use crate::output::results::plot_title;
use crate::tune::run::TuneOutcome;
use crate::tune::spec::TuneSpec;
use comfy_table::presets::ASCII_MARKDOWN;
use serde::Serialize;
use serde_json::Value;

/// The JSON document of `contend tune`: a lock export (so `contend
/// compare` reads it) with the budget the search found best.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct TuneExport<'a> {
    /// Version, family ("lock"), environment, warnings.
    #[serde(flatten)]
    pub header: Header<'a>,
    /// What was asked for.
    pub spec: &'a TuneSpec,
    /// The spin budget (or glibc spin count, as `spec.knob` says) with the
    /// highest mean throughput.
    pub best_spin: Option<u32>,
    /// Every budget measured, with all runs.
    pub points: &'a [PointResult],
}

/// `contend tune`'s results: lock points, and the search's summary.
pub struct TuneReport<'a> {
    /// What was asked for.
    pub spec: &'a TuneSpec,
    /// Where it ran.
    pub environment: &'a Environment,
    /// What was measured.
    pub outcome: &'a TuneOutcome,
}

impl Report for TuneReport<'_> {
    fn terminal(&self) -> String {
        lock_report::table::render(
            &self.outcome.results,
            self.environment,
            &Shown::planned(lock_report::table::GROUPS, &self.spec.output),
        ) + &super::table::summary(self.outcome)
    }
    fn csv(&self) -> String {
        lock_report::csv::render(&self.outcome.results)
    }
    fn markdown(&self) -> String {
        lock_report::table::render_with(
            &self.outcome.results,
            self.environment,
            &Shown::planned(lock_report::table::GROUPS, &self.spec.output),
            ASCII_MARKDOWN,
        )
    }
    fn gnuplot(&self) -> String {
        lock_report::gnuplot::render(&self.outcome.results)
    }
    fn plot(&self) -> Option<Result<String, String>> {
        Some(lock_report::plot::render(&self.outcome.results, &plot_title(self.environment)))
    }
    fn document(&self) -> serde_json::Result<Value> {
        let o = self.outcome;
        serde_json::to_value(TuneExport {
            header: Header::new("lock", self.environment, &o.warnings),
            spec: self.spec,
            best_spin: o.best.and_then(|b| o.knob.of(&o.results[b].point)),
            points: &o.results,
        })
    }
}
