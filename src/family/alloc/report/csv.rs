//! `contend alloc --export-csv`: one row per pattern and allocator, with
//! the table's numbers unrounded under machine-friendly column names.
//! ops/s is the mean over the runs; the other columns are the median
//! run's (futex counts: the counting run's, when there is one).

use crate::family::alloc::sweep::AllocResult;
use serde::Serialize;

/// One CSV row.
#[derive(Debug, Default, Serialize)]
struct Row<'a> {
    pattern: String,
    allocator: &'a str,
    wall_s: f64,
    user_s: f64,
    sys_s: f64,
    ops_per_s_mean: f64,
    ops_per_s_ci95_pct: Option<f64>,
    runs: usize,
    vs_glibc: Option<f64>,
    max_rss_kib: i64,
    voluntary_cs: i64,
    involuntary_cs: i64,
    futex_calls: Option<u64>,
    futex_errors: Option<u64>,
    own_futex_calls: u64,
    allocator_futex_calls: Option<u64>,
    preloaded: Option<&'a str>,
}

/// CSV: a header and one row per pattern and allocator.
pub fn render(results: &[AllocResult]) -> String {
    crate::output::csv::render(results.iter().map(|r| {
        let s = &r.sample;
        let k = r.kernel_run();
        Row {
            pattern: format!("{:?}", s.pattern).to_lowercase(),
            allocator: &s.allocator,
            wall_s: s.wall_s,
            user_s: s.user_s,
            sys_s: s.sys_s,
            ops_per_s_mean: r.stats.mean,
            ops_per_s_ci95_pct: r.stats.ci95_pct,
            runs: r.stats.n,
            vs_glibc: s.vs_glibc,
            max_rss_kib: s.max_rss_kib,
            voluntary_cs: s.voluntary_context_switches,
            involuntary_cs: s.involuntary_context_switches,
            futex_calls: k.futex.map(|f| f.calls),
            futex_errors: k.futex.map(|f| f.errors),
            own_futex_calls: k.own_futex_calls,
            allocator_futex_calls: k.allocator_futex_calls,
            preloaded: s.preloaded.as_deref(),
        }
    }))
}
