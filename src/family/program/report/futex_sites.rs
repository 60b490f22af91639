//! Where the futex view's words were waited on and woken, as code: under
//! the futex table, each word's waiters' sites (the first frame of the
//! program's own in each sampled stack) and its wakers' (for a lock,
//! where its holder let it go), with how the stacks were sampled.

use crate::model::futex_word::{FutexStack, FutexView};

/// How many frames past the site a line shows (its callers).
const CALLERS: usize = 1;

/// One stack as a line: its site and the caller after it (or, without a
/// site, its innermost frames).
fn line(s: &FutexStack) -> String {
    let from = s.site.unwrap_or(0);
    let frames: Vec<&str> = s.frames.iter().skip(from).take(1 + CALLERS).map(String::as_str).collect();
    frames.join(" ← ")
}

/// The block: each shown word's sites, or why the view sampled no
/// stacks (empty when it did not say).
pub fn block(view: &FutexView) -> String {
    let Some(how) = &view.stacks else {
        return match &view.no_stacks {
            Some(why) => format!("Waiters' and wakers' stacks were not sampled: {why}.\n"),
            None => String::new(),
        };
    };
    let mut out = format!(
        "where (user stacks of {} futex calls, at most {} a second (--futex-stacks), {} KiB of each; {} \
         while the budget was spent{}):\n",
        how.read,
        how.budget_per_s,
        how.stack_bytes / 1024,
        if how.off_ns > 0 { format!("off {:.3} s", how.off_ns as f64 / 1e9) } else { "never off".into() },
        if how.lost > 0 { format!("; {} more dropped, the buffer full", how.lost) } else { String::new() },
    );
    let mut any = false;
    for w in &view.words {
        if w.waiter_stacks.is_empty() && w.waker_stacks.is_empty() {
            continue;
        }
        any = true;
        out += &format!("  {:#x} {}\n", w.address, w.name);
        for s in &w.waiter_stacks {
            out += &format!(
                "    waited at {}  ({} sampled waits, {:.3} ms)\n",
                line(s),
                s.calls,
                s.blocked_ns as f64 / 1e6
            );
        }
        for s in &w.waker_stacks {
            out += &format!("    woken from {}  ({} sampled wakes)\n", line(s), s.calls);
        }
    }
    if !any {
        out += "  no sampled call slept on these words or woke one\n";
    }
    crate::output::table::fit(&out)
}
