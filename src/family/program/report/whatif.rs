//! `--what-if`'s text: each delay's ratio, the slope, the predictions and
//! where they can break.

use crate::model::advice::{Estimate, WhatIf};
use crate::model::value::format_nanos;

fn interval(e: &Estimate, scale: f64, digits: usize) -> String {
    e.ci95.map_or("no interval (one round)".into(), |(lo, hi)| {
        format!("95% interval {:.digits$}..{:.digits$}", lo * scale, hi * scale)
    })
}

/// The what-if as text.
pub fn text(w: &WhatIf) -> String {
    let metric = if w.higher_is_better { "rate" } else { "wall time" };
    let mut out = "\n".to_string()
        + &crate::output::table::fit(&format!(
        "what-if for the mutex 0x{:x}, waits at {}: {} acquisitions, mean hold {} in the profiled execution; \
         its critical sections lengthened by busy waiting, everything else glibc's:",
        w.address,
        w.waits_at,
        w.acquisitions,
        format_nanos(w.mean_hold_ns as u64)
    ));
    for d in &w.delays {
        out += &format!(
            "  +{:>8} per critical section ({} measured): {metric} x{:.3} ({})\n",
            format_nanos(d.delay_ns),
            format_nanos(d.added_ns as u64),
            d.ratio.value,
            interval(&d.ratio, 1.0, 3)
        );
    }
    let per_us = |e: &Estimate| format!("{:+.2}% per µs ({})", e.value * 1e5, interval(e, 1e5, 2));
    let mut notes = format!(
        "slope: {metric} {} of delay in every critical section (least squares through no delay, per round; \
         the interval is over the rounds).",
        per_us(&w.slope_per_ns)
    );
    if let Some(share) = &w.critical_path_share {
        notes += &format!(
            " Critical-path share {:.2} ({}): the wall time added per ns of delay over the acquisitions; 1: every \
             hold lies on the program's critical path (the mutex serializes it), 0: none does.",
            share.value,
            interval(share, 1.0, 2)
        );
    }
    notes += "\n";
    notes += &format!(
        "predicted: critical sections half as long (-{}): {metric} x{:.3} ({}); no critical section (-{}): \
         x{:.3} ({}). Both extrapolate below the program's own length, where nothing can be run: they hold if \
         the mutex stays on the critical path as its sections shorten; a mutex that is on it only above some \
         length gains less, and the gain stops where another mutex or the work outside takes over.\n",
        format_nanos((w.mean_hold_ns / 2.0) as u64),
        w.half.value,
        interval(&w.half, 1.0, 3),
        format_nanos(w.mean_hold_ns as u64),
        w.none.value,
        interval(&w.none, 1.0, 3),
    );
    notes += &if w.linear {
        format!(
            "linearity: the slope over the first delay, {}, and over the last step, {}, agree within their \
             intervals.\n",
            per_us(&w.first_slope_per_ns),
            per_us(&w.last_slope_per_ns)
        )
    } else {
        format!(
            "not linear: the slope over the first delay, {}, and over the last step, {}, differ beyond their \
             intervals: the mutex's cost per µs changes with the length of its sections (a small delay can \
             turn a mutex that was rarely contended into a contended one), so the predictions above, from \
             the slope over every delay, may not hold; more --runs tell noise from a bend.\n",
            per_us(&w.first_slope_per_ns),
            per_us(&w.last_slope_per_ns)
        )
    };
    out + &crate::output::table::fit(&notes)
}
