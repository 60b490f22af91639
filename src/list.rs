//! `contend list`: the lock registry and the wake-up primitives as tables.

use crate::family::alloc::registry::{find_library, KNOWN};
use crate::family::lock::registry::LOCKS;
use clap::{Args, ValueEnum};
use comfy_table::presets;
use std::process::ExitCode;

/// `contend list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// What to list.
    #[arg(value_enum, default_value_t = ListWhat::Locks)]
    pub what: ListWhat,
}

/// Things `contend list` can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListWhat {
    /// The lock registry with capabilities.
    Locks,
    /// The allocators and whether this machine has them.
    Allocators,
    /// The wake-up primitives, and which work between processes.
    Primitives,
}

/// `contend list WHAT`: its table on stdout.
pub fn run(args: &ListArgs) -> anyhow::Result<ExitCode> {
    let table = match args.what {
        ListWhat::Locks => locks(),
        ListWhat::Allocators => allocators(),
        ListWhat::Primitives => primitives(),
    };
    crate::output::sink::print(&table)?;
    Ok(ExitCode::SUCCESS)
}

/// The lock registry with capabilities. The capabilities are one column
/// of words, so the description keeps room to be read within 100 columns;
/// test-only locks are left out (they are accepted, never offered).
pub fn locks() -> String {
    let mut t = crate::output::table::with_text(presets::NOTHING);
    t.set_header(["lock", "family", "capabilities", "description"]);
    // `contend run` swaps in the locks that fit in a pthread_mutex_t.
    let runs = |name: &str| locks::in_mutex::Swap::all().any(|s| s.name() == name);
    let mut unavailable = String::new();
    for e in LOCKS.iter().filter(|e| !e.test_only) {
        let available = (e.available)();
        if let Err(why) = &available {
            unavailable.push_str(&format!("not on this kernel: {}: {why}\n", e.name));
        }
        let caps = [
            ("spin", e.caps.spin),
            ("spinners", e.caps.spinners),
            ("glibc-spin", e.caps.glibc_spin),
            ("read", e.caps.rw),
            ("try", e.caps.try_lock),
            ("procs", e.caps.process_shared),
            ("counters", e.caps.counters),
            ("fifo", e.caps.fifo),
            ("run", runs(e.name)),
        ];
        let words: Vec<&str> = caps.iter().filter(|(_, has)| *has).map(|(w, _)| *w).collect();
        let name = if available.is_ok() { e.name.to_string() } else { format!("{} (n/a)", e.name) };
        t.add_row([name, e.family.to_string(), words.join(" "), e.about.to_string()]);
    }
    crate::output::table::wrap_only(&mut t, &[2, 3]);
    let legend = "capabilities: spin: takes --spin; spinners: takes --spinners; glibc-spin: takes \
                  --glibc-spin; read: a reader-writer lock, takes --read; try: has a try-lock; \
                  procs: can live in shared memory for processes (--procs); counters: reports its own \
                  spins, waits and wakes; fifo: serves waiters in arrival order (a convoy when a \
                  preempted thread is next); run: fits in a pthread_mutex_t, for `contend run --lock`.\n\
                  (n/a): does not run on this kernel (said below).\n";
    format!("{t}\n\n{}{}", crate::output::table::fit(legend), crate::output::table::fit(&unavailable))
}

/// `contend list primitives`: the wake-up primitives.
pub fn primitives() -> String {
    let mut t = crate::output::table::with_text(presets::NOTHING);
    t.set_header(["primitive", "procs", "available", "post / wait"]);
    let mut unavailable = String::new();
    for p in crate::family::wakeup::registry::PRIMITIVES {
        let available = match (p.available)() {
            Ok(()) => "yes",
            Err(why) => {
                unavailable.push_str(&format!("{}: {why}\n", p.name));
                "no"
            }
        };
        let procs = if p.run_procs.is_some() { "yes" } else { "-" };
        t.add_row([p.name, procs, available, p.about]);
    }
    crate::output::table::wrap_only(&mut t, &[3]);
    format!("{t}\n{unavailable}")
}

/// `contend list allocators`.
pub fn allocators() -> String {
    let mut t = crate::output::table::with_text(presets::NOTHING);
    t.set_header(["allocator", "library", "Debian package", "available"]);
    t.add_row(["glibc", "(the C library's malloc)", "libc6", "yes"]);
    for (name, soname, package) in KNOWN {
        let found = find_library(soname);
        t.add_row([
            name.to_string(),
            found.as_ref().map_or(soname.to_string(), |p| p.display().to_string()),
            package.to_string(),
            if found.is_some() { "yes".into() } else { format!("no: apt-get install {package}") },
        ]);
    }
    crate::output::table::wrap_only(&mut t, &[1]);
    format!("{t}\n")
}
