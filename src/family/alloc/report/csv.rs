//! `contend alloc --export-csv`: the table's columns, one row per pattern
//! and allocator, numbers unrounded.

use crate::family::alloc::report::table::{row, COLUMNS};
use crate::family::alloc::sweep::AllocResult;

/// CSV: a header and one row per sample.
pub fn render(results: &[AllocResult]) -> String {
    crate::output::csv::render(&COLUMNS, results.iter().map(|r| row(r, false)))
}
