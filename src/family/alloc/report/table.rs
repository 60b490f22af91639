//! `contend alloc`'s table: ops/s is the mean over the runs, the other
//! columns are the median run's. The CSV export (csv.rs) carries the same
//! numbers unrounded, plus the library each child preloaded.

use crate::family::alloc::sweep::AllocResult;
use crate::output::column::{Column, Columns};
use crate::output::columns::{Group, Shown, CORE};
use crate::output::number::si;
use comfy_table::presets;

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// The alloc table's optional column groups.
pub const GROUPS: &[Group] = &[
    Group {
        name: "time",
        default: true,
        legend: "wall s: the child's workload time; user/sys s: its CPU time (wait4's rusage).\n",
    },
    Group {
        name: "kernel",
        default: true,
        legend:
            "futex: the child's futex syscalls (tracepoints, in a separate counting run: --count-futex); \
                 alloc futex: those not made by the pattern's own semaphores (the allocator's, and libc's: \
                 thread start and join).\n",
    },
    Group {
        name: "futex",
        default: false,
        legend: "futex fail: failed futex syscalls; own futex: the pattern's semaphores' futex calls.\n",
    },
    Group {
        name: "memory",
        default: false,
        legend: "peak RSS MiB, vcsw ivcsw: the child's peak resident set and context switches (wait4).\n",
    },
];

const CORE_LEGEND: &str = "ops/s: mallocs + frees per second of the child's workload, mean over the runs; \
     ±%: its 95% confidence interval; vs glibc: the mean relative to glibc's in this run. Other columns: the \
     median run.\n";

/// Every column with its group and its cell.
fn columns() -> Vec<Column<'static, AllocResult>> {
    type C = Column<'static, AllocResult>;
    vec![
        C::text(CORE, "pattern", |r| format!("{:?}", r.sample.pattern).to_lowercase()),
        C::text(CORE, "allocator", |r| r.sample.allocator.clone()),
        C::number("time", "wall s", |r| format!("{:.3}", r.sample.wall_s)),
        C::number("time", "user s", |r| format!("{:.3}", r.sample.user_s)),
        C::number("time", "sys s", |r| format!("{:.3}", r.sample.sys_s)),
        C::number(CORE, "ops/s", |r| si(r.stats.mean)),
        C::number(CORE, "±%", |r| crate::output::table::interval_cell(&r.stats, r.stopped)),
        C::number(CORE, "runs", |r| r.stats.n.to_string()),
        C::number(CORE, "vs glibc", |r| r.sample.vs_glibc.map_or("-".into(), |v| format!("{v:.2}"))),
        C::number("memory", "peak RSS MiB", |r| format!("{:.1}", r.sample.max_rss_kib as f64 / 1024.0)),
        C::number("memory", "vcsw", |r| r.sample.voluntary_context_switches.to_string()),
        C::number("memory", "ivcsw", |r| r.sample.involuntary_context_switches.to_string()),
        // Futex counts come from the counting run, when there is one.
        C::number("kernel", "futex", |r| opt(r.kernel_run().futex.map(|f| f.calls))),
        C::number("futex", "futex fail", |r| opt(r.kernel_run().futex.map(|f| f.errors))),
        C::number("futex", "own futex", |r| r.kernel_run().own_futex_calls.to_string()),
        C::number("kernel", "alloc futex", |r| opt(r.kernel_run().allocator_futex_calls)),
    ]
}

/// The terminal table.
pub fn table(results: &[AllocResult], shown: &Shown) -> String {
    table_with(results, shown, presets::NOTHING)
}

pub(crate) fn table_with(results: &[AllocResult], shown: &Shown, preset: &str) -> String {
    let columns = Columns::shown(columns(), shown);
    let rows: Vec<Vec<String>> = results.iter().map(|r| columns.cells(r)).collect();
    let t = columns.render(&rows, preset);
    let notes =
        crate::output::table::precision_note(results.iter().map(|r| (r.stopped, &r.stats, &r.runs[..])));
    let text = format!("{notes}{CORE_LEGEND}{}{}", columns.legend(GROUPS), shown.hidden_note(GROUPS));
    format!("{t}\n\n{}", crate::output::table::fit(&text))
}
