//! `contend compare`'s table: one row per matched point.

use crate::exports::compare::paired::PairedReport;
use crate::exports::compare::Report;
use crate::output::number::si;
use comfy_table::{presets, Table};

/// The table, the unmatched points, and the summary line.
pub fn render(r: &Report, threshold: f64) -> String {
    let mut t = Table::new();
    t.load_preset(presets::NOTHING);
    t.set_header(["point", "old", "new", "new/old", "±95%", "p", "verdict"]);
    for c in &r.points {
        t.add_row([
            c.label.clone(),
            si(c.old_mean),
            si(c.new_mean),
            format!("{:.3}", c.ratio),
            c.ratio_ci95.map_or("-".into(), |h| format!("{h:.3}")),
            c.p.map_or("-".into(), |p| format!("{p:.3}")),
            format!("{}{}", c.verdict.text(), if c.regression { "  REGRESSION" } else { "" }),
        ]);
    }
    crate::output::table::align_right(&mut t, 1..6);
    let better = if r.higher_is_better { "higher" } else { "lower" };
    let mut out = format!(
        "{} export: {} ({better} is better), mean over the runs; verdicts by Welch's t-test at the 5% level\n{t}\n",
        r.family, r.metric
    );
    for u in &r.unmatched {
        out += &format!("not compared: {u}\n");
    }
    let regressions = r.points.iter().filter(|c| c.regression).count();
    out += &if regressions > 0 {
        format!("{regressions} regression(s): significantly slower by more than {:.1}%\n", threshold * 100.0)
    } else {
        format!("no regression beyond {:.1}%\n", threshold * 100.0)
    };
    out
}

/// The paired table: each point against its baseline partner.
pub fn render_paired(r: &PairedReport) -> String {
    let mut t = Table::new();
    t.load_preset(presets::NOTHING);
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
    crate::output::table::align_right(&mut t, 1..5);
    let better = if r.higher_is_better { "higher" } else { "lower" };
    let how = if r.paired {
        "ratio: geometric mean of each round's point/baseline; interval: Student's t over the rounds' log ratios"
    } else {
        "sequential export, no rounds to pair: ratio of the means, Welch's interval"
    };
    let mut out = format!(
        "{} export: {} ({better} is better) against the baseline point\n{how}\n{t}\n",
        r.family, r.metric
    );
    for u in &r.unmatched {
        out += &format!("not compared: {u}\n");
    }
    out
}
