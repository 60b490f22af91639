//! `contend alloc --export-gnuplot`.

use crate::family::alloc::sweep::AllocResult;

/// gnuplot: one block per pattern (separated by two blank lines, so
/// `index N` selects it), one row per allocator: mean ops/s, interval
/// half-width, and the median run's user and system seconds.
pub fn render(results: &[AllocResult]) -> String {
    let mut out = String::from("# allocator ops_per_s ci95 user_s sys_s futex_calls\n");
    let mut last = None;
    for r in results {
        let pattern = format!("{:?}", r.sample.pattern).to_lowercase();
        if last.as_ref() != Some(&pattern) {
            if last.is_some() {
                out += "\n\n";
            }
            out += &format!("# pattern {pattern}\n");
            last = Some(pattern);
        }
        out += &format!(
            "{} {:.0} {} {:.4} {:.4} {}\n",
            r.sample.allocator.replace(' ', "_"),
            r.stats.mean,
            r.stats.ci95.map_or("NaN".into(), |c| format!("{c:.0}")),
            r.sample.user_s,
            r.sample.sys_s,
            r.kernel_run().futex.map_or("NaN".into(), |f| f.calls.to_string())
        );
    }
    out
}
