//! `--export-markdown` for every family: the terminal tables with a
//! Markdown preset, ready for a README or an issue.

use crate::family::alloc::sweep::AllocResult;
use crate::family::lock::sweep::PointResult;
use crate::family::wakeup::sweep::WakeupResult;
use crate::measure::clock::ClockCost;
use crate::measure::env::Environment;
use crate::measure::tracefs::TraceReport;
use comfy_table::presets::ASCII_MARKDOWN;

/// `contend lock`'s table.
pub fn lock(results: &[PointResult], env: &Environment) -> String {
    crate::family::lock::report::table::render_with(results, env, ASCII_MARKDOWN)
}

/// `contend wakeup`'s table.
pub fn wakeup(results: &[WakeupResult], clock: &ClockCost, trace: Option<&TraceReport>) -> String {
    crate::family::wakeup::report::table::render_with(results, clock, trace, ASCII_MARKDOWN)
}

/// `contend alloc`'s table.
pub fn alloc(results: &[AllocResult]) -> String {
    crate::family::alloc::report::table::table_with(results, ASCII_MARKDOWN)
}
