//! The terminal tables, one file per family. Axes with a single value move
//! to the heading line, so the columns show only what varies. The same
//! tables, in Markdown, are the `--export-markdown` files.

use crate::measure::stats::Stats;
use crate::model::run::Stopped;

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
