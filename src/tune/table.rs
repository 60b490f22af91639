//! `contend tune`'s answer under its curve: the best spin budget with its
//! interval, the budgets that are statistically tied with it, and why the
//! search stopped.

use crate::output::number::si;
use crate::tune::run::TuneOutcome;

/// The summary lines.
pub fn summary(o: &TuneOutcome) -> String {
    let Some(b) = o.best else {
        return "no spin budget was measured\n".into();
    };
    let best = &o.results[b];
    let mut out = format!(
        "best: {} {} at {} cs/s ± {} (95% interval, {} runs)\n",
        o.knob.flag(),
        o.knob.of(&best.point).unwrap_or(0),
        si(best.stats.mean),
        best.stats.ci95.map_or("?".into(), si),
        best.stats.n
    );
    out += &if o.ties.is_empty() {
        "every other budget is significantly slower (Welch's t-test, 5% level)\n".to_string()
    } else {
        format!(
            "not significantly different from it (p >= 0.05): {} {}; the optimum is a plateau, not a point\n",
            o.knob.flag(),
            o.ties.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        )
    };
    out += &format!(
        "search: {} budgets in {:.1} s; refinement ended because {}\n",
        o.results.len(),
        o.took.as_secs_f64(),
        o.ended
    );
    out
}
