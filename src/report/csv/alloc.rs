//! `contend alloc --export-csv`: the table's columns, one row per pattern
//! and allocator, numbers unrounded.

use crate::report::table::alloc::{row, COLUMNS};
use crate::runner::alloc_sweep::AllocResult;

/// CSV: a header and one row per sample.
pub fn render(results: &[AllocResult]) -> String {
    super::render(&COLUMNS, results.iter().map(|r| row(r, false)))
}
