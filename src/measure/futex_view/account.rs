//! The futex view's bookkeeping: futex calls' entries and returns, in the
//! order they happened, become per-word counts. A call is paired with its
//! return by thread (a thread is in one syscall at a time); a wait that
//! returns woken is charged to the last wake call on its word before it
//! returned, whose thread is, for a lock, the releasing holder; with the
//! threads' context switches, what that thread did while the waiter slept
//! (`holders`). A call's user stack, sampled at its entry by another
//! event of the same tracepoint (`stacks`), is joined to it by thread,
//! and counted per word: the waiters' where they slept, the
//! wakers' where they woke someone. A futex_waitv waits on each of its
//! words: each counts the wait and its time, and the word a wake ended it
//! on counts it woken, the others `ended_elsewhere`; its stack counts
//! once, on that word (on its first when none ended it), so that the
//! sites over every word count each sampled call once.

use super::holders::{Observed, Split, Timeline};
use super::ops::{Call, Said};
use serde::Serialize;
use std::collections::HashMap;

/// What the futex calls on one word did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FutexWordCounts {
    /// Calls that may sleep on the word: FUTEX_WAIT, FUTEX_WAIT_BITSET,
    /// FUTEX_LOCK_PI(2), FUTEX_WAIT_REQUEUE_PI, futex_wait(2), and
    /// futex_waitv(2) with the word among its words (one call, a wait on
    /// each). Counted when they enter, as the pthread profile's "kernel
    /// waits" are.
    pub waits: u64,
    /// Their time in the kernel, entry to return, ns, but for those that
    /// returned EAGAIN (they did not sleep); a call still in the kernel
    /// when the view ended counts up to then.
    pub blocked_ns: u64,
    /// The longest one, ns.
    pub max_blocked_ns: u64,
    /// Of the waits, those that returned 0: woken (or, FUTEX_LOCK_PI,
    /// given the lock).
    pub woken: u64,
    /// Those that ran out of time (ETIMEDOUT).
    pub timeouts: u64,
    /// Those that returned at once because the word had changed (EAGAIN):
    /// the race a futex lock is built to lose cheaply.
    pub eagain: u64,
    /// Those a signal interrupted (EINTR), or that failed otherwise.
    pub interrupted: u64,
    /// Those still in the kernel when the view ended (a thread parked
    /// until the program exited, say).
    pub unfinished: u64,
    /// futex_waitv calls waiting on this word among others that a wake
    /// of another of their words ended (they count their time here too:
    /// the thread was blocked on this word as well). With it, the waits
    /// are woken, eagain, timeouts, interrupted, unfinished and these.
    pub ended_elsewhere: u64,
    /// Calls that wake waiters of the word: FUTEX_WAKE(_BITSET), WAKE_OP,
    /// (CMP_)REQUEUE(_PI), UNLOCK_PI and futex_wake(2).
    pub wake_calls: u64,
    /// Threads those calls woke (or, for a requeue, woke and moved), by
    /// what the calls returned; FUTEX_UNLOCK_PI returns no count and adds
    /// nothing.
    pub woke: u64,
}

/// errno values a wait returns (negated in the syscall's return).
const EAGAIN: i64 = 11;
const ETIMEDOUT: i64 = 110;
/// Not a return: a futex_waitv that a wake of another of its words ended,
/// as the return its other words get.
const ELSEWHERE: i64 = i64::MIN;

/// One word's counts and whose wakes ended its waits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WordAccount {
    /// What its calls did.
    pub counts: FutexWordCounts,
    /// Waits ended, by the waking thread.
    pub wakers: HashMap<u32, u64>,
    /// What the waits' holders did while they slept (measured when the
    /// view has the threads' switches).
    pub holder: Split,
    /// Waits that slept (all but EAGAIN's), by their waiter's stack:
    /// (waits, blocked ns).
    pub waiter_stacks: HashMap<u32, (u64, u64)>,
    /// Wake calls that woke a waiter (or unlocked a PI lock), by their
    /// waker's stack.
    pub waker_stacks: HashMap<u32, u64>,
    /// The thread of the last wake call on the word, and when it began.
    last_waker: Option<(u32, u64)>,
}

/// A call in the kernel.
#[derive(Debug, Clone)]
struct InFlight {
    pid: u32,
    call: Call,
    /// When it entered.
    since: u64,
    /// Its user stack, when sampled.
    stack: Option<u32>,
}

/// Every word's account, and the calls in flight.
#[derive(Debug, Default)]
pub struct Account {
    /// By (process, address).
    pub words: HashMap<(u32, u64), WordAccount>,
    /// Calls seen, by process.
    pub calls: HashMap<u32, u64>,
    /// futex_waitv calls, by process.
    pub waitv: HashMap<u32, u64>,
    /// Of them, those whose words were not read: their record came from a
    /// per-thread event, which has only the array's address, or the
    /// router could not copy the array.
    pub waitv_unread: HashMap<u32, u64>,
    /// Returns whose entry was not seen (the view began during the call).
    pub orphan_returns: u64,
    /// Every followed thread's states (when the view has the switches).
    pub timeline: Timeline,
    /// By thread: its call in the kernel.
    inflight: HashMap<u32, InFlight>,
    /// By thread: a stack sampled before its call's entry was applied.
    early_stacks: HashMap<u32, u32>,
}

impl Account {
    /// Takes one record of thread `tid` of process `pid` at `time` (ns).
    /// Records must come in time order.
    pub fn apply(&mut self, pid: u32, tid: u32, time: u64, said: Said) {
        match said {
            Said::Enter(call) => {
                *self.calls.entry(pid).or_default() += 1;
                match &call {
                    Call::Wait { uaddr } => self.word(pid, *uaddr).counts.waits += 1,
                    Call::Wake { uaddr, also, .. } => {
                        for a in std::iter::once(*uaddr).chain(*also) {
                            let w = self.word(pid, a);
                            w.counts.wake_calls += 1;
                            w.last_waker = Some((tid, time));
                        }
                    }
                    Call::WaitV { words } => {
                        *self.waitv.entry(pid).or_default() += 1;
                        if words.is_empty() {
                            *self.waitv_unread.entry(pid).or_default() += 1;
                        }
                        for a in distinct(words) {
                            self.word(pid, a).counts.waits += 1;
                        }
                    }
                    Call::Other => {}
                }
                let stack = self.early_stacks.remove(&tid);
                self.inflight.insert(tid, InFlight { pid, call, since: time, stack });
            }
            Said::Exit(ret) => {
                // A stack still waiting for its entry at a return: that
                // entry was never seen (its sample lost, or before the
                // view), and no later call is its.
                self.early_stacks.remove(&tid);
                let Some(InFlight { pid, call, since, stack }) = self.inflight.remove(&tid) else {
                    self.orphan_returns += 1;
                    return;
                };
                match call {
                    Call::Wait { uaddr } => self.wait_ended(pid, uaddr, tid, since, time, ret, stack),
                    Call::WaitV { words } => {
                        // Its return is the index of the word woken.
                        let woken = usize::try_from(ret).ok().and_then(|i| words.get(i)).copied();
                        let stacked = woken.or(words.first().copied());
                        for a in distinct(&words) {
                            let r = match woken {
                                Some(w) if w != a => ELSEWHERE,
                                Some(_) => 0,
                                None => ret,
                            };
                            let stack = stack.filter(|_| stacked == Some(a));
                            self.wait_ended(pid, a, tid, since, time, r, stack);
                        }
                    }
                    Call::Wake { uaddr, counts, .. } if ret > 0 || (!counts && ret == 0) => {
                        let w = self.word(pid, uaddr);
                        if counts {
                            w.counts.woke += ret as u64;
                        }
                        if let Some(n) = stack {
                            *w.waker_stacks.entry(n).or_default() += 1;
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    /// Thread `tid`'s wait on word `uaddr` of process `pid`, entered at
    /// `since`, returned `ret` at `time` (ELSEWHERE: a futex_waitv a wake
    /// of another of its words ended).
    #[allow(clippy::too_many_arguments)]
    fn wait_ended(
        &mut self,
        pid: u32,
        uaddr: u64,
        tid: u32,
        since: u64,
        time: u64,
        ret: i64,
        stack: Option<u32>,
    ) {
        let (timeline, w) = (&self.timeline, self.words.entry((pid, uaddr)).or_default());
        // A wait that found the word changed did not sleep.
        if ret != -EAGAIN {
            w.slept(time.saturating_sub(since), stack);
        }
        // Its waker: the last wake call of another thread on the word.
        // One that entered just before the wait did can still wake it
        // (both stamps are taken at entry): then all of it was the waking.
        let waker = w.last_waker.filter(|&(t, _)| t != tid);
        match (ret, waker) {
            (0, Some((waker, at))) => {
                w.counts.woken += 1;
                *w.wakers.entry(waker).or_default() += 1;
                if timeline.seen {
                    let at = at.max(since);
                    timeline.add(&mut w.holder, waker, since, at);
                    timeline.add_known(&mut w.holder, at, time, |s| &mut s.waking);
                }
            }
            (r, _) if r == -EAGAIN => w.counts.eagain += 1,
            (r, _) => {
                match r {
                    0 => w.counts.woken += 1,
                    ELSEWHERE => w.counts.ended_elsewhere += 1,
                    r if r == -ETIMEDOUT => w.counts.timeouts += 1,
                    _ => w.counts.interrupted += 1,
                }
                if timeline.seen {
                    timeline.add_known(&mut w.holder, since, time, |s| &mut s.unknown);
                }
            }
        }
    }

    /// Thread `tid`'s futex call entering now has user stack `n`
    /// (records in time order). The stack's sample and the entry's are
    /// two events of one tracepoint hit, in either order, and a thread is
    /// in one call at a time: the stack is the call's in flight (entered
    /// before it, without one yet), else the next one to enter. Their
    /// stamps are usually 2–5 µs apart, but a stack's copy may fault, and
    /// under load they were up to 72 µs apart: no time window joins them.
    pub fn stacked(&mut self, tid: u32, n: u32) {
        match self.inflight.get_mut(&tid) {
            Some(f) if f.stack.is_none() => f.stack = Some(n),
            _ => {
                self.early_stacks.insert(tid, n);
            }
        }
    }

    /// Thread `tid` came to a CPU or left one at `time` (records in time
    /// order with the calls').
    pub fn switch(&mut self, tid: u32, time: u64, out: bool, preempted: bool) {
        let futex = self.waiting_on(tid);
        self.timeline.switch(tid, time, out, preempted, futex);
    }

    /// Thread `tid` was seen in /proc at `time` as `state`.
    pub fn observed(&mut self, tid: u32, time: u64, state: Observed) {
        let futex = self.waiting_on(tid);
        self.timeline.observed(tid, time, state, futex);
    }

    /// The word of the futex wait thread `tid` is in, if any (a
    /// futex_waitv's first).
    fn waiting_on(&self, tid: u32) -> Option<u64> {
        self.inflight.get(&tid).and_then(|f| f.call.sleeps_on().first().copied())
    }

    /// Ends the view at `end` (ns): waits still in the kernel count as
    /// unfinished, blocked until then, their holder not known.
    pub fn finish(&mut self, end: u64) {
        for (_, InFlight { pid, call, since, stack }) in std::mem::take(&mut self.inflight) {
            let words = distinct(call.sleeps_on());
            let first = words.first().copied();
            for uaddr in words {
                let w = self.words.entry((pid, uaddr)).or_default();
                w.slept(end.saturating_sub(since), stack.filter(|_| first == Some(uaddr)));
                w.counts.unfinished += 1;
                if self.timeline.seen {
                    self.timeline.add_known(&mut w.holder, since, end.max(since), |s| &mut s.unknown);
                }
            }
        }
    }

    fn word(&mut self, pid: u32, uaddr: u64) -> &mut WordAccount {
        self.words.entry((pid, uaddr)).or_default()
    }
}

/// `words` without repeats, in their order: a futex_waitv may list a word
/// twice, and is still one wait on it.
fn distinct(words: &[u64]) -> Vec<u64> {
    let mut seen = Vec::with_capacity(words.len());
    for &w in words {
        if !seen.contains(&w) {
            seen.push(w);
        }
    }
    seen
}

impl WordAccount {
    /// A wait slept `ns` on the word, its waiter's stack `stack` when
    /// sampled.
    fn slept(&mut self, ns: u64, stack: Option<u32>) {
        self.counts.blocked_ns += ns;
        self.counts.max_blocked_ns = self.counts.max_blocked_ns.max(ns);
        if let Some(n) = stack {
            let s = self.waiter_stacks.entry(n).or_default();
            *s = (s.0 + 1, s.1 + ns);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: u32 = 100;

    #[test]
    fn a_wait_is_paired_with_its_return_and_charged_to_the_waker() {
        let mut a = Account::default();
        a.apply(P, 1, 10, Said::Enter(Call::Wait { uaddr: 0x40 }));
        a.apply(P, 2, 15, Said::Enter(Call::Wait { uaddr: 0x40 }));
        a.apply(P, 3, 30, Said::Enter(Call::Wake { uaddr: 0x40, also: None, counts: true }));
        a.apply(P, 3, 31, Said::Exit(1));
        a.apply(P, 1, 35, Said::Exit(0));
        a.apply(P, 2, 40, Said::Exit(-EAGAIN));
        let w = &a.words[&(P, 0x40)];
        assert_eq!((w.counts.waits, w.counts.woken, w.counts.eagain), (2, 1, 1));
        assert_eq!((w.counts.blocked_ns, w.counts.max_blocked_ns), (25, 25), "the EAGAIN did not sleep");
        assert_eq!((w.counts.wake_calls, w.counts.woke), (1, 1));
        assert_eq!(w.wakers, HashMap::from([(3, 1)]));
        assert_eq!(a.calls[&P], 3);
    }

    #[test]
    fn a_woken_waits_time_splits_into_the_wakers_states_then_waking() {
        let mut a = Account::default();
        a.switch(3, 0, false, false); // the holder runs
        a.apply(P, 1, 10, Said::Enter(Call::Wait { uaddr: 0x40 }));
        a.switch(1, 11, true, false); // the waiter sleeps, in its futex wait
        a.switch(3, 20, true, true); // the holder is preempted
        a.switch(3, 25, false, false);
        a.apply(P, 3, 30, Said::Enter(Call::Wake { uaddr: 0x40, also: None, counts: true }));
        a.apply(P, 3, 31, Said::Exit(1));
        a.switch(1, 34, false, false);
        a.apply(P, 1, 35, Said::Exit(0));
        a.apply(P, 2, 36, Said::Enter(Call::Wait { uaddr: 0x40 }));
        a.apply(P, 2, 46, Said::Exit(-ETIMEDOUT));
        // A wake that entered just before a wait did, and woke it.
        a.apply(P, 3, 50, Said::Enter(Call::Wake { uaddr: 0x40, also: None, counts: true }));
        a.apply(P, 2, 51, Said::Enter(Call::Wait { uaddr: 0x40 }));
        a.apply(P, 3, 52, Said::Exit(1));
        a.apply(P, 2, 53, Said::Exit(0));
        let h = &a.words[&(P, 0x40)].holder;
        assert_eq!((h.running, h.preempted, h.waking, h.unknown), (10 + 5, 5, 5 + 2, 10));
        assert_eq!(a.words[&(P, 0x40)].wakers, HashMap::from([(3, 2)]));
        assert!(h.blocked.is_empty());
        assert_eq!(h.total(), a.words[&(P, 0x40)].counts.blocked_ns);
        let mut s = super::Split::default();
        a.timeline.add(&mut s, 1, 12, 34);
        assert_eq!(s.blocked, HashMap::from([(super::super::holders::Cause::Futex(0x40), 22)]));
    }

    #[test]
    fn stacks_join_their_calls_whichever_sample_comes_first() {
        let mut a = Account::default();
        // The waiter's stack sampled just before its entry; the waker's
        // just after; an EAGAIN wait's stack is no sleeping waiter's.
        a.stacked(1, 7);
        a.apply(P, 1, 10_000, Said::Enter(Call::Wait { uaddr: 0x40 }));
        a.apply(P, 2, 10_500, Said::Enter(Call::Wait { uaddr: 0x40 }));
        a.stacked(2, 8);
        a.apply(P, 3, 20_000, Said::Enter(Call::Wake { uaddr: 0x40, also: None, counts: true }));
        a.stacked(3, 9);
        a.apply(P, 2, 20_100, Said::Exit(-EAGAIN));
        a.apply(P, 3, 20_200, Said::Exit(1));
        a.apply(P, 1, 20_300, Said::Exit(0));
        // A stale stack (its call's entry was never seen: the return
        // comes first) joins nothing.
        a.stacked(4, 5);
        a.apply(P, 4, 20_400, Said::Exit(0));
        a.apply(P, 4, 900_000, Said::Enter(Call::Wait { uaddr: 0x40 }));
        a.apply(P, 4, 900_100, Said::Exit(0));
        // A stack applied long before its entry (its copy faulted) is
        // still its call's: nothing but a return could come between.
        a.stacked(5, 6);
        a.apply(P, 5, 1_000_000, Said::Enter(Call::Wait { uaddr: 0x40 }));
        a.apply(P, 5, 1_000_500, Said::Exit(0));
        let w = &a.words[&(P, 0x40)];
        assert_eq!(w.waiter_stacks, HashMap::from([(7, (1, 10_300)), (6, (1, 500))]));
        assert_eq!(w.waker_stacks, HashMap::from([(9, 1)]));
    }

    #[test]
    fn timeouts_interruptions_and_unfinished_waits_are_told_apart() {
        let mut a = Account::default();
        a.apply(P, 1, 0, Said::Enter(Call::Wait { uaddr: 0x8 }));
        a.apply(P, 1, 5, Said::Exit(-ETIMEDOUT));
        a.apply(P, 1, 6, Said::Enter(Call::Wait { uaddr: 0x8 }));
        a.apply(P, 1, 7, Said::Exit(-4));
        a.apply(P, 2, 8, Said::Enter(Call::Wait { uaddr: 0x8 }));
        a.apply(P, 9, 9, Said::Exit(0)); // entered before the view began
        a.finish(100);
        let c = a.words[&(P, 0x8)].counts;
        assert_eq!((c.waits, c.timeouts, c.interrupted, c.unfinished, c.woken), (3, 1, 1, 1, 0));
        assert_eq!(c.blocked_ns, 5 + 1 + 92);
        assert_eq!(a.orphan_returns, 1);
    }

    #[test]
    fn a_waitv_waits_on_each_word_and_is_woken_on_the_one_its_return_names() {
        let mut a = Account::default();
        let waitv = |words: &[u64]| Said::Enter(Call::WaitV { words: words.to_vec() });
        // Woken on its second word (return 1).
        a.stacked(1, 7);
        a.apply(P, 1, 10, waitv(&[0x10, 0x20]));
        a.apply(P, 2, 30, Said::Enter(Call::Wake { uaddr: 0x20, also: None, counts: true }));
        a.apply(P, 2, 31, Said::Exit(1));
        a.apply(P, 1, 40, Said::Exit(1));
        // Timed out, a word listed twice; then EAGAIN; then one still in.
        a.apply(P, 1, 50, waitv(&[0x10, 0x10, 0x20]));
        a.stacked(1, 8);
        a.apply(P, 1, 60, Said::Exit(-ETIMEDOUT));
        a.apply(P, 1, 70, waitv(&[0x20, 0x10]));
        a.apply(P, 1, 71, Said::Exit(-EAGAIN));
        a.apply(P, 1, 80, waitv(&[0x10]));
        // Unread (a per-thread event): counted, on no word.
        a.apply(P, 3, 85, waitv(&[]));
        a.apply(P, 3, 86, Said::Exit(-ETIMEDOUT));
        a.finish(100);
        let (x, y) = (a.words[&(P, 0x10)].counts, a.words[&(P, 0x20)].counts);
        assert_eq!(
            (x.waits, x.woken, x.ended_elsewhere, x.timeouts, x.eagain, x.unfinished),
            (4, 0, 1, 1, 1, 1)
        );
        assert_eq!(
            (y.waits, y.woken, y.ended_elsewhere, y.timeouts, y.eagain, y.unfinished),
            (3, 1, 0, 1, 1, 0)
        );
        assert_eq!((x.blocked_ns, y.blocked_ns), (30 + 10 + 20, 30 + 10));
        assert_eq!(a.words[&(P, 0x20)].wakers, HashMap::from([(2, 1)]));
        // Each sampled call's stack counts once: on the word woken, else
        // the first.
        assert_eq!(a.words[&(P, 0x20)].waiter_stacks, HashMap::from([(7, (1, 30))]));
        assert_eq!(a.words[&(P, 0x10)].waiter_stacks, HashMap::from([(8, (1, 10))]));
        assert!(a.words[&(P, 0x10)].wakers.is_empty());
        assert_eq!((a.waitv[&P], a.waitv_unread[&P]), (5, 1));
        for c in [x, y] {
            assert_eq!(
                c.waits,
                c.woken + c.ended_elsewhere + c.timeouts + c.eagain + c.interrupted + c.unfinished
            );
        }
    }

    #[test]
    fn a_requeue_wakes_on_one_word_and_moves_to_another_and_processes_are_apart() {
        let mut a = Account::default();
        a.apply(P, 1, 0, Said::Enter(Call::Wake { uaddr: 0x10, also: Some(0x20), counts: true }));
        a.apply(P, 1, 1, Said::Exit(3));
        a.apply(P + 1, 1, 2, Said::Enter(Call::Wait { uaddr: 0x10 }));
        assert_eq!(a.words[&(P, 0x10)].counts.woke, 3);
        assert_eq!(a.words[&(P, 0x20)].counts.wake_calls, 1);
        assert_eq!(a.words[&(P + 1, 0x10)].counts.waits, 1);
        assert_eq!(a.words[&(P, 0x10)].counts.waits, 0);
    }
}
