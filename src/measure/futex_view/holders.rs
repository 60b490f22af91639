//! What the thread that ended a futex wait was doing while the waiter
//! slept: for a lock, the releasing holder, so the split says whose fault
//! the wait was. Each followed thread's time is a sequence of states, from
//! the kernel's context-switch records (in, out, out while still runnable)
//! and, for a thread that went to sleep, what it slept in: the futex word
//! of a futex wait it was in (a chain: the holder itself waiting on a
//! second lock), else the syscall its kernel stack names at the switch.
//!
//! A wait from entry to return splits into the holder's states up to the
//! wake call that ended it (running, preempted, blocked by cause, not
//! known), then "waking": the holder had let go and the waiter had not yet
//! run. A blocked holder counts as blocked until it runs again, including
//! any time it waited for a CPU after its wake-up (the kernel's wake-up of
//! a thread is not seen per thread, only its return to a CPU).
//!
//! Where the switches are followed in windows (`windows`), a thread's
//! state when a window opens is read from /proc ([`Timeline::observed`]):
//! its state letter and, asleep, its kernel stack. Without that, a holder
//! asleep for the whole window (a thread parked in io_uring_enter) could
//! not be told from one running all along.

use std::collections::{HashMap, HashSet, VecDeque};

/// What a thread was doing from one moment on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Doing {
    /// On a CPU.
    Running,
    /// Off its CPU, still runnable: preempted.
    Preempted,
    /// Off its CPU, asleep.
    Blocked(Cause),
}

/// Why a thread slept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cause {
    /// In a futex wait on this word of its process.
    Futex(u64),
    /// In the kernel for this reason ([`Timeline::reason`]: a syscall's
    /// name, "page fault", ...).
    Kernel(u32),
    /// Nothing said why.
    Unknown,
}

/// A thread's state as /proc showed it, when a window opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Observed {
    /// On a CPU or waiting for one (`R`): which, its next switch says.
    Runnable,
    /// Asleep, for this reason ([`Timeline::number`]), if its kernel
    /// stack could be read.
    Asleep(Option<u32>),
}

/// How long a wait's holder spent in each state, ns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Split {
    /// Holder on a CPU.
    pub running: u64,
    /// Holder preempted.
    pub preempted: u64,
    /// Holder asleep, by cause.
    pub blocked: HashMap<Cause, u64>,
    /// The holder had woken the waiter, which had not yet returned.
    pub waking: u64,
    /// No holder known (the wait timed out, was interrupted, or no wake
    /// was seen), or the holder's state then was not seen.
    pub unknown: u64,
    /// The wait's time while the switches were not followed (the
    /// sampling rule, `windows`): not split. The other parts are all of
    /// the followed time, so their shares of it estimate the whole.
    pub unsampled: u64,
}

impl Split {
    /// All of it, ns.
    pub fn total(&self) -> u64 {
        self.running
            + self.preempted
            + self.blocked.values().sum::<u64>()
            + self.waking
            + self.unknown
            + self.unsampled
    }
}

/// How many state changes a thread keeps: older ones are dropped, and a
/// wait reaching back before the oldest kept counts that part as not known.
const KEEP: usize = 1 << 16;

#[derive(Debug, Default)]
struct History {
    changes: VecDeque<(u64, Doing)>,
    /// Whether changes were dropped (so the time before the first kept is
    /// not known even if the thread existed).
    trimmed: bool,
}

/// Every followed thread's states, and the kernel's reasons for sleeping.
#[derive(Debug, Default)]
pub struct Timeline {
    threads: HashMap<u32, History>,
    /// Each thread's reason at its last switch-out sample, not yet used by
    /// its switch record.
    said: HashMap<u32, u32>,
    /// Reasons by number.
    reasons: Vec<String>,
    numbers: HashMap<String, u32>,
    /// Whether the switches are followed (else the split is not measured).
    pub seen: bool,
    /// When they were not followed, in order: from, to (u64::MAX while
    /// still not).
    gaps: Vec<(u64, u64)>,
    /// Threads whose last state is an [`Observed::Runnable`], taken as
    /// running until a switch says otherwise.
    runnable: HashSet<u32>,
}

impl Timeline {
    /// The kernel's reason for sleeping, by its number in a [`Cause`].
    pub fn reason(&self, n: u32) -> &str {
        self.reasons.get(n as usize).map_or("?", String::as_str)
    }

    /// The number of a reason for sleeping (the same for the same text).
    pub fn number(&mut self, reason: &str) -> u32 {
        match self.numbers.get(reason) {
            Some(&n) => n,
            None => {
                let n = self.reasons.len() as u32;
                self.reasons.push(reason.to_string());
                self.numbers.insert(reason.to_string(), n);
                n
            }
        }
    }

    /// Notes why thread `tid` is about to sleep (a [`number`](Self::number)),
    /// from its switch-out's kernel stack; the switch record that follows
    /// uses it.
    pub fn sleeps_in(&mut self, tid: u32, reason: u32) {
        self.said.insert(tid, reason);
    }

    /// Thread `tid` came to a CPU (`out` false) or left one at `time`;
    /// `futex`: the word of the futex wait it is in, if any.
    pub fn switch(&mut self, tid: u32, time: u64, out: bool, preempted: bool, futex: Option<u64>) {
        self.seen = true;
        let said = self.said.remove(&tid);
        let doing = match (out, preempted) {
            (false, _) => Doing::Running,
            (true, true) => Doing::Preempted,
            (true, false) => Doing::Blocked(asleep_in(futex, said)),
        };
        if self.runnable.remove(&tid) && !out {
            // Runnable when observed, and it came to a CPU since: it was
            // waiting for one.
            if let Some(last) = self.threads.get_mut(&tid).and_then(|h| h.changes.back_mut()) {
                last.1 = Doing::Preempted;
            }
        }
        self.push(tid, time, doing);
    }

    /// Thread `tid` was seen in /proc at `time` as `state`; `futex`: the
    /// word of the futex wait it is in, if any (which names its sleep
    /// better than its kernel stack).
    pub fn observed(&mut self, tid: u32, time: u64, state: Observed, futex: Option<u64>) {
        let doing = match state {
            Observed::Runnable => {
                self.runnable.insert(tid);
                Doing::Running
            }
            Observed::Asleep(said) => {
                self.runnable.remove(&tid);
                Doing::Blocked(asleep_in(futex, said))
            }
        };
        self.push(tid, time, doing);
    }

    fn push(&mut self, tid: u32, time: u64, doing: Doing) {
        let h = self.threads.entry(tid).or_default();
        if h.changes.len() == KEEP {
            h.changes.pop_front();
            h.trimmed = true;
        }
        h.changes.push_back((time, doing));
    }

    /// The switches are not followed from `at` (any recorded later are
    /// ones in flight then).
    pub fn unfollowed_from(&mut self, at: u64) {
        if self.gaps.last().is_none_or(|g| g.1 != u64::MAX) {
            self.gaps.push((at, u64::MAX));
        }
    }

    /// They are followed again from `at` (every switch after it is
    /// recorded).
    pub fn followed_from(&mut self, at: u64) {
        if let Some(g) = self.gaps.last_mut().filter(|g| g.1 == u64::MAX) {
            g.1 = at.max(g.0);
        }
    }

    /// Adds to `split` what thread `tid` did from `from` to `to`: where
    /// the switches were not followed, to `unsampled`.
    pub fn add(&self, split: &mut Split, tid: u32, from: u64, to: u64) {
        self.spans(split, from, to, |split, a, b| self.add_followed(split, tid, a, b));
    }

    /// Adds `to - from`, known without the switches (a wait's waking, or a
    /// wait no holder ended), to the part of `split` that `part` picks,
    /// but where the switches were not followed to `unsampled`, like the
    /// holder's states: every share is then of the same sampled time.
    pub fn add_known(&self, split: &mut Split, from: u64, to: u64, part: fn(&mut Split) -> &mut u64) {
        self.spans(split, from, to, |split, a, b| *part(split) += b - a);
    }

    /// Calls `inside` for each followed span of `from..to`, and adds the
    /// rest to `split.unsampled`.
    fn spans(&self, split: &mut Split, from: u64, to: u64, mut inside: impl FnMut(&mut Split, u64, u64)) {
        let mut at = from;
        let first = self.gaps.partition_point(|g| g.1 <= from);
        for &(start, end) in &self.gaps[first..] {
            if start >= to {
                break;
            }
            if at < start {
                inside(split, at, start);
            }
            let until = end.min(to);
            if until > at {
                split.unsampled += until - at.max(start);
                at = until;
            }
        }
        if at < to {
            inside(split, at, to);
        }
    }

    /// The window of followed time that holds `at`: from the end of the
    /// gap before it (0), to the start of the one after (u64::MAX).
    fn window(&self, at: u64) -> (u64, u64) {
        let i = self.gaps.partition_point(|g| g.1 <= at);
        let since = if i > 0 { self.gaps[i - 1].1 } else { 0 };
        (since, self.gaps.get(i).map_or(u64::MAX, |g| g.0))
    }

    /// [`add`](Self::add) within one window of followed time.
    fn add_followed(&self, split: &mut Split, tid: u32, from: u64, to: u64) {
        if to <= from {
            return;
        }
        let Some(h) = self.threads.get(&tid) else {
            split.unknown += to - from;
            return;
        };
        let (since, until) = self.window(from);
        // The last change at or before `from` in this window; else, when
        // its next change in the window is a switch-out, it was running
        // (no switch-in was missed: none was recorded since the window
        // opened, nor dropped); else not known.
        let first_after = h.changes.partition_point(|&(t, _)| t <= from);
        let mut at = from;
        let mut doing = match first_after {
            i if i > 0 && h.changes[i - 1].0 >= since => Some(h.changes[i - 1].1),
            0 if h.trimmed => None,
            i => h
                .changes
                .get(i)
                .filter(|&&(t, next)| t < until && next != Doing::Running)
                .map(|_| Doing::Running),
        };
        for &(t, next) in h.changes.range(first_after..) {
            if t >= to {
                break;
            }
            charge(split, doing, t - at);
            (at, doing) = (t, Some(next));
        }
        charge(split, doing, to - at);
    }
}

/// Why a thread sleeps: in a futex wait on `futex`, else for the reason
/// `said`, else not known.
fn asleep_in(futex: Option<u64>, said: Option<u32>) -> Cause {
    match (futex, said) {
        (Some(word), _) => Cause::Futex(word),
        (None, Some(n)) => Cause::Kernel(n),
        (None, None) => Cause::Unknown,
    }
}

fn charge(split: &mut Split, doing: Option<Doing>, ns: u64) {
    match doing {
        Some(Doing::Running) => split.running += ns,
        Some(Doing::Preempted) => split.preempted += ns,
        Some(Doing::Blocked(c)) => *split.blocked.entry(c).or_default() += ns,
        None => split.unknown += ns,
    }
}

/// The kernel's reason for sleeping, from its stack (innermost first, by
/// symbol): the syscall it is in, a page fault, else its innermost frame
/// outside the scheduler.
pub fn reason<'a>(frames: impl IntoIterator<Item = &'a str> + Clone) -> String {
    const SYSCALL: [&str; 4] = ["__x64_sys_", "__ia32_sys_", "__do_sys_", "__se_sys_"];
    for f in frames.clone() {
        if let Some(name) = SYSCALL.iter().find_map(|p| f.strip_prefix(p)) {
            return name.to_string();
        }
        if f.ends_with("exc_page_fault") {
            return "page fault".into();
        }
    }
    let scheduler =
        |f: &&str| f.contains("schedule") || f.starts_with("__traceiter") || f.starts_with("perf_");
    match frames.into_iter().find(|f| !scheduler(f)) {
        Some(f) => format!("kernel: {f}"),
        None => "kernel".into(),
    }
}

/// The kernel's symbols, for naming a switch's stack: /proc/kallsyms,
/// sorted by address (empty when they are hidden: kptr_restrict, or not
/// root).
#[derive(Debug, Default)]
pub struct KernelSymbols(Vec<(u64, String)>);

impl KernelSymbols {
    /// Reads /proc/kallsyms; text symbols only.
    pub fn read() -> Self {
        let text = std::fs::read_to_string("/proc/kallsyms").unwrap_or_default();
        Self::parse(&text)
    }

    fn parse(text: &str) -> Self {
        let mut syms: Vec<(u64, String)> = text
            .lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let (addr, kind, name) = (f.next()?, f.next()?, f.next()?);
                let addr = u64::from_str_radix(addr, 16).ok().filter(|&a| a != 0)?;
                matches!(kind, "t" | "T").then(|| (addr, name.to_string()))
            })
            .collect();
        syms.sort_unstable();
        Self(syms)
    }

    /// Whether any symbol could be read.
    pub fn known(&self) -> bool {
        !self.0.is_empty()
    }

    /// The symbol holding `addr`.
    pub fn name(&self, addr: u64) -> Option<&str> {
        let i = self.0.partition_point(|(a, _)| *a <= addr);
        (i > 0).then(|| self.0[i - 1].1.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_splits_by_the_holders_states_in_its_window() {
        let mut t = Timeline::default();
        t.switch(7, 100, false, false, None); // running from 100
        t.switch(7, 150, true, true, None); // preempted at 150
        t.switch(7, 170, false, false, None); // back at 170
        let nap = t.number("clock_nanosleep");
        t.sleeps_in(7, nap);
        t.switch(7, 200, true, false, None); // asleep at 200
        t.switch(7, 260, false, false, None);
        t.switch(7, 300, true, false, Some(0x40)); // in a futex wait
        let mut s = Split::default();
        t.add(&mut s, 7, 120, 320);
        assert_eq!((s.running, s.preempted, s.unknown), (30 + 30 + 40, 20, 0));
        let nap = Cause::Kernel(nap);
        assert_eq!(t.reason(0), "clock_nanosleep");
        assert_eq!(s.blocked, HashMap::from([(nap, 60), (Cause::Futex(0x40), 20)]));
        assert_eq!(s.total(), 200);
        let mut before = Split::default();
        t.add(&mut before, 7, 50, 110);
        assert_eq!((before.unknown, before.running), (50, 10), "before its first switch: not known");
        let mut stranger = Split::default();
        t.add(&mut stranger, 8, 0, 10);
        assert_eq!(stranger.unknown, 10);
    }

    #[test]
    fn time_the_switches_were_not_followed_is_not_split() {
        let mut t = Timeline::default();
        t.switch(7, 100, false, false, None); // running from 100
        t.unfollowed_from(200);
        t.switch(7, 205, true, true, None); // in flight as the gap began
        t.followed_from(300);
        t.switch(7, 350, true, true, None); // a switch-out: running since 300
        t.switch(7, 400, false, false, None);
        t.unfollowed_from(500);
        t.unfollowed_from(520); // already not followed: the same gap
        t.followed_from(600);
        t.switch(7, 650, false, false, None); // a switch-in: off its CPU before
        let mut s = Split::default();
        t.add(&mut s, 7, 150, 700);
        assert_eq!(s.running, 50 + 50 + 100 + 50);
        assert_eq!((s.preempted, s.unsampled, s.unknown), (50, 200, 50));
        assert_eq!(s.total(), 550);
        let mut inside = Split::default();
        t.add(&mut inside, 7, 210, 290);
        assert_eq!((inside.unsampled, inside.total()), (80, 80), "wholly in a gap");
        t.unfollowed_from(800);
        let mut open = Split::default();
        t.add(&mut open, 7, 700, 900);
        assert_eq!((open.running, open.unsampled), (100, 100), "a gap still open");
        let mut waking = Split::default();
        t.add_known(&mut waking, 450, 650, |s| &mut s.waking);
        assert_eq!((waking.waking, waking.unsampled), (100, 100), "known time is sampled alike");
    }

    #[test]
    fn a_state_observed_as_a_window_opens_holds_until_the_next_switch() {
        let mut t = Timeline::default();
        let nap = t.number("clock_nanosleep");
        for tid in [1, 2, 3, 4] {
            t.switch(tid, 10, false, false, None);
        }
        t.unfollowed_from(100);
        t.followed_from(200);
        t.observed(1, 200, Observed::Asleep(Some(nap)), None); // asleep all window
        t.observed(2, 200, Observed::Asleep(None), Some(0xbeef)); // in a futex wait
        t.observed(3, 200, Observed::Runnable, None);
        t.switch(3, 250, false, false, None); // came to a CPU: it was waiting
        t.observed(4, 200, Observed::Runnable, None);
        t.switch(4, 260, true, false, None); // left one: it was running
        let split = |tid| {
            let mut s = Split::default();
            t.add(&mut s, tid, 200, 300);
            s
        };
        assert_eq!(split(1).blocked.get(&Cause::Kernel(nap)), Some(&100));
        assert_eq!(split(2).blocked.get(&Cause::Futex(0xbeef)), Some(&100));
        assert_eq!((split(3).preempted, split(3).running), (50, 50));
        assert_eq!((split(4).running, split(4).blocked.get(&Cause::Unknown)), (60, Some(&40)));
        for tid in [1, 2, 3, 4] {
            assert_eq!(split(tid).unknown, 0, "thread {tid}");
        }
    }

    #[test]
    fn a_reason_said_at_a_switch_is_used_once() {
        let mut t = Timeline::default();
        let fsync = t.number("fsync");
        assert_eq!(t.number("fsync"), fsync);
        t.sleeps_in(3, fsync);
        t.switch(3, 10, true, false, None);
        t.switch(3, 20, false, false, None);
        t.switch(3, 30, true, false, None);
        let mut s = Split::default();
        t.add(&mut s, 3, 10, 40);
        assert_eq!(s.blocked, HashMap::from([(Cause::Kernel(fsync), 10), (Cause::Unknown, 10)]));
        assert_eq!(s.running, 10);
    }

    #[test]
    fn the_syscall_is_read_from_the_kernel_stack() {
        let stack =
            ["__schedule", "schedule", "do_nanosleep", "hrtimer_nanosleep", "__x64_sys_clock_nanosleep"];
        assert_eq!(reason(stack.iter().copied()), "clock_nanosleep");
        assert_eq!(reason(["schedule", "do_wait", "__do_sys_wait4"].iter().copied()), "wait4");
        assert_eq!(
            reason(["schedule", "folio_wait", "handle_mm_fault", "exc_page_fault"].iter().copied()),
            "page fault"
        );
        assert_eq!(reason(["__schedule", "schedule", "do_exit"].iter().copied()), "kernel: do_exit");
    }

    #[test]
    fn kernel_symbols_hold_the_addresses_up_to_the_next() {
        let k = KernelSymbols::parse(
            "ffffffff81000000 T _stext\nffffffff81000100 t do_nanosleep\nffffffff81000200 D some_data\n\
             0000000000000000 T hidden\n",
        );
        assert_eq!(k.name(0xffffffff81000150), Some("do_nanosleep"));
        assert_eq!(k.name(0xffffffff81000010), Some("_stext"));
        assert_eq!(k.name(0x10), None);
        assert!(!KernelSymbols::parse("0000000000000000 T hidden\n").known());
    }
}
