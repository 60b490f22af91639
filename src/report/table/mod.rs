//! The terminal tables, one file per family. Axes with a single value move
//! to the heading line, so the columns show only what varies. The same
//! tables, in Markdown, are the `--export-markdown` files.

pub mod alloc;
pub mod compare;
pub mod lock;
pub mod tune;
pub mod wakeup;

use crate::measure::stats::Stats;
use crate::runner::repeat::Stopped;

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
