//! `--export-markdown` for every family: the terminal tables with a
//! Markdown preset, ready for a README or an issue.

use super::table;
use crate::measure::clock::ClockCost;
use crate::measure::env::Environment;
use crate::measure::tracefs::TraceReport;
use crate::runner::alloc_sweep::AllocResult;
use crate::runner::sweep::PointResult;
use crate::runner::wakeup_sweep::WakeupResult;
use comfy_table::presets::ASCII_MARKDOWN;

/// `contend lock`'s table.
pub fn lock(results: &[PointResult], env: &Environment) -> String {
    table::lock::render_with(results, env, ASCII_MARKDOWN)
}

/// `contend wakeup`'s table.
pub fn wakeup(results: &[WakeupResult], clock: &ClockCost, trace: Option<&TraceReport>) -> String {
    table::wakeup::render_with(results, clock, trace, ASCII_MARKDOWN)
}

/// `contend alloc`'s table.
pub fn alloc(results: &[AllocResult]) -> String {
    table::alloc::table_with(results, ASCII_MARKDOWN)
}
