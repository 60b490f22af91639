//! Where the futex view's words were waited on and woken, as code: under
//! the futex table, each word's waiters' sites (the first frame of the
//! program's own in each sampled stack) and its wakers' (for a lock,
//! where its holder let it go), with how the stacks were sampled.

use crate::model::futex_word::{FutexStack, FutexView};

/// How many frames past the site a line shows (its callers).
const CALLERS: usize = 1;

/// How many frames a line may grow to, to tell a word's stacks apart.
const MOST: usize = 6;

/// One stack as a line of `depth` frames: its site and its callers (or,
/// without a site, its innermost frames).
fn line(s: &FutexStack, depth: usize) -> String {
    let from = s.site.unwrap_or(0);
    let frames: Vec<&str> = s.frames.iter().skip(from).take(depth).map(String::as_str).collect();
    frames.join(" ← ")
}

/// A word's stacks (one side) as lines: the site and its caller, or as
/// many more callers (up to [`MOST`] frames) as tell two stacks apart
/// that would otherwise read the same (a Go program's runtime frames).
fn lines(stacks: &[FutexStack]) -> Vec<String> {
    let mut depth = 1 + CALLERS;
    loop {
        let out: Vec<String> = stacks.iter().map(|s| line(s, depth)).collect();
        let distinct = out.iter().collect::<std::collections::HashSet<_>>().len() == out.len();
        if distinct || depth >= MOST {
            return out;
        }
        depth += 1;
    }
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
        for (s, line) in w.waiter_stacks.iter().zip(lines(&w.waiter_stacks)) {
            out += &format!(
                "    waited at {line}  ({} sampled waits, {:.3} ms)\n",
                s.calls,
                s.blocked_ns as f64 / 1e6
            );
        }
        for (s, line) in w.waker_stacks.iter().zip(lines(&w.waker_stacks)) {
            out += &format!("    woken from {line}  ({} sampled wakes)\n", s.calls);
        }
    }
    if !any {
        out += "  no sampled call slept on these words or woke one\n";
    }
    // Over every word: where a lock that parks each waiter on a word of
    // its own (parking_lot) shows as one site.
    if view.sites.iter().any(|s| s.words > 1) {
        out += "  waited at, over every word of the program:\n";
        for s in &view.sites {
            out += &format!(
                "    {}  ({} word{}, {} sampled waits, {:.3} ms)\n",
                s.site,
                s.words,
                if s.words == 1 { "" } else { "s" },
                s.waits,
                s.blocked_ns as f64 / 1e6
            );
        }
    }
    crate::output::table::fit(&out)
}

#[cfg(test)]
mod tests {
    use super::lines;
    use crate::model::futex_word::FutexStack;

    fn stack(frames: &[&str], site: Option<usize>) -> FutexStack {
        FutexStack { frames: frames.iter().map(|f| f.to_string()).collect(), site, ..FutexStack::default() }
    }

    #[test]
    fn stacks_that_read_the_same_show_more_callers() {
        let a = stack(&["futex", "notesleep", "stopm", "findrunnable"], None);
        let b = stack(&["futex", "notesleep", "stopm", "startlockedm"], None);
        assert_eq!(
            lines(&[a, b]),
            ["futex ← notesleep ← stopm ← findrunnable", "futex ← notesleep ← stopm ← startlockedm"]
        );
        let c = stack(&["syscall", "lock", "worker (p.c:12)", "start_thread"], Some(2));
        let d = stack(&["syscall", "lock", "other (p.c:30)", "start_thread"], Some(2));
        assert_eq!(lines(&[c, d]), ["worker (p.c:12) ← start_thread", "other (p.c:30) ← start_thread"]);
    }
}
