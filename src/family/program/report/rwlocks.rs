//! `contend run --profile`'s table of pthread rwlocks and spinlocks: per
//! lock, its readers and writers apart (acquisitions, contended ones,
//! their wait), most waited-on first.

use super::details::RW_HEADER;
use crate::model::program::{ProgramSample, RwKind, RwLockProfile, SideProfile};
use crate::output::column::{Column, Columns};
use crate::output::columns::CORE;

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
    let h = RW_HEADER;
    type R<'b> = Column<'b, RwLockProfile>;
    let columns = Columns::applying(vec![
        R::text(CORE, h[0], move |l| {
            if pids {
                format!("{}:{:#x}", l.pid, l.address)
            } else {
                format!("{:#x}", l.address)
            }
        }),
        R::text(CORE, h[1], |l| match l.kind {
            RwKind::Rwlock => "rwlock".into(),
            RwKind::Spinlock => "spin".into(),
        }),
        R::wrapping(h[2], |l| l.site.clone()),
        R::number(CORE, h[3], |l| side(&l.read)[0].clone()),
        R::number(CORE, h[4], |l| side(&l.read)[1].clone()),
        R::number(CORE, h[5], |l| side(&l.read)[2].clone()),
        R::number(CORE, h[6], |l| side(&l.write)[0].clone()),
        R::number(CORE, h[7], |l| side(&l.write)[1].clone()),
        R::number(CORE, h[8], |l| side(&l.write)[2].clone()),
        R::number(CORE, "max wait µs", |l| {
            format!("{:.1}", l.read.max_wait_ns.max(l.write.max_wait_ns) as f64 / 1e3)
        }),
    ]);
    let rows: Vec<Vec<String>> = locks.iter().take(top).map(|l| columns.cells(l)).collect();
    let t = columns.render(&rows, preset);
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
