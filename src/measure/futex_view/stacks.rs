//! The futex calls' user stacks: a second sampler of the same futex
//! entry tracepoints, whose samples carry the caller's registers and the
//! top [`STACK_BYTES`] of its stack, copied out of the buffers before the
//! calls' buffers are read and unwound (`unwind`) right after, while the
//! process and its map are there, or with the kernel's records of its
//! mappings, read in between, when it has exited.
//!
//! Copying a stack costs the program more than the view's other samples
//! (the kernel copies [`STACK_BYTES`] per call, and contend unwinds it on
//! a CPU the program could use), so the copies are kept under a budget of
//! stacks a second: a token bucket, refilled at the budget's rate up to a
//! tenth of a second's worth, pays for each stack read; when it is empty
//! the stack events are switched off (PERF_EVENT_IOC_DISABLE, which
//! reaches the copies inherited by every thread) until it is half full
//! again. A program that makes fewer calls than the budget has every
//! call's stack; a busier one has the first calls of each refill, and the
//! view says how many of the calls had theirs.

use super::procfs::Mapping;
use super::unwind::Unwinding;
use locks::sys::perf_record::UserStack;
use locks::sys::perf_ring::{Sample, Stamped, Tracepoint, TracepointSampler, Watch};
use std::collections::HashMap;

/// How much of the top of a user stack each sample copies: perf's own
/// default (`perf record --call-graph dwarf`), deep enough for the lock's
/// frames and their callers' in most programs.
pub const STACK_BYTES: u32 = 8192;

/// Each CPU's buffer of stacks: 1 MiB, 127 stacks of [`STACK_BYTES`]
/// between two drains. A burst beyond it is dropped by the kernel
/// (counted) before any copy: the buffer bounds the cost too.
const PAGES: usize = 256;

/// What each stack sample carries besides its call.
const WATCH: Watch = Watch { tasks: false, switches: false, kernel_stacks: false, user_stacks: STACK_BYTES };

/// The budget when none is given: stacks a second.
pub const PER_S: u64 = 1000;

/// How many seconds' worth of budget the bucket holds.
const BURST_S: f64 = 0.1;

/// How the view sampled user stacks: what the stack sampler did, as
/// exported (`model::futex_word` re-exports it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct FutexStackSampling {
    /// Stacks a second at most (`--futex-stacks`).
    pub budget_per_s: u64,
    /// Bytes of each stack copied, from its stack pointer up.
    pub stack_bytes: u32,
    /// Futex calls read with their stack.
    pub read: u64,
    /// Of those, the ones unwound to at least one frame in a module.
    pub unwound: u64,
    /// Stack samples the kernel dropped (its buffers were full).
    pub lost: u64,
    /// How long the stack sampling was off, the budget spent, ns.
    pub off_ns: u64,
}

/// A stack sample as [`StackSampler::take`] copied it: whose, when, what
/// the caller made of its call, and the user registers (ip, sp, bp) and
/// stack bytes (None: not in user space).
pub struct Taken<T> {
    /// The process.
    pub pid: u32,
    /// The thread.
    pub tid: u32,
    /// When, CLOCK_MONOTONIC ns.
    pub time: u64,
    /// What `keep` made of it.
    pub what: T,
    user: Option<(u64, u64, u64, Vec<u8>)>,
}

/// The stack sampler and its budget.
pub struct StackSampler {
    sampler: TracepointSampler,
    /// Tokens: stacks that may still be read.
    tokens: f64,
    /// When the bucket was last filled, and when the events went off
    /// (None: on).
    filled_at: u64,
    off_since: Option<u64>,
    /// The samples paid for so far.
    paid: u64,
    /// The unwinder and the stacks it made.
    pub unwinding: Unwinding,
    /// What it did.
    pub stats: FutexStackSampling,
}

impl StackSampler {
    /// Samples the stacks of `entries` (the futex calls' entry
    /// tracepoints) on thread `pid` (0: the calling thread) and the tasks
    /// it starts, on `cpus`, at most `per_s` a second, from `now` (ns).
    pub fn open(
        entries: &[Tracepoint],
        pid: i32,
        cpus: Vec<i32>,
        per_s: u64,
        now: u64,
    ) -> std::io::Result<Self> {
        let sampler = TracepointSampler::open_all(entries, Stamped::Yes, WATCH, PAGES, pid, cpus)?;
        Ok(Self::with(sampler, per_s, now))
    }

    /// Samples the stacks of what BPF programs send (the in-kernel
    /// filter's routes: `sampler()` is where they send), on `cpus`, under
    /// the same budget.
    pub fn open_output(cpus: &[i32], per_s: u64, now: u64) -> std::io::Result<Self> {
        let sampler = TracepointSampler::open_output(Stamped::Yes, WATCH, PAGES, cpus)?;
        Ok(Self::with(sampler, per_s, now))
    }

    /// Where the stacks are sampled.
    pub fn sampler(&self) -> &TracepointSampler {
        &self.sampler
    }

    fn with(sampler: TracepointSampler, per_s: u64, now: u64) -> Self {
        Self {
            sampler,
            tokens: per_s as f64 * BURST_S,
            filled_at: now,
            off_since: None,
            paid: 0,
            unwinding: Unwinding::default(),
            stats: FutexStackSampling {
                budget_per_s: per_s,
                stack_bytes: STACK_BYTES,
                ..FutexStackSampling::default()
            },
        }
    }

    /// Also samples thread `tid` of a followed process (as
    /// `TracepointSampler::add_thread`), and in the state the others are.
    pub fn add_thread(&mut self, tid: i32) -> std::io::Result<()> {
        self.sampler.add_thread(tid)?;
        if self.off_since.is_some() {
            self.sampler.set_enabled(false)?;
        }
        Ok(())
    }

    /// Reads the stacks written since the last drain and copies those
    /// `keep` says what they are (None: not wanted), then spends the
    /// budget at `now` (ns), switching the events off or on. They are
    /// unwound by [`unwind`](Self::unwind) once the calls' buffers, and
    /// with them the kernel's records of the mappings made before these
    /// stacks were sampled, have been read: a program that loaded a
    /// library and exited between the two reads is unwound with the
    /// records, which then have the library.
    pub fn take<T>(&mut self, now: u64, mut keep: impl FnMut(&Sample<'_>) -> Option<T>) -> Vec<Taken<T>> {
        let (mut taken, stats) = (Vec::new(), &mut self.stats);
        self.sampler.drain(|record| {
            if let locks::sys::perf_ring::Record::Sample(s) = record {
                stats.read += 1;
                if let Some(what) = keep(&s) {
                    let user = s.user.map(|u| (u.ip, u.sp, u.bp, u.stack.to_vec()));
                    taken.push(Taken { pid: s.pid, tid: s.tid, time: s.time, what, user });
                }
            }
        });
        self.stats.lost = self.sampler.lost;
        self.spend(now);
        taken
    }

    /// Unwinds what [`take`](Self::take) copied, handing each to `f` with
    /// its stack's number (None: it could not be unwound), with the
    /// processes' maps, or `recorded` (the kernel's records of their
    /// mappings) for one gone; `now` is when the maps are read (ns).
    pub fn unwind<T>(
        &mut self,
        now: u64,
        taken: Vec<Taken<T>>,
        recorded: &HashMap<u32, Vec<Mapping>>,
        mut f: impl FnMut(Taken<T>, Option<u32>),
    ) {
        for t in taken {
            let maps = recorded.get(&t.pid).map_or(&[][..], |m| m.as_slice());
            let stack = t.user.as_ref().and_then(|(ip, sp, bp, stack)| {
                let user = UserStack { ip: *ip, sp: *sp, bp: *bp, stack };
                self.unwinding.unwind(t.pid, t.time, now, &user, maps)
            });
            self.stats.unwound += stack.is_some() as u64;
            f(t, stack);
        }
    }

    /// Refills the bucket to `now`, pays for what was read, and switches
    /// the events accordingly.
    fn spend(&mut self, now: u64) {
        let per_s = self.stats.budget_per_s as f64;
        let elapsed = now.saturating_sub(self.filled_at) as f64 / 1e9;
        self.filled_at = now;
        // What was read since the last pass (a dropped sample was never
        // copied, and costs nothing).
        let spent = (self.stats.read - self.paid) as f64;
        self.paid = self.stats.read;
        self.tokens = (self.tokens + per_s * elapsed).min(per_s * BURST_S) - spent;
        // Off when the bucket is empty, on again once it is half full:
        // each switch is a call on every CPU the program's threads run
        // on, and switching at every drain (a few tokens each) cost the
        // program more than the stacks themselves.
        let off = self.off_since.is_some();
        let empty = if off { self.tokens < per_s * BURST_S / 2.0 } else { self.tokens <= 0.0 };
        if empty == off || self.sampler.set_enabled(!empty).is_err() {
            return;
        }
        match self.off_since.take() {
            Some(since) => self.stats.off_ns += now.saturating_sub(since),
            None => self.off_since = Some(now),
        }
    }

    /// Ends the sampling at `now`: the time off so far is counted.
    pub fn finish(&mut self, now: u64) -> FutexStackSampling {
        if let Some(since) = self.off_since.take() {
            self.stats.off_ns += now.saturating_sub(since);
        }
        self.stats
    }
}
