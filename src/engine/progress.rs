//! The sweep's progress bar (indicatif): how many runs a plan makes, an
//! ETA from the plan and then from the runs' measured durations, and no
//! redraw thread, which would wake inside the measured windows.

use crate::engine::repeat::{Repeat, RunRecord, RunStatus};
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

/// Counts one finished run on `bar`. A run screening rejected is one
/// more to make, so the bar's length grows with it and its message counts
/// them (an ETA that ignored them would sit at zero while they are
/// re-made); precision can add runs past the plan, and the bar grows with
/// them too.
pub fn tick<S: RunRecord>(bar: &ProgressBar, run: &S) {
    if run.info().status == RunStatus::Rejected {
        bar.inc_length(1);
        // The bar keeps the count in its prefix, the one place it shows.
        let remade =
            bar.prefix().trim_start_matches(" (").split(' ').next().and_then(|n| n.parse::<u64>().ok());
        bar.set_prefix(format!(" ({} re-made for load)", remade.unwrap_or(0) + 1));
    } else if bar.length().is_some_and(|len| bar.position() >= len) {
        bar.inc_length(1);
    }
    bar.inc(1);
}

/// The time a --precision sweep of `points` points may take in all
/// (--max-time is pooled over its points), the bound its ETA shows once
/// the planned runs are done and precision keeps adding; None without
/// --precision.
pub fn precision_cap(plan: &Repeat, points: usize) -> Option<Duration> {
    plan.precision_pct.map(|_| {
        Duration::from_nanos(plan.max_time_ns).saturating_mul(u32::try_from(points).unwrap_or(u32::MAX))
    })
}

/// How long `runs` runs of `per_run` take (saturating: a plan may be
/// absurd, the arithmetic must not panic on it).
pub fn estimate(runs: usize, per_run: Duration) -> Duration {
    per_run.saturating_mul(u32::try_from(runs).unwrap_or(u32::MAX))
}

/// The progress bar of a sweep of `points` points under `plan`: its
/// planned runs (with the counting runs when `counting`), about `per_run`
/// each, capped by the pooled --max-time when --precision may add runs.
pub fn sweep_bar(
    wanted: bool,
    points: usize,
    plan: &Repeat,
    counting: bool,
    per_run: Duration,
) -> ProgressBar {
    progress_bar(wanted, planned_runs(points, plan, counting), per_run, precision_cap(plan, points))
}

/// A progress bar for `runs` runs of about `per_run` each, hidden when
/// not wanted, not on a terminal, or too short to matter; precision may
/// add runs, and the bar's length grows with them. Its ETA is
/// [`eta_text`]: the plan's estimate until a run has ended, then the
/// remaining runs at the measured mean run time; never past `cap` (tune's
/// --max-time) when there is one.
pub fn progress_bar(wanted: bool, runs: usize, per_run: Duration, cap: Option<Duration>) -> ProgressBar {
    let estimate = estimate(runs, per_run);
    if !wanted
        || crate::session::terminal::quiet()
        || !std::io::stderr().is_terminal()
        || estimate < PROGRESS_MIN
    {
        return ProgressBar::hidden();
    }
    let target = indicatif::ProgressDrawTarget::term_like(Box::new(Narrower(console::Term::stderr())));
    let bar = ProgressBar::with_draw_target(Some(runs as u64), target);
    let style = ProgressStyle::with_template(
        "[{elapsed_precise}] {bar:30} {pos}/{len} runs{prefix}, ETA {plan_eta}  {msg}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .with_key("plan_eta", move |state: &ProgressState, w: &mut dyn std::fmt::Write| {
        let left = eta_text(state.pos(), state.len().unwrap_or(0), state.elapsed(), per_run, cap);
        let _ = w.write_str(&left);
    });
    bar.set_style(style);
    crate::session::terminal::set_live_bar(&bar);
    // No steady tick: a redraw thread waking five times a second would
    // run inside the measured windows. The bar redraws when a run ends.
    bar
}

/// stderr as indicatif sees it, three columns narrower than the terminal.
/// indicatif pads the bar's line to the width it is given; a line that
/// fills the last column leaves the cursor waiting to wrap, so the
/// terminal's echo of Ctrl-C (`^C`) started a new line, and the bar's
/// clear then erased that line instead of the bar's: a stale bar stayed
/// above the interrupt notice. Three columns leave room for the echo.
#[derive(Debug)]
struct Narrower(console::Term);

impl indicatif::TermLike for Narrower {
    fn width(&self) -> u16 {
        self.0.size().1.saturating_sub(3).max(20)
    }
    fn height(&self) -> u16 {
        self.0.size().0
    }
    fn move_cursor_up(&self, n: usize) -> std::io::Result<()> {
        self.0.move_cursor_up(n)
    }
    fn move_cursor_down(&self, n: usize) -> std::io::Result<()> {
        self.0.move_cursor_down(n)
    }
    fn move_cursor_right(&self, n: usize) -> std::io::Result<()> {
        self.0.move_cursor_right(n)
    }
    fn move_cursor_left(&self, n: usize) -> std::io::Result<()> {
        self.0.move_cursor_left(n)
    }
    fn write_line(&self, s: &str) -> std::io::Result<()> {
        self.0.write_line(s)
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        self.0.write_str(s)
    }
    fn clear_line(&self) -> std::io::Result<()> {
        self.0.clear_line()
    }
    fn flush(&self) -> std::io::Result<()> {
        self.0.flush()
    }
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
    match cap {
        // Past the plan, precision is adding runs: only the budget's end
        // can be promised.
        Some(cap) if left == 0 => format!("at most {}", HumanDuration(cap.saturating_sub(elapsed))),
        Some(cap) => format!(
            "{}{}",
            if guess { "~" } else { "" },
            HumanDuration(estimate.min(cap.saturating_sub(elapsed)))
        ),
        None => format!("{}{}", if guess { "~" } else { "" }, HumanDuration(estimate)),
    }
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
        // Past the plan without a budget: nothing left to promise.
        assert_eq!(eta_text(12, 10, s(60), s(2), None), "0 seconds");
        // Past the plan of a --precision sweep: the budget's end.
        assert_eq!(eta_text(12, 10, s(60), s(2), Some(s(90))), "at most 30 seconds");
    }

    #[test]
    fn a_rejected_run_is_one_more_to_make_and_is_counted() {
        use crate::model::run::testing::Run;
        let bar = ProgressBar::with_draw_target(Some(3), indicatif::ProgressDrawTarget::hidden());
        tick(&bar, &Run::new(RunStatus::Measured, 0.0));
        tick(&bar, &Run::new(RunStatus::Rejected, 40.0));
        tick(&bar, &Run::new(RunStatus::Rejected, 40.0));
        assert_eq!((bar.position(), bar.length()), (3, Some(5)));
        assert_eq!(bar.prefix(), " (2 re-made for load)");
        // The plan's runs still to come keep the ETA above zero.
        tick(&bar, &Run::new(RunStatus::Measured, 0.0));
        assert_eq!((bar.position(), bar.length()), (4, Some(5)));
    }
}
