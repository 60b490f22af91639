//! `--format seed`: futex-scalability.c's summary lines, so scripts written
//! for the original keep working. One difference, on purpose: the rate
//! divides by the measured window, not the requested one. With several
//! points, each block is preceded by a `# ...` line naming its point.

use crate::family::lock::sweep::PointResult;
use std::fmt::Write;

/// The seed's lines for every result.
pub fn render(results: &[PointResult]) -> String {
    let mut out = String::new();
    for (i, r) in results.iter().enumerate() {
        let p = &r.point;
        let s = &r.sample;
        if results.len() > 1 {
            if i > 0 {
                out.push('\n');
            }
            let spin = p.spin.map_or(String::new(), |s| format!(" spin={s}"));
            let spinners = p.spinners.map_or(String::new(), |s| format!(" spinners={s}"));
            let _ = writeln!(
                out,
                "# lock={} threads={}{spinners}{spin} hold={} idle={}",
                p.lock, p.workers, p.hold, p.idle
            );
        }
        let _ = writeln!(
            out,
            "The number of entries in the critical section = {} ({:.6} M entries/s)",
            s.acquisitions,
            s.cs_per_s / 1e6
        );
        for (t, w) in s.workers.iter().enumerate() {
            let _ = writeln!(out, "Thread {t} = {} entries", w.acquisitions);
        }
    }
    out
}
