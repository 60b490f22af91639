//! `contend run --profile`'s holders table: the release sites whose
//! critical sections caused the waits, ranked by the wait they caused
//! (each contended acquisition's wait charged to the release just before
//! it).

use crate::model::program::{HolderProfile, MutexProfile, ProgramSample};
use crate::output::column::{Column, Columns};
use crate::output::columns::CORE;

/// The holders' side: release sites ranked by the wait they caused.
pub fn table(s: &ProgramSample, top: usize, preset: &str) -> String {
    let mut rows: Vec<_> = s
        .mutexes
        .iter()
        .flat_map(|m| m.holders.iter().filter(|h| !h.frames.is_empty()).map(move |h| (m, h)))
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    rows.sort_by_key(|(_, h)| std::cmp::Reverse(h.caused_wait_ns));
    let label = mutex_label(&s.mutexes);
    type H<'b> = Column<'b, (&'b MutexProfile, &'b HolderProfile)>;
    let columns = Columns::applying(vec![
        H::text(CORE, "mutex", |(m, _)| label(m)),
        H::wrapping("held at", |(_, h)| h.frames[h.wrappers].clone()),
        H::number(CORE, "releases to waiters", |(_, h)| h.releases.to_string()),
        H::number(CORE, "held ms", |(_, h)| format!("{:.3}", h.held_ns as f64 / 1e6)),
        H::number(CORE, "wait caused ms", |(_, h)| format!("{:.3}", h.caused_wait_ns as f64 / 1e6)),
        H::number(CORE, "of its wait", |(m, h)| {
            format!("{:.0}%", 100.0 * h.caused_wait_ns as f64 / m.counts.wait_ns.max(1) as f64)
        }),
    ]);
    let cells: Vec<Vec<String>> = rows.iter().take(top).map(|row| columns.cells(row)).collect();
    let t = columns.render(&cells, preset);
    let legend = "held at: where the holder released the mutex (an unlock, or a condition wait), past \
                  wrappers; releases to waiters: its releases while others waited; held: the holds those \
                  releases ended; wait caused: the waits they ended (each contended acquisition's wait \
                  goes to the release just before it, as Go's mutex profile charges the unlocker).\n";
    format!(
        "the holders that caused the waits, top {} by wait caused:\n{t}\n{}",
        top.min(rows.len()),
        crate::output::table::fit(legend)
    )
}

/// How the profile's tables name a mutex: its address, after its
/// process's name and pid (`sysbench/4121:0x...`) when the profile spans
/// several processes.
pub(crate) fn mutex_label(mutexes: &[MutexProfile]) -> impl Fn(&MutexProfile) -> String {
    let pids = mutexes.iter().any(|m| m.pid != mutexes[0].pid);
    move |m| match pids {
        true => format!("{}/{}:{:#x}", m.comm, m.pid, m.address),
        false => format!("{:#x}", m.address),
    }
}
