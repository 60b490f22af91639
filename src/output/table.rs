//! The terminal tables, one file per family. Axes with a single value move
//! to the heading line, so the columns show only what varies. The same
//! tables, in Markdown, are the `--export-markdown` files.

use crate::measure::stats::Stats;
use crate::model::run::Stopped;

/// The width tables, headings, legends and notes are made to fit.
pub const WIDTH: usize = 100;

/// Wraps every line of `text` longer than [`WIDTH`] at word boundaries,
/// continuing it indented by two spaces (textwrap).
pub fn fit(text: &str) -> String {
    let options = textwrap::Options::new(WIDTH).subsequent_indent("  ");
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        // An empty line wraps to one empty piece, so blank lines stay.
        for piece in textwrap::wrap(line, &options) {
            out.push_str(&piece);
            out.push('\n');
        }
    }
    out
}

/// Right-aligns the numeric `columns` of `t` (those it has).
pub fn align_right(t: &mut comfy_table::Table, columns: std::ops::Range<usize>) {
    for i in columns {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(comfy_table::CellAlignment::Right);
        }
    }
}

/// The mark on a number that comes from a run a signal cut short.
pub(crate) const CUT_MARK: &str = "*";

/// Says that a point's numbers come from its one run, cut short by a
/// signal (it had no complete run), as a note line, or nothing.
pub(crate) fn cut_short_note<S: crate::model::run::RunRecord>(label: &str, runs: &[S]) -> String {
    if !crate::model::run::from_cut_short(runs) {
        return String::new();
    }
    format!(
        "note: {label}: {CUT_MARK} its only run was cut short by the interrupt: a shorter window, \
         likely disturbed; runs cut short are left out wherever a complete run exists\n"
    )
}

/// Says when --precision gave up before reaching its target, as a note
/// line ("note: ...\n"), or nothing.
pub(crate) fn precision_note(label: &str, stopped: Stopped, stats: &Stats) -> String {
    if stopped != Stopped::MaxTime {
        return String::new();
    }
    format!(
        "note: {label}: --max-time spent after {} runs with the interval at ±{:.1}%, short of --precision\n",
        stats.n,
        stats.ci95_pct.unwrap_or(f64::NAN)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_wrap_at_the_width_and_short_ones_stay() {
        let long = "word ".repeat(40);
        let text = format!("short line\n\n{long}\n");
        let out = fit(&text);
        assert!(out.lines().all(|l| l.chars().count() <= WIDTH), "{out}");
        assert!(out.starts_with("short line\n\nword"));
        assert!(out.lines().nth(3).unwrap().starts_with("  word"), "{out}");
        assert_eq!(out.split_whitespace().count(), 42);
    }
}
