//! `contend compare`'s table: one row per matched point.

use crate::exports::compare::paired::PairedReport;
use crate::exports::compare::{Comparison, Report, Unit};
use crate::output::number::si;
use comfy_table::presets;

/// The table, the unmatched points, what the unit of the verdicts lets
/// them say, and the summary line.
pub fn render(r: &Report) -> String {
    let invocations = r.unit == Unit::Invocation;
    let mut t = crate::output::table::with_text(presets::NOTHING);
    let mut header = vec!["point", "old", "new", "new/old", "95% interval", "p"];
    if invocations {
        header.push("spread%");
    }
    header.push("verdict");
    t.set_header(&header);
    for c in &r.points {
        let mut row = vec![
            c.label.clone(),
            si(c.old_mean),
            si(c.new_mean),
            format!("{:.3}", c.ratio),
            c.ci95.map_or("-".into(), |(lo, hi)| format!("{lo:.3}..{hi:.3}")),
            c.p.map_or("-".into(), |p| format!("{p:.3}")),
        ];
        if invocations {
            row.push(c.spread_pct.map_or("-".into(), |s| format!("{s:.1}")));
        }
        let flag = match (c.regression, invocations) {
            (false, _) => "",
            (true, true) => "  REGRESSION",
            (true, false) => "  REGRESSION?",
        };
        row.push(format!("{}{flag}", c.verdict.text()));
        t.add_row(row);
    }
    crate::output::table::wrap_only(&mut t, &[0]);
    crate::output::table::align_right(&mut t, 1..header.len() - 1);
    let better = if r.higher_is_better { "higher" } else { "lower" };
    let how = if invocations {
        format!(
            "unit: the invocation ({} OLD, {} NEW exports), each export's mean of a point; new/old: ratio of \
             the geometric means; interval and p: Student's t over the log means, the sides' spread pooled",
            r.exports.0, r.exports.1
        )
    } else {
        "one export per side: the runs of each, Welch's t-test".to_string()
    };
    let shared = if r.common.is_empty() { String::new() } else { format!("every point: {}\n", r.common) };
    let heading =
        format!("{} export: {} ({better} is better); {how}; 5% level\n{shared}", r.family, r.metric);
    let mut out = String::new();
    for u in &r.unmatched {
        out += &format!("not compared: {u}\n");
    }
    out += &if invocations { spread_note(r) } else { single_note(r) };
    let regressions = r.points.iter().filter(|c| c.regression).count();
    let pct = r.threshold * 100.0;
    out += &match (regressions, invocations) {
        (0, _) => format!("no regression beyond {pct:.1}%\n"),
        (n, true) => format!("{n} regression(s): significantly slower by more than {pct:.1}%\n"),
        (n, false) => format!(
            "{n} possible regression(s): slower by more than {pct:.1}% beyond the runs' spread, which one \
             export per side cannot tell from the invocations' own difference\n"
        ),
    };
    format!("{}{t}\n{}", crate::output::table::fit(&heading), crate::output::table::fit(&out))
}

/// With one export per side: what its verdicts cannot tell apart, and
/// how to get a verdict that can.
fn single_note(r: &Report) -> String {
    format!(
        "One export per side: the runs of one invocation share its conditions (host drift, where the code \
         landed, CPU frequency), so their spread understates the spread between invocations. \
         \"no significant change\" holds across invocations too; \"differs in-run only\" may be a change \
         or the two invocations' own difference, and one export per side cannot tell them apart. For a \
         verdict across invocations give several per side (contend compare OLD1 OLD2 OLD3 -- NEW1 NEW2 \
         NEW3): compare then measures the spread between invocations and says how many resolve a {:.0}% \
         difference. When both sides can run in one invocation (locks, holds, spins of one sweep), run them \
         together and use --baseline, which pairs them round by round: the most sensitive compare.\n",
        r.threshold * 100.0
    )
}

/// With several exports: the spread between invocations, and how many
/// invocations resolve a difference the size of the threshold.
fn spread_note(r: &Report) -> String {
    let mut spreads: Vec<(f64, &Comparison)> =
        r.points.iter().filter_map(|c| c.spread_pct.map(|s| (s, c))).collect();
    if spreads.is_empty() {
        return "spread between invocations: not measured (a point needs three exports in all, one on each \
                side)\n"
            .into();
    }
    spreads.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (median, _) = spreads[spreads.len() / 2];
    let (most, widest) = spreads[spreads.len() - 1];
    let pct = r.threshold * 100.0;
    let need = |s: f64| match crate::exports::compare::invocations::to_resolve(s, r.threshold) {
        Some(n) => format!("{n} invocations per side resolve"),
        None => "more than 1000 invocations per side would be needed to resolve".into(),
    };
    let mut out = format!(
        "spread%: how much one side's invocations differ (pooled standard deviation of the log means). At \
         the median spread here ({median:.1}%), {} a {pct:.0}% difference (5% level, 80% power)",
        need(median)
    );
    if need(most) != need(median) {
        out += &format!("; at the largest ({most:.1}%, {}), {} it", widest.label, need(most));
    }
    out + ".\n"
}

/// The paired table: each point against its baseline partner.
pub fn render_paired(r: &PairedReport) -> String {
    let mut t = crate::output::table::with_text(presets::NOTHING);
    t.set_header(["point", "baseline", "point/baseline", "95% interval", "rounds", "verdict"]);
    for c in &r.points {
        t.add_row([
            c.label.clone(),
            si(c.baseline_mean),
            format!("{:.3}", c.ratio),
            c.ci95.map_or("-".into(), |(lo, hi)| format!("{lo:.3} .. {hi:.3}")),
            c.pairs.to_string(),
            match c.verdict {
                crate::exports::compare::Verdict::NoChange => "indistinguishable",
                v => v.text(),
            }
            .to_string(),
        ]);
    }
    crate::output::table::wrap_only(&mut t, &[0]);
    crate::output::table::align_right(&mut t, 1..5);
    let better = if r.higher_is_better { "higher" } else { "lower" };
    let how = if r.paired {
        "ratio: geometric mean of each round's point/baseline; interval: Student's t over the rounds' log ratios"
    } else {
        "sequential export, no rounds to pair: ratio of the means, Welch's interval"
    };
    let mut out = crate::output::table::fit(&format!(
        "{} export: {} ({better} is better) against the baseline point\n{how}",
        r.family, r.metric
    )) + &format!("{t}\n");
    for u in &r.unmatched {
        out += &format!("not compared: {u}\n");
    }
    out
}
