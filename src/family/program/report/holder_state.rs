//! What a futex word's holders were doing while its waiters slept, in
//! words: the futex table's cell, and the advice that follows from the
//! split (a preempted holder needs fewer runnable threads or a longer
//! slice, a sleeping one needs its syscall moved out of the section, one
//! waiting on a second lock points at that lock, a running one needs a
//! shorter section or another lock).

use crate::model::futex_word::{FutexView, FutexWord, HolderSplit};

/// Shares below this are left out of the cell.
const SHOWN: f64 = 0.01;

/// A share of the split at or above which it gets advice.
const ADVISED: f64 = 0.25;

fn share(ns: u64, h: &HolderSplit) -> f64 {
    ns as f64 / h.sampled_ns().max(1) as f64
}

/// One part of a holder split: what the waker was doing.
#[derive(Debug, Clone, PartialEq)]
enum Part {
    Running,
    Preempted,
    /// From the wake call to the waiter's return: the hand-off.
    Waking,
    Unknown,
    /// Waiting on the same word before it held it: not a chain.
    Queued,
    /// Waiting on another word: its name, its address.
    Chain(String, u64),
    /// Asleep in a syscall (or a page fault), named.
    In(String),
    /// Asleep where the kernel stack did not say, or in a cause folded
    /// into "other".
    Asleep(String),
}

impl Part {
    /// How the cell and the advice name it.
    fn label(&self) -> String {
        match self {
            Part::Running => "running".into(),
            Part::Preempted => "preempted".into(),
            Part::Waking => "waking the waiter".into(),
            Part::Unknown => "not known".into(),
            Part::Queued => "queued on this word too".into(),
            Part::Chain(other, _) => format!("waiting on {other}"),
            Part::In(call) => format!("in {call}"),
            Part::Asleep(why) => format!("asleep ({why})"),
        }
    }
}

/// The parts of word `w`'s split `h`, largest first, with their shares.
fn parts(w: &FutexWord, h: &HolderSplit) -> Vec<(Part, f64)> {
    let mut parts = vec![
        (Part::Running, share(h.running_ns, h)),
        (Part::Preempted, share(h.preempted_ns, h)),
        (Part::Waking, share(h.waking_ns, h)),
        (Part::Unknown, share(h.unknown_ns, h)),
    ];
    for b in &h.blocked_in {
        let part = match b.futex_word {
            Some(a) if a == w.address => Part::Queued,
            Some(a) => Part::Chain(b.cause.clone(), a),
            None if b.cause == "not known" || b.cause == "other" => Part::Asleep(b.cause.clone()),
            None => Part::In(b.cause.clone()),
        };
        parts.push((part, share(b.ns, h)));
    }
    parts.sort_by(|a, b| b.1.total_cmp(&a.1));
    parts.retain(|p| p.1 >= SHOWN);
    parts
}

/// The table's cell: `preempted 55%, running 44%`.
pub fn cell(w: &FutexWord) -> String {
    let Some(h) = &w.holder else { return "-".into() };
    if h.sampled_ns() == 0 {
        return "-".into();
    }
    parts(w, h)
        .iter()
        .map(|(part, s)| format!("{} {:.0}%", part.label(), 100.0 * s))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The legend's sentence for the column.
pub const LEGEND: &str = "holder: while the waiters slept, what the thread whose wake ended each wait \
     (for a lock, the releasing holder) was doing up to that wake (running, preempted: runnable but off \
     its CPU, in a syscall, waiting on another futex word: a chain, queued on this word too: it waited \
     for the word before it held it), then waking the waiter: the hand-off \
     to its return; a sleeping holder counts as asleep until it runs again.";

/// The sampling rule's sentence, when the switches were sampled in time:
/// ` The holders' switches were followed 11% of the time (...)`.
pub fn sampling(view: &FutexView) -> String {
    match &view.holder_sampling {
        Some(s) if s.followed_pct < 100 => format!(
            " The holders' switches were followed {}% of the time: {} a second while followed, over \
             the budget of {} a second, so in a window at the start of each {} ms that closes once it \
             has read its share; the shares are of the waits' time inside the windows.",
            s.followed_pct, s.switches_per_s, s.budget_per_s, s.cycle_ms
        ),
        _ => String::new(),
    }
}

/// Who held word `w` and where they let it go, as far as the view knows:
/// ` (held by worker/7, let go at f (f.c:12))`, or nothing.
fn held_by(w: &FutexWord) -> String {
    let who = w.wakers.first().map(|k| {
        let others = if w.wakers.len() > 1 { " and others" } else { "" };
        format!("held by {}/{}{others}", k.comm, k.tid)
    });
    let at = w.let_go_at().map(|site| format!("let go at {site}"));
    let said: Vec<String> = who.into_iter().chain(at).collect();
    if said.is_empty() {
        String::new()
    } else {
        format!(" ({})", said.join(", "))
    }
}

/// The chain's second link: where word `w`'s holders waited for the word
/// at `address` (named `other`), and who held that one, where the view
/// has it among its words.
fn second_link(view: &FutexView, w: &FutexWord, other: &str, address: u64) -> String {
    let Some(b) = view.words.iter().find(|b| b.pid == w.pid && b.address == address) else {
        return other.to_string();
    };
    let waited = b.waited_at.as_ref().map(|site| format!(", waited for at {site}")).unwrap_or_default();
    format!("{other}{waited}{}", held_by(b))
}

/// One line of advice per word where a part of the split is large. A
/// word's holders are named with where they let it go (their wake's
/// site), where the view sampled stacks.
pub fn advice(view: &FutexView) -> String {
    let mut out = String::new();
    for w in &view.words {
        let Some(h) = &w.holder else { continue };
        let Some((part, s)) = parts(w, h).into_iter().next().filter(|p| p.1 >= ADVISED) else { continue };
        let pct = format!("{:.0}%", 100.0 * s);
        let name = w.label();
        let held = held_by(w);
        let line = match part {
            Part::Preempted => format!(
                "{name}{held}: its holders were preempted for {pct} of its waiters' time: more threads were \
                 runnable than CPUs; fewer threads than CPUs, a higher priority for the holders, or{} \
                 keep a holder on its CPU.",
                if view.slice_extension {
                    " rseq time-slice extension (this kernel has it) would"
                } else {
                    " (on Linux 7.0 and later) rseq time-slice extension would"
                }
            ),
            Part::Chain(other, address) => format!(
                "{name}: its holders were themselves waiting on {other} for {pct} of its waiters' time \
                 (a chain: {name}{held}, waits for {}); shorten that wait first.",
                second_link(view, w, &other, address)
            ),
            Part::In(call) => format!(
                "{name}{held}: its holders slept in {call} for {pct} of its waiters' time: move the {call} \
                 out of the critical section."
            ),
            Part::Running => format!(
                "{name}{held}: its holders were running for {pct} of its waiters' time: the section itself \
                 is long; shorten it, or try another lock (--what-if, --recommend)."
            ),
            Part::Waking => format!(
                "{name}: {pct} of its waiters' time was the hand-off, from the holder's wake to the \
                 waiter's return: a lock that spins briefly before it sleeps saves it."
            ),
            // Nothing to advise: the wait's cause is not known, or the
            // holders had queued on the word themselves.
            Part::Unknown | Part::Queued | Part::Asleep(_) => continue,
        };
        out += &crate::output::table::fit(&line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::futex_word::{BlockedIn, FutexStack, FutexWaker};

    fn word(h: HolderSplit) -> FutexWord {
        FutexWord { name: "outer_lock (prog)".into(), holder: Some(h), ..FutexWord::default() }
    }

    #[test]
    fn the_cell_lists_the_parts_largest_first_and_a_chain_names_the_other_word() {
        let h = HolderSplit {
            running_ns: 5,
            blocked_ns: 90,
            blocked_in: vec![BlockedIn {
                cause: "futex inner_lock (prog)".into(),
                futex_word: Some(8),
                ns: 90,
            }],
            waking_ns: 5,
            ..HolderSplit::default()
        };
        let w = word(h);
        assert_eq!(cell(&w), "waiting on futex inner_lock (prog) 90%, running 5%, waking the waiter 5%");
        let view = FutexView { words: vec![w.clone()], ..FutexView::default() };
        let said = advice(&view);
        assert!(said.contains("a chain: outer_lock (prog), waits for futex inner_lock (prog))"), "{said}");
        // With both words' stacks and wakers, each link says who held it
        // and where.
        let site = |f: &str| FutexStack {
            calls: 1,
            frames: vec!["syscall".into(), f.into()],
            site: Some(1),
            ..FutexStack::default()
        };
        let waker = |tid| FutexWaker { tid, comm: "worker".into(), waits_ended: 3 };
        let outer = FutexWord { waker_stacks: vec![site("middle (p.c:12)")], wakers: vec![waker(7)], ..w };
        let inner = FutexWord {
            name: "inner_lock (prog)".into(),
            address: 8,
            waited_at: Some("middle (p.c:10)".into()),
            waker_stacks: vec![site("last (p.c:40)")],
            wakers: vec![waker(9), waker(10)],
            ..FutexWord::default()
        };
        let said = advice(&FutexView { words: vec![outer, inner], ..FutexView::default() });
        let said = said.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            said.contains(
                "(a chain: outer_lock (prog) (held by worker/7, let go at middle (p.c:12)), waits for futex \
                 inner_lock (prog), waited for at middle (p.c:10) (held by worker/9 and others, let go at \
                 last (p.c:40))); shorten"
            ),
            "{said}"
        );
        let queued = HolderSplit {
            blocked_ns: 60,
            blocked_in: vec![BlockedIn { cause: "futex this word".into(), futex_word: Some(0), ns: 60 }],
            running_ns: 40,
            ..HolderSplit::default()
        };
        let w = word(queued);
        assert_eq!(cell(&w), "queued on this word too 60%, running 40%");
        assert_eq!(advice(&FutexView { words: vec![w], ..FutexView::default() }), "", "not a chain");
    }

    #[test]
    fn each_large_part_gets_its_own_advice_and_small_ones_none() {
        let preempted = HolderSplit { preempted_ns: 60, running_ns: 40, ..HolderSplit::default() };
        let asleep = HolderSplit {
            blocked_ns: 80,
            blocked_in: vec![BlockedIn { cause: "fsync".into(), futex_word: None, ns: 80 }],
            running_ns: 20,
            ..HolderSplit::default()
        };
        let spread =
            HolderSplit { running_ns: 20, preempted_ns: 20, unknown_ns: 60, ..HolderSplit::default() };
        let view =
            FutexView { words: vec![word(preempted), word(asleep), word(spread)], ..FutexView::default() };
        let said = advice(&view);
        assert!(said.contains("preempted for 60%") && said.contains("Linux 7.0"), "{said}");
        assert!(said.contains("move the fsync out"), "{said}");
        assert_eq!(said.matches("outer_lock").count(), 2, "{said}");
        assert_eq!(cell(&FutexWord::default()), "-");
    }
}
