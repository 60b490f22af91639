//! `contend run --profile`'s table of pthread rwlocks and spinlocks: per
//! lock, its readers and writers apart (acquisitions, contended ones,
//! their wait), most waited-on first.

use super::details::RW_HEADER;
use crate::model::program::{ProgramSample, RwKind, SideProfile};

/// One side's cells: acquired, contended (share), wait ms.
fn side(s: &SideProfile) -> [String; 3] {
    if s.acquisitions == 0 && s.try_failed == 0 {
        return ["-".into(), "-".into(), "-".into()];
    }
    [
        s.acquisitions.to_string(),
        format!("{} ({:.0}%)", s.contended, 100.0 * s.contended as f64 / s.acquisitions.max(1) as f64),
        format!("{:.3}", s.wait_ns as f64 / 1e6),
    ]
}

/// The table of one run's rwlocks and spinlocks (empty when the program
/// took none).
pub fn table(s: &ProgramSample, top: usize, preset: &str) -> String {
    let locks = &s.rwlocks;
    if locks.is_empty() {
        return String::new();
    }
    let pids = locks.iter().any(|l| l.pid != locks[0].pid);
    let mut t = crate::output::table::with_text(preset);
    t.set_header(RW_HEADER.iter().chain(&["max wait µs"]).collect::<Vec<_>>());
    for l in locks.iter().take(top) {
        let label = if pids { format!("{}:{:#x}", l.pid, l.address) } else { format!("{:#x}", l.address) };
        let kind = match l.kind {
            RwKind::Rwlock => "rwlock",
            RwKind::Spinlock => "spin",
        };
        let max = l.read.max_wait_ns.max(l.write.max_wait_ns);
        let mut row = vec![label, kind.to_string(), l.site.clone()];
        row.extend(side(&l.read));
        row.extend(side(&l.write));
        row.push(format!("{:.1}", max as f64 / 1e3));
        t.add_row(row);
    }
    crate::output::table::wrap_only(&mut t, &[2]);
    crate::output::table::align_right(&mut t, 3..10);
    let legend = "rwlocks and spinlocks are glibc's under every lock (nothing swaps them). read/write: \
                  readers and writers apart (a spinlock's holders are writers); contended: acquisitions \
                  whose first try-lock failed; wait: from that failure to the acquisition.\n";
    format!(
        "rwlocks and spinlocks under {}, top {} of {} by total wait:\n{t}\n{}",
        s.lock,
        top.min(locks.len()),
        locks.len(),
        crate::output::table::fit(legend)
    )
}
