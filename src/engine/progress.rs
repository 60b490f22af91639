//! The sweep's progress bar (indicatif): how many runs a plan makes, an
//! ETA from the plan and then from the runs' measured durations, and no
//! redraw thread, which would wake inside the measured windows.

use crate::engine::repeat::Repeat;
use indicatif::{HumanDuration, ProgressBar, ProgressState, ProgressStyle};
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
/// not wanted, not on a terminal, or too short to matter; precision may
/// add runs, and the bar's length grows with them. Its ETA is
/// [`eta_text`]: the plan's estimate until a run has ended, then the
/// remaining runs at the measured mean run time; never past `cap` (tune's
/// --max-time) when there is one.
pub fn progress_bar(wanted: bool, runs: usize, per_run: Duration, cap: Option<Duration>) -> ProgressBar {
    let estimate = estimate(runs, per_run);
    if !wanted || !std::io::stderr().is_terminal() || estimate < PROGRESS_MIN {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(runs as u64);
    let style =
        ProgressStyle::with_template("[{elapsed_precise}] {bar:30} {pos}/{len} runs, ETA {plan_eta}  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .with_key("plan_eta", move |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let left = eta_text(state.pos(), state.len().unwrap_or(0), state.elapsed(), per_run, cap);
                let _ = w.write_str(&left);
            });
    bar.set_style(style);
    // No steady tick: a redraw thread waking five times a second would
    // run inside the measured windows. The bar redraws when a run ends.
    bar
}

/// The time left, in words: `done` of `planned` runs ended after
/// `elapsed`. Before the first run ends, the plan's estimate (`~` marks
/// it as one); then the remaining runs at the mean measured run time.
/// With a `cap` (a --max-time budget), never more than what is left of it.
pub fn eta_text(
    done: u64,
    planned: u64,
    elapsed: Duration,
    per_run: Duration,
    cap: Option<Duration>,
) -> String {
    let left = planned.saturating_sub(done);
    let (guess, estimate) = match done {
        0 => (true, per_run.saturating_mul(u32::try_from(left).unwrap_or(u32::MAX))),
        _ => (
            false,
            (elapsed / u32::try_from(done).unwrap_or(u32::MAX))
                .saturating_mul(u32::try_from(left).unwrap_or(u32::MAX)),
        ),
    };
    let estimate = match cap {
        Some(cap) => estimate.min(cap.saturating_sub(elapsed)),
        None => estimate,
    };
    format!("{}{}", if guess { "~" } else { "" }, HumanDuration(estimate))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eta_starts_from_the_plan_then_follows_the_measured_runs() {
        let s = Duration::from_secs;
        // Nothing ended yet: 10 runs of about 2 s each.
        assert_eq!(eta_text(0, 10, s(0), s(2), None), "~20 seconds");
        // 4 ended in 20 s: 6 left at 5 s each.
        assert_eq!(eta_text(4, 10, s(20), s(2), None), "30 seconds");
        // A --max-time budget of 25 s has 5 s left.
        assert_eq!(eta_text(4, 10, s(20), s(2), Some(s(25))), "5 seconds");
        // Past the plan (precision added runs): nothing left to promise.
        assert_eq!(eta_text(12, 10, s(60), s(2), None), "0 seconds");
    }
}
