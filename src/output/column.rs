//! A table's columns stated once: each column's group, header, alignment
//! and the function that fills its cell from a row, side by side. A table
//! used to list its headers in one place and push its cells in another,
//! and nothing but care kept the two in the same order (a cell pushed one
//! place off fills the wrong column silently); here a header cannot exist
//! without its cell, and the alignment and wrapping follow the column
//! instead of an index range. A table wider than the terminal is laid out
//! in blocks of columns, each led by the row's name ([`Columns::render`]).

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

    /// The legend lines of the groups with a column here, in `groups`'
    /// order: a group shown whose columns do not apply (reader-writer
    /// columns where no point has readers) explains nothing.
    pub fn legend(&self, groups: &[crate::output::columns::Group]) -> String {
        groups.iter().filter(|g| self.0.iter().any(|c| c.group == g.name)).map(|g| g.legend).collect()
    }

    /// The headers, in order.
    #[cfg(test)]
    fn headers(&self) -> Vec<&str> {
        self.0.iter().map(|c| c.header).collect()
    }

    /// One row's cells, in the headers' order.
    pub fn cells(&self, row: &R) -> Vec<String> {
        self.0.iter().map(|c| (c.cell)(row)).collect()
    }

    /// The table of `rows` (each this list's [`Columns::cells`], maybe
    /// reformatted) in `preset`. In a terminal it fits the width
    /// (`output::width`): when it would not, the columns go in blocks one
    /// under another, each led by the key columns (the leading text
    /// columns: what a row is), so that no column is squeezed (a call
    /// site keeps its room) and no row breaks across lines. Markdown is
    /// one table, never split.
    pub fn render(&self, rows: &[Vec<String>], preset: &str) -> String {
        let all: Vec<usize> = (0..self.0.len()).collect();
        if preset == comfy_table::presets::ASCII_MARKDOWN {
            return self.block(&all, rows, preset);
        }
        blocks(&self.widths(rows), &self.keys(), crate::output::width::get())
            .iter()
            .map(|b| self.block(b, rows, preset))
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    /// The leading text columns, which every block repeats.
    fn keys(&self) -> Vec<usize> {
        self.0.iter().take_while(|c| c.kind == Kind::Text).enumerate().map(|(i, _)| i).collect()
    }

    /// Each column's width with its padding (one space each side): a
    /// wrapping column's least, its longest cell up to half the width
    /// (it wraps beyond), never below its longest word; in a table with
    /// one, the others' as `output::table::wrap_only` sets them (headers
    /// wrap between words); else the widest header or cell.
    fn widths(&self, rows: &[Vec<String>]) -> Vec<usize> {
        use crate::output::table::{widest_line as line, widest_word as word};
        let longest =
            |i: usize, of: &dyn Fn(&str) -> usize| rows.iter().map(|r| of(&r[i])).max().unwrap_or(0);
        let wraps = self.0.iter().any(|c| c.kind == Kind::Wrapping);
        let half = crate::output::width::get() / 2;
        self.0
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let w = match c.kind {
                    Kind::Wrapping => longest(i, &line).min(half).max(longest(i, &word)).max(word(c.header)),
                    _ if wraps => longest(i, &line).max(word(c.header)),
                    _ => longest(i, &line).max(c.header.chars().count()),
                };
                w + 2
            })
            .collect()
    }

    /// One table of the columns `block` (indices into this list).
    fn block(&self, block: &[usize], rows: &[Vec<String>], preset: &str) -> String {
        let wraps = block.iter().any(|&i| self.0[i].kind == Kind::Wrapping);
        let mut t = if wraps {
            crate::output::table::with_text(preset)
        } else {
            let mut t = Table::new();
            t.load_preset(preset);
            t
        };
        t.set_header(block.iter().map(|&i| self.0[i].header));
        for r in rows {
            t.add_row(block.iter().map(|&i| r[i].as_str()));
        }
        let wrapping: Vec<usize> =
            (0..block.len()).filter(|&j| self.0[block[j]].kind == Kind::Wrapping).collect();
        if !wrapping.is_empty() {
            crate::output::table::wrap_only(&mut t, &wrapping);
        }
        for (j, &i) in block.iter().enumerate() {
            if self.0[i].kind == Kind::Number {
                crate::output::table::align_right(&mut t, j..j + 1);
            }
        }
        t.to_string()
    }
}

/// The columns of each block: all in one when their `widths` fit
/// `width`; else the `keys` then as many of the others, in order, as fit,
/// block after block (a column wider than a block alone gets one).
fn blocks(widths: &[usize], keys: &[usize], width: usize) -> Vec<Vec<usize>> {
    if widths.iter().sum::<usize>() <= width {
        return vec![(0..widths.len()).collect()];
    }
    let key_width: usize = keys.iter().map(|&k| widths[k]).sum();
    let mut out = Vec::new();
    let (mut block, mut used) = (keys.to_vec(), key_width);
    for i in (0..widths.len()).filter(|i| !keys.contains(i)) {
        if used + widths[i] > width && block.len() > keys.len() {
            out.push(std::mem::replace(&mut block, keys.to_vec()));
            used = key_width;
        }
        block.push(i);
        used += widths[i];
    }
    out.push(block);
    out
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
        let text = c.render(&[c.cells(&(1, 22)), c.cells(&(100, 2))], comfy_table::presets::NOTHING);
        let lines: Vec<&str> = text.lines().collect();
        // The header, then the rows: "n1" left, "22" and "23" right.
        assert!(lines[1].starts_with(" n1 "), "{text}");
        assert!(lines[2].contains("   2 "), "{text}");
    }

    #[test]
    fn columns_that_do_not_fit_go_in_blocks_led_by_the_keys() {
        // Everything fits: one block.
        assert_eq!(blocks(&[10, 10, 10], &[0], 30), vec![vec![0, 1, 2]]);
        // Not: each block repeats the key and takes what fits.
        assert_eq!(blocks(&[10, 10, 10, 10], &[0], 30), vec![vec![0, 1, 2], vec![0, 3]]);
        assert_eq!(
            blocks(&[10, 8, 10, 10, 10], &[0, 1], 30),
            vec![vec![0, 1, 2], vec![0, 1, 3], vec![0, 1, 4]]
        );
        // A column wider than a block alone still gets one.
        assert_eq!(blocks(&[10, 40, 5], &[0], 30), vec![vec![0, 1], vec![0, 2]]);
    }
}
