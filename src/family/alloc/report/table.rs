//! `contend alloc`'s table: ops/s is the mean over the runs, the other
//! columns are the median run's. The CSV export (csv.rs) carries the same
//! numbers unrounded, plus the library each child preloaded.

use crate::family::alloc::sweep::AllocResult;
use crate::output::number::si;
use comfy_table::{presets, CellAlignment, Table};

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// The columns.
const COLUMNS: [&str; 16] = [
    "pattern",
    "allocator",
    "wall s",
    "user s",
    "sys s",
    "ops/s",
    "±%",
    "runs",
    "vs glibc",
    "peak RSS MiB",
    "vcsw",
    "ivcsw",
    "futex",
    "futex fail",
    "own futex",
    "alloc futex",
];

fn row(r: &AllocResult) -> Vec<String> {
    let s = &r.sample;
    // Futex counts come from the counting run, when there is one.
    let k = r.kernel_run();
    vec![
        format!("{:?}", s.pattern).to_lowercase(),
        s.allocator.clone(),
        format!("{:.3}", s.wall_s),
        format!("{:.3}", s.user_s),
        format!("{:.3}", s.sys_s),
        si(r.stats.mean),
        r.stats.ci95_pct.map_or("-".into(), |p| format!("{p:.1}")),
        r.stats.n.to_string(),
        s.vs_glibc.map_or("-".into(), |r| format!("{r:.2}")),
        format!("{:.1}", s.max_rss_kib as f64 / 1024.0),
        s.voluntary_context_switches.to_string(),
        s.involuntary_context_switches.to_string(),
        opt(k.futex.map(|f| f.calls)),
        opt(k.futex.map(|f| f.errors)),
        k.own_futex_calls.to_string(),
        opt(k.allocator_futex_calls),
    ]
}

/// The terminal table.
pub fn table(results: &[AllocResult]) -> String {
    table_with(results, presets::NOTHING)
}

pub(crate) fn table_with(results: &[AllocResult], preset: &str) -> String {
    let mut t = Table::new();
    t.load_preset(preset);
    t.set_header(COLUMNS);
    for r in results {
        t.add_row(row(r));
    }
    for i in 2..COLUMNS.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    let notes: String = results
        .iter()
        .map(|r| {
            let label = format!("{:?} {}", r.sample.pattern, r.sample.allocator).to_lowercase();
            crate::output::table::precision_note(&label, r.stopped, &r.stats)
        })
        .collect();
    format!(
        "{t}\n\n{notes}ops/s: mallocs + frees per second of the child's workload, mean over the runs; ±%: its 95% \
         confidence interval;\nvs glibc: the mean relative to glibc's in this run. Other columns: the median run. \
         user/sys s, peak RSS,\nvcsw/ivcsw: the child's rusage (wait4). futex, futex fail: the child's futex \
         syscalls and failed ones\n(tracepoints, in a separate counting run: --count-futex); own futex: the pattern's semaphores; alloc futex: the rest \
         (the allocator's, and libc's:\nthread start and join).\n"
    )
}
