//! `--what-if`'s text by virtual speedup: the mutexes ranked by what
//! shorter critical sections would buy, each prediction with its
//! interval, and whether neighbours in the ranking can be told apart.

use crate::model::advice::{Estimate, SpeedupWhatIf};
use crate::model::value::format_nanos;

fn ratio(e: &Estimate) -> String {
    match e.ci95 {
        Some((lo, hi)) => format!("x{:.3} ({lo:.3}..{hi:.3})", e.value),
        None => format!("x{:.3} (no interval: one round)", e.value),
    }
}

/// The what-if as text.
pub fn text(w: &SpeedupWhatIf) -> String {
    let metric = if w.higher_is_better { "rate" } else { "wall time" };
    let mut out = "\n".to_string()
        + &crate::output::table::fit(&format!(
            "what-if by virtual speedup: each mutex's critical sections made shorter by pausing every other \
             thread instead (Coz's method), so nothing is extrapolated; predicted {metric} over the same round's \
             execution with the accounts kept and nothing sped up, geometric mean over the rounds with its 95% \
             interval; ranked, the biggest gain first:"
        ));
    for (i, m) in w.mutexes.iter().enumerate() {
        let head = format!(
            "  {}. 0x{:x} {} ({} acquisitions, mean hold {}, waited {:.1} ms):",
            i + 1,
            m.address,
            m.waits_at,
            m.acquisitions,
            format_nanos(m.mean_hold_ns as u64),
            m.wait_ns as f64 / 1e6
        );
        out += &head;
        out += "\n";
        match (&m.half, &m.cannot_tell) {
            (_, Some(why)) => out += &format!("       cannot tell: {why}\n"),
            (Some(h), None) => {
                out += &format!("       sections half as long: {metric} {}\n", ratio(h));
                if let Some(n) = &m.none {
                    out += &format!("       sections gone:         {metric} {}\n", ratio(n));
                }
                if m.cpu_bound_rounds > 0 {
                    out += &format!(
                        "       bounded by CPU time in {} of {} rounds: the program kept the CPUs busy,\n       \
                         so a shorter section gains only the CPU time it saves; those rounds give\n       \
                         a range, from every CPU it could have to the CPU share it had\n",
                        m.cpu_bound_rounds, m.rounds
                    );
                }
                if m.kernel_rounds > 0 {
                    out += &format!(
                        "       widened by its sleeps' kernel time in {} of {} rounds: a shorter section\n       \
                         also makes them rarer, which a virtual speedup cannot show; the range reaches\n       \
                         to the time with their share of the system time ({:.0}%, as of the sleeps)\n       \
                         saved in proportion to the section\n",
                        m.kernel_rounds,
                        m.rounds,
                        m.sleep_share * 100.0
                    );
                }
                match m.apart_from_next {
                    Some(true) => out += "       ahead of the next beyond the interval (paired by round)\n",
                    Some(false) => {
                        out +=
                            "       cannot be told apart from the next (paired by round): more --runs may\n"
                    }
                    None => {}
                }
            }
            (None, None) => out += "       no prediction\n",
        }
    }
    if let Some(c) = &w.accounts_cost {
        out += &crate::output::table::fit(&format!(
            "the accounts themselves (a try-lock before each lock, the clock read where a thread waits): {metric} {} of glibc's mutex without \
             them; the predictions are relative to a run that keeps them.",
            ratio(c)
        ));
    }
    out
}
