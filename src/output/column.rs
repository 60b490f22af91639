//! A table's columns stated once: each column's group, header, alignment
//! and the function that fills its cell from a row, side by side. A table
//! used to list its headers in one place and push its cells in another,
//! and nothing but care kept the two in the same order (a cell pushed one
//! place off fills the wrong column silently); here a header cannot exist
//! without its cell, and the alignment and wrapping follow the column
//! instead of an index range.

use crate::output::columns::{Shown, CORE};
use comfy_table::Table;

/// How a column lays out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Left-aligned: names, labels, axes.
    Text,
    /// Right-aligned: numbers.
    Number,
    /// Left-aligned, and given the table's spare room (wraps at spaces):
    /// call sites and descriptions (see `output::table::wrap_only`).
    Wrapping,
}

/// One column of a table whose rows are `R`.
pub struct Column<'a, R> {
    group: &'static str,
    header: &'a str,
    kind: Kind,
    applies: bool,
    cell: Box<dyn Fn(&R) -> String + 'a>,
}

impl<'a, R> Column<'a, R> {
    fn new(group: &'static str, header: &'a str, kind: Kind, cell: impl Fn(&R) -> String + 'a) -> Self {
        Column { group, header, kind, applies: true, cell: Box::new(cell) }
    }

    /// A left-aligned column of `group` (`CORE`: always shown).
    pub fn text(group: &'static str, header: &'a str, cell: impl Fn(&R) -> String + 'a) -> Self {
        Self::new(group, header, Kind::Text, cell)
    }

    /// A right-aligned column of `group`.
    pub fn number(group: &'static str, header: &'a str, cell: impl Fn(&R) -> String + 'a) -> Self {
        Self::new(group, header, Kind::Number, cell)
    }

    /// A left-aligned core column that takes the table's spare room.
    pub fn wrapping(header: &'a str, cell: impl Fn(&R) -> String + 'a) -> Self {
        Self::new(CORE, header, Kind::Wrapping, cell)
    }

    /// Keeps the column only when `applies` (a column about repeats where
    /// nothing repeated is left out whatever its group).
    pub fn only_if(mut self, applies: bool) -> Self {
        self.applies &= applies;
        self
    }
}

/// The columns a table shows, in order.
pub struct Columns<'a, R>(Vec<Column<'a, R>>);

impl<'a, R> Columns<'a, R> {
    /// The columns of `all` that apply and whose group `shown` shows.
    pub fn shown(all: Vec<Column<'a, R>>, shown: &Shown) -> Self {
        Columns(all.into_iter().filter(|c| c.applies && shown.has(c.group)).collect())
    }

    /// The columns of `all` that apply (a table without column groups).
    pub fn applying(all: Vec<Column<'a, R>>) -> Self {
        Columns(all.into_iter().filter(|c| c.applies).collect())
    }

    /// The headers, in order.
    pub fn headers(&self) -> Vec<&str> {
        self.0.iter().map(|c| c.header).collect()
    }

    /// One row's cells, in the headers' order.
    pub fn cells(&self, row: &R) -> Vec<String> {
        self.0.iter().map(|c| (c.cell)(row)).collect()
    }

    /// Sets `t`'s header, right-aligns its number columns and gives the
    /// wrapping columns the room (call after the rows are added: the
    /// widths come from them).
    pub fn lay_out(&self, t: &mut Table) {
        t.set_header(self.headers());
        let wrapping: Vec<usize> =
            self.0.iter().enumerate().filter(|(_, c)| c.kind == Kind::Wrapping).map(|(i, _)| i).collect();
        if !wrapping.is_empty() {
            crate::output::table::wrap_only(t, &wrapping);
        }
        for (i, c) in self.0.iter().enumerate() {
            if c.kind == Kind::Number {
                crate::output::table::align_right(t, i..i + 1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::columns::Group;

    const GROUPS: &[Group] = &[Group { name: "extra", default: false, legend: "extra\n" }];

    fn columns() -> Vec<Column<'static, (u32, u32)>> {
        vec![
            Column::text(CORE, "name", |r: &(u32, u32)| format!("n{}", r.0)),
            Column::number("extra", "second", |r: &(u32, u32)| r.1.to_string()),
            Column::number(CORE, "sum", |r: &(u32, u32)| (r.0 + r.1).to_string()),
            Column::number(CORE, "never", |_: &(u32, u32)| "x".into()).only_if(false),
        ]
    }

    #[test]
    fn a_header_and_its_cell_come_and_go_together() {
        let args = crate::output::args::OutputArgs::default();
        let c = Columns::shown(columns(), &Shown::of(GROUPS, &args).unwrap());
        assert_eq!(c.headers(), ["name", "sum"]);
        assert_eq!(c.cells(&(1, 2)), ["n1", "3"]);
        let wide = crate::output::args::OutputArgs { wide: true, ..Default::default() };
        let c = Columns::shown(columns(), &Shown::of(GROUPS, &wide).unwrap());
        assert_eq!(c.headers(), ["name", "second", "sum"]);
        assert_eq!(c.cells(&(1, 2)), ["n1", "2", "3"]);
        assert_eq!(Columns::applying(columns()).headers(), ["name", "second", "sum"]);
    }

    #[test]
    fn numbers_align_right_and_text_left() {
        let c = Columns::applying(columns());
        let mut t = Table::new();
        t.load_preset(comfy_table::presets::NOTHING);
        t.add_row(c.cells(&(1, 22)));
        t.add_row(c.cells(&(100, 2)));
        c.lay_out(&mut t);
        let text = t.to_string();
        let lines: Vec<&str> = text.lines().collect();
        // The header, then the rows: "n1" left, "22" and "23" right.
        assert!(lines[1].starts_with(" n1 "), "{text}");
        assert!(lines[2].contains("   2 "), "{text}");
    }
}
