//! `contend list locks`: the registry as a table.

use crate::registry::LOCKS;
use comfy_table::{presets, Table};

/// The lock registry with capabilities.
pub fn locks() -> String {
    let mut t = Table::new();
    t.load_preset(presets::NOTHING);
    t.set_header([
        "lock",
        "family",
        "spin",
        "try",
        "procs",
        "counters",
        "description",
    ]);
    let yes = |b: bool| if b { "yes" } else { "-" };
    for e in LOCKS {
        t.add_row([
            e.name,
            e.family,
            yes(e.caps.spin),
            yes(e.caps.try_lock),
            yes(e.caps.process_shared),
            yes(e.caps.counters),
            e.about,
        ]);
    }
    format!(
        "{t}\n\nspin: takes --spin; try: has try-lock; procs: can be shared by processes; \
         counters: reports its own spins/waits/wakes\n"
    )
}
