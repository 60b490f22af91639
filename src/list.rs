//! `contend list`: the lock registry and the wake-up primitives as tables.

use crate::family::alloc::registry::{find_library, KNOWN};
use crate::family::lock::registry::LOCKS;
use comfy_table::{presets, Table};

/// The lock registry with capabilities.
pub fn locks() -> String {
    let mut t = Table::new();
    t.load_preset(presets::NOTHING);
    t.set_header([
        "lock",
        "family",
        "spin",
        "spinners",
        "try",
        "procs",
        "counters",
        "run",
        "available",
        "description",
    ]);
    // `contend run` swaps in the locks that fit in a pthread_mutex_t.
    let runs = |name: &str| locks::in_mutex::Swap::all().any(|s| s.name() == name);
    let yes = |b: bool| if b { "yes" } else { "-" }.to_string();
    let mut unavailable = String::new();
    for e in LOCKS {
        let available = match (e.available)() {
            Ok(()) => "yes".to_string(),
            Err(why) => {
                unavailable.push_str(&format!("{}: {why}\n", e.name));
                "no".to_string()
            }
        };
        t.add_row([
            e.name.to_string(),
            if e.test_only { format!("{} (test only)", e.family) } else { e.family.to_string() },
            yes(e.caps.spin),
            yes(e.caps.spinners),
            yes(e.caps.try_lock),
            yes(e.caps.process_shared),
            yes(e.caps.counters),
            yes(runs(e.name)),
            available,
            e.about.to_string(),
        ]);
    }
    format!(
        "{t}\n\nspin: takes --spin; spinners: takes --spinners; try: has try-lock; \
         procs: can live in shared memory for processes;\ncounters: reports its own \
         spins/waits/wakes; run: fits in a pthread_mutex_t, for `contend run --lock`;\n\
         available: runs on this kernel\n{unavailable}"
    )
}

/// `contend list primitives`: the wake-up primitives.
pub fn primitives() -> String {
    let mut t = Table::new();
    t.load_preset(presets::NOTHING);
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
    format!("{t}\n{unavailable}")
}

/// `contend list allocators`.
pub fn allocators() -> String {
    let mut t = Table::new();
    t.load_preset(presets::NOTHING);
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
    format!("{t}\n")
}
