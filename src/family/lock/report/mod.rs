//! The lock family's formats: terminal and Markdown table, CSV, gnuplot
//! columns, SVG plot, and futex-scalability.c's summary lines.

pub mod csv;
pub mod dot;
pub mod gnuplot;
mod panels;
pub mod plot;
pub mod seed;
pub mod table;
pub mod waits;

use crate::family::lock::args::Format;
use crate::family::lock::spec::LockSpec;
use crate::family::lock::sweep::SweepOutcome;
use crate::model::lock::PointResult;
use crate::output::columns::Shown;
use crate::output::document::Report;
use crate::output::json::Header;
use crate::output::results::{plot_title, Results};
use comfy_table::presets::ASCII_MARKDOWN;
use serde::Serialize;
use serde_json::Value;

/// The JSON document of `contend lock`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct LockExport<'a> {
    /// Version, family, environment, warnings.
    #[serde(flatten)]
    pub header: Header<'a>,
    /// What was asked for.
    pub spec: &'a LockSpec,
    /// One entry per point, with every run.
    pub points: &'a [PointResult],
    /// The budgets `adaptive` derived from the measured wake cost, when
    /// it was among the locks.
    pub adaptive: Option<AdaptiveBudgets>,
}

/// `adaptive`'s time budgets in this process, all multiples of the wake
/// cost (`environment.wake_cost_ns`, or 5 µs where it was not measured).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct AdaptiveBudgets {
    /// The wake cost they derive from, ns.
    pub wake_ns: u64,
    /// A spinner waits this long before it asks for its turn, ns.
    pub turn_ns: u64,
    /// A spinner that asked waits this long for its turn before it sleeps, ns.
    pub patience_ns: u64,
    /// A thread stays this long in the active set before it makes way for
    /// a sleeper, ns.
    pub quantum_ns: u64,
    /// Pauses the first unlock after a slow lock waits for a spinner
    /// before it wakes a sleeper.
    pub giver_pauses: u32,
}

impl AdaptiveBudgets {
    /// The budgets, if `locks` includes `adaptive`.
    pub fn of(locks: &[&str]) -> Option<Self> {
        locks.contains(&"adaptive").then(|| {
            let b = locks::raw::adaptive_budgets();
            Self {
                wake_ns: b.wake_ns,
                turn_ns: b.turn_ns,
                patience_ns: b.patience_ns,
                quantum_ns: b.quantum_ns,
                giver_pauses: b.giver_pauses,
            }
        })
    }
}

/// `contend lock`'s results.
pub type LockReport<'a> = Results<'a, LockSpec, SweepOutcome>;

impl Report for LockReport<'_> {
    fn terminal(&self) -> String {
        let results = &self.outcome.results;
        match self.spec.format {
            Format::Table => {
                table::render(results, self.environment, &Shown::planned(table::GROUPS, &self.spec.output))
            }
            Format::Seed => seed::render(results),
            Format::Gnuplot => gnuplot::render(results),
        }
    }
    fn csv(&self) -> String {
        csv::render(&self.outcome.results)
    }
    fn markdown(&self) -> String {
        table::render_with(
            &self.outcome.results,
            self.environment,
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
        serde_json::to_value(LockExport {
            header: Header::new("lock", self.environment, &self.outcome.warnings),
            spec: self.spec,
            points: &self.outcome.results,
            adaptive: AdaptiveBudgets::of(&self.spec.locks),
        })
    }
}
