//! The sweep's progress bar (indicatif): how many runs a plan makes, an
//! ETA from the runs' measured durations, and no redraw thread, which
//! would wake inside the measured windows.

use crate::engine::repeat::Repeat;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

/// Below this estimated length no progress bar is worth drawing.
const PROGRESS_MIN: Duration = Duration::from_secs(2);

/// The runs a sweep plans before precision adds any: every point's
/// `--runs` (at least two with --precision), plus its counting run.
pub fn planned_runs(points: usize, plan: &Repeat, counting: bool) -> usize {
    points.saturating_mul(plan.least().saturating_add(usize::from(counting)))
}

/// Counts one finished run on `bar`; precision can add runs past the
/// plan, and the bar grows with them.
pub fn tick(bar: &ProgressBar) {
    if bar.length().is_some_and(|len| bar.position() >= len) {
        bar.inc_length(1);
    }
    bar.inc(1);
}

/// How long `runs` runs of `per_run` take (saturating: a plan may be
/// absurd, the arithmetic must not panic on it).
pub fn estimate(runs: usize, per_run: Duration) -> Duration {
    per_run.saturating_mul(u32::try_from(runs).unwrap_or(u32::MAX))
}

/// A progress bar for `runs` runs of about `per_run` each, hidden when
/// not wanted, not on a terminal, or too short to matter. Its ETA comes
/// from the runs' measured durations; precision may add runs, and the
/// bar's length grows with them.
pub fn progress_bar(wanted: bool, runs: usize, per_run: Duration) -> ProgressBar {
    let estimate = estimate(runs, per_run);
    if !wanted || !std::io::stderr().is_terminal() || estimate < PROGRESS_MIN {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(runs as u64);
    bar.set_style(
        ProgressStyle::with_template("[{elapsed_precise}] {bar:30} {pos}/{len} runs, ETA {eta}  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    // No steady tick: a redraw thread waking five times a second would
    // run inside the measured windows. The bar redraws when a run ends
    // (and indicatif's ETA comes from those measured run times).
    bar
}
