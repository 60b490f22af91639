//! `contend alloc`'s reports: the table, and CSV rows.

use super::number::si;
use crate::runner::alloc_sweep::AllocSample;
use crate::runner::allocators::{find_library, KNOWN};
use comfy_table::{presets, CellAlignment, Table};

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// The columns, shared by the table and the CSV.
const COLUMNS: [&str; 15] = [
    "pattern",
    "allocator",
    "wall s",
    "user s",
    "sys s",
    "ops/s",
    "vs glibc",
    "peak RSS MiB",
    "vcsw",
    "ivcsw",
    "futex",
    "futex fail",
    "own futex",
    "alloc futex",
    "preloaded",
];

fn row(s: &AllocSample, human: bool) -> Vec<String> {
    vec![
        format!("{:?}", s.pattern).to_lowercase(),
        s.allocator.clone(),
        format!("{:.3}", s.wall_s),
        format!("{:.3}", s.user_s),
        format!("{:.3}", s.sys_s),
        if human {
            si(s.ops_per_s)
        } else {
            format!("{:.0}", s.ops_per_s)
        },
        s.vs_glibc.map_or("-".into(), |r| format!("{r:.2}")),
        format!("{:.1}", s.max_rss_kib as f64 / 1024.0),
        s.voluntary_context_switches.to_string(),
        s.involuntary_context_switches.to_string(),
        opt(s.futex.map(|f| f.calls)),
        opt(s.futex.map(|f| f.errors)),
        s.own_futex_calls.to_string(),
        opt(s.allocator_futex_calls),
        s.preloaded.clone().unwrap_or_else(|| "-".into()),
    ]
}

/// The terminal table.
pub fn table(samples: &[AllocSample]) -> String {
    let mut t = Table::new();
    t.load_preset(presets::NOTHING);
    t.set_header(&COLUMNS[..14]);
    for s in samples {
        let mut r = row(s, true);
        r.pop();
        t.add_row(r);
    }
    for i in 2..14 {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    format!(
        "{t}\n\nops/s: mallocs + frees per second of the child's workload; vs glibc: the same, relative to glibc \
         in this run.\nuser/sys s, peak RSS, vcsw/ivcsw: the child's rusage (wait4). futex, futex fail: the \
         child's futex syscalls and\nfailed ones (tracepoints); own futex: the pattern's semaphores; alloc futex: \
         the rest\n(the allocator's, and libc's: thread start and join).\n"
    )
}

/// CSV: a header and one row per sample.
pub fn csv(samples: &[AllocSample]) -> String {
    super::csv::render(&COLUMNS, samples.iter().map(|s| row(s, false)))
}

/// `contend list allocators`.
pub fn list() -> String {
    let mut t = Table::new();
    t.load_preset(presets::NOTHING);
    t.set_header(["allocator", "library", "Debian package", "available"]);
    t.add_row(["glibc", "(the C library's malloc)", "libc6", "yes"]);
    for (name, soname, package) in KNOWN {
        let found = find_library(soname);
        t.add_row([
            name.to_string(),
            found
                .as_ref()
                .map_or(soname.to_string(), |p| p.display().to_string()),
            package.to_string(),
            if found.is_some() {
                "yes".into()
            } else {
                format!("no: apt-get install {package}")
            },
        ]);
    }
    format!("{t}\n")
}
