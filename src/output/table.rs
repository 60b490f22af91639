//! The terminal tables, one file per family. Axes with a single value move
//! to the heading line, so the columns show only what varies. The same
//! tables, in Markdown, are the `--export-markdown` files.

use crate::measure::stats::Stats;
use crate::model::run::{RunRecord, Screened, Stopped};

/// Wraps every line of `text` longer than the width (`output::width`) at
/// word boundaries, continuing it indented by two spaces (textwrap).
pub fn fit(text: &str) -> String {
    // Never at a hyphen: `warm-up` or `--max-time` split over two lines
    // reads as two words (and a flag no one can paste).
    let options = textwrap::Options::new(crate::output::width::get())
        .subsequent_indent("  ")
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
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

/// `head` then `items` joined by `sep`, broken into lines of at most the
/// width (`output::width`) only between items (a stack's frames: a frame
/// such as `take (two_mutexes.c:42)` split at its space reads as two),
/// continuing indented by four spaces. An item longer than a line gets
/// one alone.
pub fn fit_items(head: &str, items: &[String], sep: &str) -> String {
    // " <- " is the space that may become a line break, then the mark
    // that starts the continued line.
    let (space, mark) = sep.split_at(sep.len() - sep.trim_start().len());
    let mut out = String::new();
    let mut line = head.to_string();
    let width = crate::output::width::get();
    for (i, item) in items.iter().enumerate() {
        let piece = if i == 0 { item.clone() } else { format!("{mark}{item}") };
        let joined = if i == 0 { format!("{line}{piece}") } else { format!("{line}{space}{piece}") };
        if i > 0 && joined.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line = format!("    {piece}");
        } else {
            line = joined;
        }
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// A table in `preset`. Terminal tables (any preset but Markdown) that
/// carry text columns (names, call sites, descriptions) are held to the
/// width (`output::width`): comfy-table wraps their widest cells at
/// spaces, leaving the narrow number columns whole. Markdown tables are
/// never wrapped, since a line break inside a cell would end its row.
pub fn with_text(preset: &str) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_preset(preset);
    if preset != comfy_table::presets::ASCII_MARKDOWN {
        t.set_content_arrangement(comfy_table::ContentArrangement::Dynamic)
            .set_width(u16::try_from(crate::output::width::get()).unwrap_or(u16::MAX));
    }
    t
}

/// Gives the room of a [`with_text`] table to its `text` columns (call
/// sites, names, descriptions), which wrap at spaces: every other column
/// is made exactly as wide as its widest body cell or header word, so its
/// numbers and addresses stay on one line (one split over two can be
/// neither read nor pasted) and only its header wraps, between words.
/// Call it after the rows are added.
pub fn wrap_only(t: &mut comfy_table::Table, text: &[usize]) {
    let mut widest: Vec<usize> = Vec::new();
    let mut widen = |i: usize, w: usize| {
        if widest.len() <= i {
            widest.resize(i + 1, 0);
        }
        widest[i] = widest[i].max(w);
    };
    if let Some(header) = t.header() {
        for (i, cell) in header.cell_iter().enumerate() {
            widen(i, widest_word(&cell.content()));
        }
    }
    for row in t.row_iter() {
        for (i, cell) in row.cell_iter().enumerate() {
            widen(i, widest_line(&cell.content()));
        }
    }
    for (i, w) in widest.into_iter().enumerate().filter(|(i, _)| !text.contains(i)) {
        if let Some(c) = t.column_mut(i) {
            // comfy-table's widths count the column's padding (one space
            // each side in every preset used here).
            let w = u16::try_from(w + 2).unwrap_or(u16::MAX);
            c.set_constraint(comfy_table::ColumnConstraint::Absolute(comfy_table::Width::Fixed(w)));
        }
    }
}

/// The longest word of `s`, in characters: what a header that wraps
/// between words needs.
pub fn widest_word(s: &str) -> usize {
    s.split_whitespace().map(|w| w.chars().count()).max().unwrap_or(0)
}

/// The longest line of `s`, in characters: what a cell kept whole needs.
pub fn widest_line(s: &str) -> usize {
    s.lines().map(|l| l.chars().count()).max().unwrap_or(0)
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

/// The mark on a ±% cell whose point ran out of --max-time short of
/// --precision.
pub(crate) const MISSED_MARK: &str = "!";

/// A ±% cell: the interval's half-width, marked when the point missed
/// its --precision; `-` for a point with one run, which has no interval.
pub(crate) fn interval_cell(stats: &Stats, stopped: Stopped) -> String {
    let mark = if stopped == Stopped::MaxTime { MISSED_MARK } else { "" };
    match stats.ci95_pct {
        Some(p) => format!("{p:.1}{mark}"),
        None => format!("-{mark}"),
    }
}

/// Whether a table shows the ±% and runs columns: when any point has an
/// interval, or when the user asked for one (--precision), so a point
/// that fitted a single run shows `-` and the note says why.
pub(crate) fn shows_intervals<'a>(points: impl IntoIterator<Item = (&'a Stats, Stopped)>) -> bool {
    points.into_iter().any(|(s, stopped)| s.n > 1 || matches!(stopped, Stopped::MaxTime | Stopped::Precision))
}

/// One note line for the points that ran out of --max-time short of
/// --precision (marked in their ±% cell), or nothing: how many, how far
/// off, how many runs were re-made because the machine was busy (and how
/// busy), and what to do. `points` gives each point's stopping reason,
/// statistics and runs.
pub(crate) fn precision_note<'a, S: RunRecord + 'a>(
    points: impl IntoIterator<Item = (Stopped, &'a Stats, &'a [S])>,
) -> String {
    let mut total = 0;
    let mut missed: Vec<&Stats> = Vec::new();
    let mut screened = Screened::default();
    for (stopped, stats, runs) in points {
        total += 1;
        if stopped == Stopped::MaxTime {
            missed.push(stats);
        }
        screened.add(runs);
    }
    let rejected = screened.count;
    if missed.is_empty() {
        return String::new();
    }
    let widths: Vec<f64> = missed.iter().filter_map(|s| s.ci95_pct).collect();
    let single = missed.len() - widths.len();
    let mut reached = String::new();
    if let (Some(lo), Some(hi)) =
        (widths.iter().copied().reduce(f64::min), widths.iter().copied().reduce(f64::max))
    {
        reached += &if lo == hi {
            format!("; they reached ±{lo:.1}%")
        } else {
            format!("; they reached ±{lo:.1}..±{hi:.1}%")
        };
    }
    if single > 0 {
        reached += &format!("; {single} fitted only one run, which gives no interval");
    }
    let cause = if rejected == 0 && widths.is_empty() {
        "--max-time is shorter than two runs of these points: give more --max-time".to_string()
    } else if rejected == 0 {
        "no run was re-made for load, so the runs themselves vary this much here: give more --max-time, \
         or ask for less --precision"
            .to_string()
    } else {
        let busy = screened
            .busy_mean_max()
            .map(|(mean, _)| format!(", which took {mean:.0}% of the machine on average during them"))
            .unwrap_or_default();
        format!(
            "{rejected} run(s) were re-made for steal or other load{busy}, and the re-made runs spent \
             the time: rerun when the host is quiet, or give more --max-time"
        )
    };
    format!(
        "note: {} of {total} point(s) ran out of --max-time short of --precision (marked {MISSED_MARK}){reached}; {cause}\n",
        missed.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_break_only_between_items() {
        let frames: Vec<String> = (0..12).map(|i| format!("frame_{i} (file.c:{i})")).collect();
        let text = fit_items("  0x1234: 3 walked: ", &frames, " <- ");
        assert!(text.lines().count() > 1, "{text}");
        for line in text.lines() {
            assert!(line.chars().count() <= crate::output::width::DEFAULT, "{line}");
        }
        let rejoined: String = text.lines().map(str::trim).collect::<Vec<_>>().join(" ");
        assert_eq!(rejoined, format!("0x1234: 3 walked: {}", frames.join(" <- ")));
        assert!(text.lines().skip(1).all(|l| l.starts_with("    <- frame_")), "{text}");
    }

    #[test]
    fn long_lines_wrap_at_the_width_and_short_ones_stay() {
        let long = "word ".repeat(40);
        let text = format!("short line\n\n{long}\n");
        let out = fit(&text);
        assert!(out.lines().all(|l| l.chars().count() <= crate::output::width::DEFAULT), "{out}");
        assert!(out.starts_with("short line\n\nword"));
        assert!(out.lines().nth(3).unwrap().starts_with("  word"), "{out}");
        assert_eq!(out.split_whitespace().count(), 42);
        let flags = format!("{} give more --max-time", "x".repeat(crate::output::width::DEFAULT - 20));
        assert!(fit(&flags).lines().any(|l| l.trim() == "--max-time"), "{}", fit(&flags));
    }
}

#[cfg(test)]
mod notes {
    use super::*;
    use crate::model::run::testing::Run;
    use crate::model::run::RunStatus;

    fn run(status: RunStatus, busy: f64) -> Run {
        Run::new(status, busy)
    }

    #[test]
    fn missed_points_are_marked_and_counted_in_one_line_with_their_cause() {
        let (wide, one, met) =
            (Stats::of(&[100.0, 110.0, 95.0]), Stats::of(&[100.0]), Stats::of(&[100.0, 100.1, 99.9]));
        assert!(interval_cell(&wide, Stopped::MaxTime).ends_with(MISSED_MARK));
        assert_eq!(interval_cell(&one, Stopped::MaxTime), "-!");
        assert!(!interval_cell(&met, Stopped::Precision).ends_with(MISSED_MARK));
        let quiet: [Run; 0] = [];
        let busy =
            [run(RunStatus::Rejected, 30.0), run(RunStatus::Rejected, 50.0), run(RunStatus::Measured, 1.0)];
        let note = precision_note([
            (Stopped::MaxTime, &wide, &busy[..]),
            (Stopped::MaxTime, &one, &quiet[..]),
            (Stopped::Precision, &met, &quiet[..]),
        ]);
        assert_eq!(note.lines().count(), 1, "{note}");
        assert!(note.starts_with("note: 2 of 3 point(s) ran out of --max-time"), "{note}");
        assert!(note.contains("1 fitted only one run, which gives no interval"), "{note}");
        assert!(
            note.contains("2 run(s) were re-made")
                && note.contains("which took 40% of the machine on average"),
            "{note}"
        );
        assert!(!note.contains("NaN"), "{note}");
        // Without re-made runs, the runs' own spread is the cause.
        let note = precision_note([(Stopped::MaxTime, &wide, &quiet[..])]);
        assert!(note.contains("the runs themselves vary"), "{note}");
        // Every miss fitted one run: the budget, not the spread.
        let note = precision_note([(Stopped::MaxTime, &one, &quiet[..])]);
        assert!(note.contains("shorter than two runs") && !note.contains("vary"), "{note}");
        assert!(precision_note([(Stopped::Precision, &met, &quiet[..])]).is_empty());
        // A table whose one point fitted one run still shows the columns.
        assert!(shows_intervals([(&one, Stopped::MaxTime)]) && !shows_intervals([(&one, Stopped::Runs)]));
    }
}
