//! `--recommend`'s table: per mutex, the best lock beyond its interval or
//! "keep glibc", the closest lock when none wins, the winners together,
//! and what the plan cost and the precision it gave.

use crate::family::program::recommend::closest;
use crate::model::advice::Recommendation;
use crate::model::program::VsGlibc;

fn interval(v: &VsGlibc) -> String {
    v.ci95.map_or("- (1 round)".into(), |(lo, hi)| format!("{lo:.3}..{hi:.3}"))
}

/// The recommendation as text.
pub fn table(rec: &Recommendation, preset: &str) -> String {
    let mut out =
        String::from("\nrecommendation: each lock on each mutex alone, paired with pthread by round:\n");
    if rec.mutexes.is_empty() {
        return out + "  no mutex a lock can replace was waited on: nothing to recommend.\n";
    }
    let mut t = crate::output::table::with_text(preset);
    t.set_header(vec!["mutex", "waits at", "of wait", "lock", "vs pthread", "95% interval", "verdict"]);
    for m in &rec.mutexes {
        let chosen = match &m.best {
            Some(b) => m.tried.iter().find(|t| &t.lock == b),
            None => closest(&m.tried, rec.higher_is_better),
        };
        let (lock, ratio, ci) = match chosen.and_then(|t| t.vs.as_ref().map(|v| (t, v))) {
            Some((t, v)) => (t.lock.clone(), format!("{:.3}", v.ratio), interval(v)),
            None => ("-".into(), "-".into(), "-".into()),
        };
        let moved = m.tried.iter().all(|t| t.vs.is_none() && t.failed.is_none());
        let verdict = match &m.best {
            Some(b) if m.tied.is_empty() => format!("use {b}"),
            Some(b) => format!("use {b} (as good: {})", m.tied.join(", ")),
            None if m.undecided_rounds.is_some() => format!(
                "cannot tell (closest shown): about {} rounds would",
                m.undecided_rounds.unwrap_or_default()
            ),
            None if chosen.is_some() => "keep glibc (closest shown)".into(),
            // Its address held another mutex, or none, in the unprofiled
            // executions: nothing was swapped, nothing is known.
            None if moved => "not taken at that address unprofiled: unknown".into(),
            None => "keep glibc".into(),
        };
        let failed: Vec<&str> =
            m.tried.iter().filter(|t| t.failed.is_some()).map(|t| t.lock.as_str()).collect();
        let verdict =
            if failed.is_empty() { verdict } else { format!("{verdict}; failed: {}", failed.join(", ")) };
        t.add_row(vec![
            format!("0x{:x}", m.address),
            m.waits_at.clone(),
            format!("{:.0}%", 100.0 * m.wait_share),
            lock,
            ratio,
            ci,
            verdict,
        ]);
    }
    crate::output::table::wrap_only(&mut t, &[1]);
    crate::output::table::align_right(&mut t, 2..3);
    crate::output::table::align_right(&mut t, 4..5);
    out += &format!("{t}\n");
    let better = if rec.higher_is_better { "above 1: a higher rate" } else { "below 1: faster" };
    let mut notes = format!(
        "of wait: the mutex's share of all mutex wait in the profiled execution; vs pthread: the program's \
         metric with that lock on that mutex alone (every other mutex glibc's) over pthread's in the same \
         round ({better}); use: the best ratio among the locks whose 95% interval lies wholly beyond 1 (as good: \
         others beyond 1 that it cannot be told from, their ratio to it paired by round holding 1); \
         keep glibc: none does, and none can gain --threshold ({:.0}%) or more; cannot tell: none clears 1, \
         but the closest one's interval reaches a gain of the threshold, so the data cannot tell a win from \
         none (rounds: about how many --runs in all would decide it, either way); unknown: the mutex was not at its profiled address in the unprofiled \
         executions (the profile's stack walks allocate, which can move later heap allocations), so no \
         lock reached it; failed: locks under which the program failed (the reasons follow) or whose \
         execution ran past --max-slowdown times the profiled one (at least {} s), ended and not measured.\n",
        rec.threshold_pct,
        crate::family::program::execution::MIN_LIMIT.as_secs()
    );
    for m in &rec.mutexes {
        for t in &m.tried {
            if let Some(why) = &t.failed {
                notes += &format!("{} on 0x{:x} failed: {why}\n", t.lock, m.address);
            }
        }
    }
    if let Some(c) = &rec.combination {
        notes += &match &c.vs {
            Some(v) => format!(
                "together ({}): {:.3} against pthread, 95% interval {}, in {} rounds of their own.\n",
                c.point,
                v.ratio,
                interval(v),
                v.rounds
            ),
            None => format!("together ({}): no rounds to pair.\n", c.point),
        };
    }
    notes += &format!(
        "cost: one profiled execution ({:.2} s) and {} planned executions; precision: ",
        rec.profile_wall_s, rec.executions
    );
    notes += &match rec.median_half_width_pct {
        Some(w) => format!(
            "the intervals' median half-width is ±{w:.1}%: a difference smaller than that cannot be told from \
             noise here; about four times the --runs halve it.\n"
        ),
        None => "no intervals (one round): give --runs 3 or more.\n".into(),
    };
    out + &crate::output::table::fit(&notes)
}
