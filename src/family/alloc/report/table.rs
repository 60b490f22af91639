//! `contend alloc`'s table: ops/s is the mean over the runs, the other
//! columns are the median run's. The CSV export (csv.rs) carries the same
//! numbers unrounded, plus the library each child preloaded.

use crate::family::alloc::sweep::AllocResult;
use crate::output::columns::{Group, Shown, CORE};
use crate::output::number::si;
use comfy_table::{presets, Table};

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

/// Each column with its group.
const COLUMNS: [(&str, &str); 16] = [
    (CORE, "pattern"),
    (CORE, "allocator"),
    ("time", "wall s"),
    ("time", "user s"),
    ("time", "sys s"),
    (CORE, "ops/s"),
    (CORE, "±%"),
    (CORE, "runs"),
    (CORE, "vs glibc"),
    ("memory", "peak RSS MiB"),
    ("memory", "vcsw"),
    ("memory", "ivcsw"),
    ("kernel", "futex"),
    ("futex", "futex fail"),
    ("futex", "own futex"),
    ("kernel", "alloc futex"),
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
        crate::output::table::interval_cell(&r.stats, r.stopped),
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
pub fn table(results: &[AllocResult], shown: &Shown) -> String {
    table_with(results, shown, presets::NOTHING)
}

pub(crate) fn table_with(results: &[AllocResult], shown: &Shown, preset: &str) -> String {
    let groups: Vec<&str> = COLUMNS.iter().map(|(g, _)| *g).collect();
    let headers = shown.select(&groups, COLUMNS.iter().map(|(_, h)| *h).collect());
    let mut t = Table::new();
    t.load_preset(preset);
    t.set_header(&headers);
    for r in results {
        t.add_row(shown.select(&groups, row(r)));
    }
    crate::output::table::align_right(&mut t, 2..headers.len());
    let notes =
        crate::output::table::precision_note(results.iter().map(|r| (r.stopped, &r.stats, &r.runs[..])));
    let text = format!("{notes}{CORE_LEGEND}{}{}", shown.legend(GROUPS), shown.hidden_note(GROUPS));
    format!("{t}\n\n{}", crate::output::table::fit(&text))
}
