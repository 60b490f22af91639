//! `contend run --profile`'s futex table: the futex view's words (every
//! futex a program's threads slept on, whatever lock or condition variable
//! it belongs to), the longest-blocked first, each named by the data
//! symbol or memory that holds it, with the threads whose wakes ended its
//! waits: for a lock, its releasing holders.

use crate::model::futex_word::FutexWord;
use crate::model::program::ProgramSample;
use crate::output::column::{Column, Columns};
use crate::output::columns::CORE;

/// The table of one execution's futex view (empty without one).
pub fn table(s: &ProgramSample, preset: &str) -> String {
    let Some(view) = &s.futex_view else { return String::new() };
    let head = format!(
        "futex words (the kernel's futex calls, every lock and condition variable alike): {} calls, {} \
         words slept on or woken{}",
        view.calls,
        view.words_seen,
        match (view.waitv_calls, view.waitv_unread) {
            (0, _) => String::new(),
            (n, 0) => format!(", {n} futex_waitv calls (a wait on each of their words)"),
            (n, u) if u == n => format!(", {n} futex_waitv calls (their words not read)"),
            (n, u) => format!(", {n} futex_waitv calls ({u} of them with their words not read)"),
        }
    );
    if view.words.is_empty() {
        return crate::output::table::fit(&format!("{head}; no thread slept on a futex\n"));
    }
    let pids = view.words.iter().any(|w| w.pid != view.words[0].pid);
    type W<'b> = Column<'b, FutexWord>;
    let columns = Columns::applying(vec![
        W::text(CORE, "word", move |w| match pids {
            true => format!("{}:{:#x}", w.pid, w.address),
            false => format!("{:#x}", w.address),
        }),
        W::wrapping("held in", |w| {
            if w.pthread_mutex {
                format!("{} = pthread mutex above", w.name)
            } else {
                w.name.clone()
            }
        }),
        W::number(CORE, "waits", |w| w.counts.waits.to_string()),
        W::number(CORE, "blocked ms", |w| format!("{:.3}", w.counts.blocked_ns as f64 / 1e6)),
        W::number(CORE, "max µs", |w| format!("{:.1}", w.counts.max_blocked_ns as f64 / 1e3)),
        W::number(CORE, "woken", |w| w.counts.woken.to_string()),
        W::number(CORE, "EAGAIN", |w| w.counts.eagain.to_string()),
        W::number(CORE, "timed out", |w| w.counts.timeouts.to_string()),
        W::number(CORE, "other word", |w| w.counts.ended_elsewhere.to_string())
            .only_if(view.words.iter().any(|w| w.counts.ended_elsewhere > 0)),
        W::number(CORE, "wakes", |w| w.counts.wake_calls.to_string()),
        W::wrapping("holder", super::holder_state::cell)
            .only_if(view.words.iter().any(|w| w.holder.is_some())),
        W::wrapping("woken by", |w| {
            let named: Vec<String> =
                w.wakers.iter().map(|k| format!("{}/{} ({})", k.comm, k.tid, k.waits_ended)).collect();
            if named.is_empty() {
                "-".into()
            } else {
                named.join(", ")
            }
        }),
    ]);
    let rows: Vec<Vec<String>> = view.words.iter().map(|w| columns.cells(w)).collect();
    let t = columns.render(&rows, preset);
    let lost = if view.lost > 0 {
        format!(
            " The kernel dropped {} samples (its buffers were full): every count is a lower bound.",
            view.lost
        )
    } else {
        String::new()
    };
    let waitv = if view.words.iter().any(|w| w.counts.ended_elsewhere > 0) {
        "; other word: futex_waitv calls that a wake of another of their words ended (a futex_waitv \
         waits, and counts its time, on each of its words)"
    } else {
        ""
    };
    let legend = format!(
        "word: the futex's address; held in: the data symbol (module) or memory holding it; waits: calls \
         that may sleep on it (FUTEX_WAIT, WAIT_BITSET, LOCK_PI, futex_wait, futex_waitv), blocked: their \
         time in the kernel, entry to return (not EAGAIN's); woken: returned woken; EAGAIN: returned at \
         once, the word had changed{waitv}; wakes: calls waking it; woken by: the threads whose wake came \
         last before a waiter returned woken (for a lock, the releasing holder), with the waits each \
         ended.{lost}"
    );
    let split = match &view.no_split {
        Some(why) => format!(" The holders' states were not followed: {why}."),
        None => format!(" {}{}", super::holder_state::LEGEND, super::holder_state::sampling(view)),
    };
    let per_thread = match &view.per_thread {
        Some(why) => format!(
            " The futex calls were sampled by per-thread events, which cost the program at each of its \
             context switches, not through the in-kernel filter: {why}."
        ),
        None => String::new(),
    };
    format!(
        "{head}; top {} by blocked time:\n{t}\n{}{}{}",
        view.words.len(),
        crate::output::table::fit(&format!("{legend}{split}{per_thread}\n")),
        super::futex_sites::block(view),
        super::holder_state::advice(view)
    )
}

/// `contend attach`'s table: how long the process was followed, then its
/// futex view.
pub fn attached(
    spec: &crate::family::program::spec::ProgramSpec,
    o: &crate::family::program::sweep::ProgramOutcome,
    preset: &str,
) -> String {
    let Some(r) = o.results.first() else { return String::new() };
    let s = &r.sample;
    let how = s.signal.as_ref().map_or(String::new(), |sig| format!(", ended by {sig}"));
    let head = format!("{} followed for {:.3} s{how}\n", spec.program[0], s.wall_s);
    crate::output::table::fit(&head) + &table(s, preset)
}

/// One futex word as a CSV row (`contend attach --export-csv`).
#[derive(Default, serde::Serialize)]
struct WordRow {
    pid: u32,
    address: String,
    held_in: String,
    pthread_mutex: bool,
    waits: u64,
    blocked_ns: u64,
    max_blocked_ns: u64,
    woken: u64,
    eagain: u64,
    timeouts: u64,
    interrupted: u64,
    unfinished: u64,
    ended_elsewhere: u64,
    wake_calls: u64,
    woke: u64,
    top_waker_tid: Option<u32>,
    top_waker_waits_ended: Option<u64>,
    /// The holder split, ns (empty when the holders were not followed).
    holder_running_ns: Option<u64>,
    holder_preempted_ns: Option<u64>,
    holder_blocked_ns: Option<u64>,
    holder_waking_ns: Option<u64>,
    holder_unknown_ns: Option<u64>,
    /// What the holders slept in most.
    holder_blocked_in: Option<String>,
    /// Where its waiters slept, as code (with the stacks sampled).
    waited_at: Option<String>,
    /// Where its wakers woke them, as code: the top waker stack's site.
    woken_from: Option<String>,
}

/// The futex view's words as CSV, one row each (empty without a view).
pub fn csv(s: &ProgramSample) -> String {
    let words = s.futex_view.iter().flat_map(|v| &v.words);
    crate::output::csv::render(words.map(|w| WordRow {
        pid: w.pid,
        address: format!("{:#x}", w.address),
        held_in: w.name.clone(),
        pthread_mutex: w.pthread_mutex,
        waits: w.counts.waits,
        blocked_ns: w.counts.blocked_ns,
        max_blocked_ns: w.counts.max_blocked_ns,
        woken: w.counts.woken,
        eagain: w.counts.eagain,
        timeouts: w.counts.timeouts,
        interrupted: w.counts.interrupted,
        unfinished: w.counts.unfinished,
        ended_elsewhere: w.counts.ended_elsewhere,
        wake_calls: w.counts.wake_calls,
        woke: w.counts.woke,
        top_waker_tid: w.wakers.first().map(|k| k.tid),
        top_waker_waits_ended: w.wakers.first().map(|k| k.waits_ended),
        holder_running_ns: w.holder.as_ref().map(|h| h.running_ns),
        holder_preempted_ns: w.holder.as_ref().map(|h| h.preempted_ns),
        holder_blocked_ns: w.holder.as_ref().map(|h| h.blocked_ns),
        holder_waking_ns: w.holder.as_ref().map(|h| h.waking_ns),
        holder_unknown_ns: w.holder.as_ref().map(|h| h.unknown_ns),
        holder_blocked_in: w.holder.as_ref().and_then(|h| h.blocked_in.first()).map(|b| b.cause.clone()),
        waited_at: w.waited_at.clone(),
        woken_from: w.let_go_at().map(str::to_string),
    }))
}

/// The futex view's words as gnuplot columns (`contend attach
/// --export-gnuplot`), one line each, the longest-blocked first; the
/// name last, its spaces made underscores, so that every column before
/// it is one field (`plot "f" using 0:3 with boxes` draws the blocked
/// time per word).
pub fn gnuplot(s: &ProgramSample) -> String {
    let mut out = String::from(
        "# pid address blocked_ms max_blocked_ms waits woken eagain timeouts wake_calls woke name\n",
    );
    for w in s.futex_view.iter().flat_map(|v| &v.words) {
        let c = &w.counts;
        out += &format!(
            "{} {:#x} {:.6} {:.6} {} {} {} {} {} {} {}\n",
            w.pid,
            w.address,
            c.blocked_ns as f64 / 1e6,
            c.max_blocked_ns as f64 / 1e6,
            c.waits,
            c.woken,
            c.eagain,
            c.timeouts,
            c.wake_calls,
            c.woke,
            w.name.replace(char::is_whitespace, "_")
        );
    }
    out
}
