//! The futex view of `contend run --profile`: every futex word a
//! program's threads slept on or woke, from the kernel's futex syscalls
//! rather than from glibc's pthread functions, so that a lock built on
//! futex directly (InnoDB's srw_lock, Rust's std and parking_lot, GLib's
//! GMutex, a static program's) shows as well as a glibc mutex does.
//! `measure::futex_view` counts; `family::program::futex_words` names the
//! words and joins them to the pthread profile.

use serde::Serialize;

pub use crate::measure::futex_view::account::FutexWordCounts;
pub use crate::measure::futex_view::stacks::FutexStackSampling;

/// A thread whose wake calls ended waits on a word: for a lock, the
/// releasing holder.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FutexWaker {
    /// The thread.
    pub tid: u32,
    /// Its name (comm), as it was when the view first saw it.
    pub comm: String,
    /// Waits on the word that returned woken after one of its wake calls
    /// (the last wake call on the word before the waiter returned).
    pub waits_ended: u64,
}

/// One cause a holder slept in while a word's waiters waited.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct BlockedIn {
    /// The syscall its kernel stack named (`clock_nanosleep`, `fsync`),
    /// `page fault`, `kernel: <function>`, `futex <word's name>` for a
    /// futex wait (a chain: the holder itself waiting on another word), or
    /// `not known`.
    pub cause: String,
    /// For a futex wait, the other word's address (in the same process).
    pub futex_word: Option<u64>,
    /// Waiters' time it covers, ns.
    pub ns: u64,
}

/// What a word's holders did while its waiters slept: each woken wait's
/// time, entry to return, split by the state of the thread whose wake
/// ended it (for a lock, the releasing holder) up to that wake, then
/// `waking_ns` to the waiter's return. Sums to the word's `blocked_ns`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct HolderSplit {
    /// The holder was on a CPU: the section's own length.
    pub running_ns: u64,
    /// The holder was runnable but off its CPU: preempted.
    pub preempted_ns: u64,
    /// The holder was asleep (until it ran again).
    pub blocked_ns: u64,
    /// What it slept in, most first.
    pub blocked_in: Vec<BlockedIn>,
    /// The holder had woken the waiter, which had not yet returned from
    /// the kernel: the hand-off.
    pub waking_ns: u64,
    /// No holder known (the wait timed out, was interrupted or did not end
    /// in the view), or its state then not seen.
    pub unknown_ns: u64,
    /// The wait's time while the switches were not followed (the
    /// sampling rule, [`HolderSampling`]): not split, and left out of the
    /// shares, which are all of the followed time.
    #[serde(default)]
    pub unsampled_ns: u64,
}

impl HolderSplit {
    /// All of it, ns.
    pub fn total_ns(&self) -> u64 {
        self.sampled_ns() + self.unsampled_ns
    }

    /// What was split: all of it but the unsampled time, ns.
    pub fn sampled_ns(&self) -> u64 {
        self.running_ns + self.preempted_ns + self.blocked_ns + self.waking_ns + self.unknown_ns
    }
}

/// When the holders' context switches were followed: in a window at the
/// start of each cycle, which closes once it has read the cycle's share
/// of a budget a second (so all the time for a program under it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct HolderSampling {
    /// Switch records a second, on average, that are followed.
    pub budget_per_s: u64,
    /// The cycle, ms.
    pub cycle_ms: u64,
    /// Share of the view's time the switches were followed, % (rounded).
    pub followed_pct: u32,
    /// The followed threads' switch records a second while followed.
    pub switches_per_s: u64,
}

/// One futex word of one process.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FutexWord {
    /// The process.
    pub pid: u32,
    /// The word's address in it.
    pub address: u64,
    /// What holds the address: the data symbol that contains it and its
    /// module (`stats_lock (prog)`, `sym+0x8 (libx.so)`), or the kind of
    /// memory (`heap`, `stack`, `anonymous memory`, a shared file).
    pub name: String,
    /// Whether it is the first word of a pthread mutex the interposer saw
    /// in the same execution (the profile's row of that address).
    pub pthread_mutex: bool,
    /// What its futex calls did.
    #[serde(flatten)]
    pub counts: FutexWordCounts,
    /// The threads whose wakes ended its waits, most first (three at most).
    pub wakers: Vec<FutexWaker>,
    /// What its holders did while its waiters slept (absent when the
    /// view could not follow the threads' switches).
    pub holder: Option<HolderSplit>,
    /// Where its waiters slept, as code: in the stack that slept longest
    /// on it, the first frame that is the program's own (not the C
    /// library's, a toolchain header's, Rust's std or a lock crate's).
    /// Absent without stacks.
    pub waited_at: Option<String>,
    /// The waiters' user stacks where they slept on it, the longest
    /// blocked first (at most [`STACKS`]).
    pub waiter_stacks: Vec<FutexStack>,
    /// The wakers' user stacks where they woke a waiter of it (for a
    /// lock, where its holder let it go), the most calls first.
    pub waker_stacks: Vec<FutexStack>,
}

/// How many stacks of each side a word lists.
pub const STACKS: usize = 3;

/// A word's name as a sentence says it: a word named by its memory alone
/// (`heap`, `anonymous memory`, a mapped file), which many words share,
/// with its address; one named by a symbol or a module's offset as it is.
pub fn told_apart(name: &str, address: u64) -> String {
    if name.contains(" (") && !name.ends_with("(mapped file)") {
        name.to_string()
    } else {
        format!("{name} {address:#x}")
    }
}

impl FutexWord {
    /// Its name, told apart (see [`told_apart`]).
    pub fn label(&self) -> String {
        told_apart(&self.name, self.address)
    }

    /// Where its wakers woke its waiters (for a lock, where its holders
    /// let it go): the site of its most sampled waker stack.
    pub fn let_go_at(&self) -> Option<&str> {
        first_site(&self.waker_stacks)
    }
}

/// The site of the first of `stacks` (for waiters, where they slept; for
/// wakers, where they woke them).
pub fn first_site(stacks: &[FutexStack]) -> Option<&str> {
    stacks.first().and_then(FutexStack::site_frame)
}

impl FutexStack {
    /// Its site's frame (see [`FutexWord::waited_at`]).
    pub fn site_frame(&self) -> Option<&str> {
        self.frames.get(self.site?).map(String::as_str)
    }
}

/// One user stack of calls on a futex word.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FutexStack {
    /// The calls sampled with it: waits that slept, or wakes that woke.
    pub calls: u64,
    /// For waiters, their time blocked, ns (0 for wakers).
    pub blocked_ns: u64,
    /// Its frames, innermost first, each `function (file:line)` where
    /// DWARF has it, else the symbol, else `module+0xoffset`.
    pub frames: Vec<String>,
    /// The frame that is the program's own (see `waited_at`), by index.
    pub site: Option<usize>,
}

/// The futex view of one execution.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FutexView {
    /// Futex calls of the program's processes seen (futex, futex_wait,
    /// futex_wake, futex_waitv).
    pub calls: u64,
    /// Words with at least one wait or wake.
    pub words_seen: u64,
    /// The words with the longest blocked time, most first (the profile's
    /// --top of them).
    pub words: Vec<FutexWord>,
    /// futex_waitv calls. Their words are in the caller's memory: the
    /// in-kernel filter copies them with the call, and each word counts
    /// the call as a wait (`words`).
    pub waitv_calls: u64,
    /// Of them, those whose words were not read: sampled by per-thread
    /// events (no in-kernel filter), which carry only the array's
    /// address, or the array could not be copied. Counted here only.
    pub waitv_unread: u64,
    /// Samples the kernel could not record (its buffers were full): when
    /// not zero, every count is a lower bound.
    pub lost: u64,
    /// Why the holders' states were not followed, if they were not.
    pub no_split: Option<String>,
    /// How they were sampled in time (absent: all the time, or not at
    /// all).
    pub holder_sampling: Option<HolderSampling>,
    /// Whether the kernel offers rseq time-slice extension (the
    /// environment's `kernel_choices.slice_extension`), for the advice on
    /// preempted holders.
    pub slice_extension: bool,
    /// How the waiters' and wakers' stacks were sampled (absent when
    /// they were not).
    pub stacks: Option<FutexStackSampling>,
    /// Why they were not (turned off, or the kernel refused).
    pub no_stacks: Option<String>,
    /// Why the futex calls were sampled by per-thread events, which cost
    /// each followed thread at every context switch, instead of through
    /// the in-kernel filter of the followed threads (absent: through the
    /// filter).
    pub per_thread: Option<String>,
    /// Where the sampled waits slept, over every word of the program:
    /// the sites whose waits slept longest, most first (at most
    /// [`SITES`]). A lock that parks each waiter on a word of its own
    /// (parking_lot) is many words and one site.
    pub sites: Vec<FutexSite>,
}

/// How many sites a view lists over all its words.
pub const SITES: usize = 5;

/// One site (the first frame of the program's own in a waiter's stack)
/// over every word its sampled waits slept on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FutexSite {
    /// The frame, named as in the stacks.
    pub site: String,
    /// The words its sampled waits slept on.
    pub words: u64,
    /// Its sampled waits that slept.
    pub waits: u64,
    /// Their time blocked, ns.
    pub blocked_ns: u64,
}
