//! Virtual speedup (`CONTEND_RUN_SPEEDUP=0xADDR@PERCENT`, `contend run
//! --what-if`): the critical sections of one mutex are made PERCENT
//! shorter *virtually*, the way Coz (Curtsinger & Berger, SOSP '15) speeds
//! up a line of code: each time that mutex's holder releases it after a
//! section of virtual length h, every other thread owes a pause of
//! h·PERCENT/100, which it serves by busy waiting. Relative to each other the
//! threads then run as if that section had been shorter, and the program's
//! time with the speedup is its measured time minus the pauses everybody
//! owed (`GLOBAL`, reported). No section is lengthened or shortened for
//! real, so a mutex held for tens of ns is not turned into a contended
//! one by the measurement (what the delay method of `delay.rs` does).
//!
//! The bookkeeping, per thread: `L`, the pauses it has served or been
//! excused (ns). A thread's *virtual time* is its real time minus `L`.
//! Its debt is `GLOBAL − L`; it pays when the debt reaches [`PAY_AT`],
//! about a time slice (before it takes a mutex or after it releases one,
//! never inside), by busy waiting ([`pay`] says why not by sleeping).
//!
//! Coz makes a thread pay everything before it wakes another (unlock,
//! signal), so that the woken one can skip what accrued while it slept.
//! Paying that often would pause a thread at nearly every unlock of a
//! mutex released millions of times a second, so here the debt travels
//! with the wake-up instead: a release of a mutex a thread may be asleep
//! on, and every signal of a condition variable, leaves its virtual time
//! in a slot for that address (`VT`), and a thread that takes the mutex or
//! wakes from the wait sets `L = min(L + blocked, now − that virtual
//! time)`: it cannot be virtually earlier than the event that let it go,
//! nor skip more than it really waited. Where no slot is free it falls
//! back to Coz's rule (skip what accrued while blocked). An uncontended
//! lock and unlock read no clock (`acquired` and `releasing` say why
//! that loses little), and of the sped-up mutex's sections only a sample
//! is timed, each standing for as many as it was drawn among
//! (`sampling.rs`: the clock reads inside a short section made the
//! baseline another program).
//!
//! What it cannot see: blocking that does not go through these calls
//! (pthread_join, a pipe, a semaphore) keeps its debt and pays it later,
//! and the last [`PAY_AT`] of a thread's debt may be left unpaid at its
//! exit; both err toward a smaller gain. A recursive mutex's nested
//! acquisitions restart its section.

use crate::sampling;
use libc::{c_int, pthread_mutex_t};
use locks::sys::clock::monotonic_ns;
use std::cell::Cell;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering::Relaxed};

/// The mutex sped up (0: none).
static ADDRESS: AtomicUsize = AtomicUsize::new(0);
/// The speedup, percent of each section.
static PERCENT: AtomicU64 = AtomicU64::new(0);
/// The pause every thread owes in all, ns.
static GLOBAL: AtomicI64 = AtomicI64::new(0);
/// Sections of the mutex ended, and their virtual length in all, ns.
static SECTIONS: AtomicU64 = AtomicU64::new(0);
static SECTION_NS: AtomicU64 = AtomicU64::new(0);
/// What the threads waited to pay, ns.
static PAID_NS: AtomicU64 = AtomicU64::new(0);

/// A debt is paid when it reaches this, ns: about a scheduler time slice.
/// A busy-waiting payer stands for a paused thread only if the scheduler
/// shares the CPUs among it and the others as it would their work, and it
/// shares them by slices of milliseconds: a 20 µs spin runs whole, taking
/// a CPU from a holder that needed it. Measured (6 rounds each, against
/// the real change timed directly): a global mutex's sections halved read
/// 0.899 paying at 20 µs, 0.749 at 4 ms, 0.767 sleeping at 0.5 ms, real
/// 0.740; a striped table's table mutex 0.999, 0.910 and 0.892, real
/// 0.938. What is left unpaid when a thread ends (under 4 ms) makes the
/// execution's time short by that much at most.
pub const PAY_AT: i64 = 4_000_000;

/// Not yet set in this thread.
const UNSET: i64 = i64::MIN;

thread_local! {
    /// This thread's `L` (module doc), UNSET until its first call.
    static LOCAL: Cell<i64> = const { Cell::new(UNSET) };
    /// Its section of the sped-up mutex, if it holds it ([`Nest`]).
    static NEST: Cell<Nest> = const { Cell::new(Nest::OUT) };
}

/// A thread's place with respect to the sped-up mutex's section: the
/// section's own time leaves out the time spent taking and holding other
/// mutexes inside it (a nested mutex's section is its own, and halving
/// the work a section does itself does not halve what a mutex it takes
/// does). Measured on chain.c of the what-if validation, where the outer
/// mutex's section takes the inner one: with the nested time counted,
/// halving the outer section read 0.779 where halving its own work really
/// gave 0.925, and the outer mutex was ranked above the inner one, the
/// other way round from the real changes.
#[derive(Clone, Copy)]
struct Nest {
    /// The thread holds the sped-up mutex.
    holding: bool,
    /// The virtual time at which it took it.
    entered: i64,
    /// Other mutexes being taken or held inside the section.
    depth: u32,
    /// The virtual time the outermost of them began.
    since: i64,
    /// The virtual time spent in them so far.
    nested: i64,
    /// How many sections this one counts for (`sampling.rs`).
    weight: i64,
}

impl Nest {
    const OUT: Nest = Nest { holding: false, entered: 0, depth: 0, since: 0, nested: 0, weight: 0 };
}

/// Before this thread takes `m` (or right after a try-lock took it):
/// inside the sped-up section, another mutex's time begins. True if it
/// did, for [`nest_end`] should the lock fail.
pub fn nest_begin(m: *mut pthread_mutex_t) -> bool {
    let mut n = NEST.with(|c| c.get());
    if !n.holding || m as usize == ADDRESS.load(Relaxed) {
        return false;
    }
    if n.depth == 0 {
        n.since = now() - local();
    }
    n.depth += 1;
    NEST.with(|c| c.set(n));
    true
}

/// After another mutex was released inside the sped-up section, or its
/// lock failed (`begun`: [`nest_begin`] said so): its time ends.
pub fn nest_end(begun: bool) {
    let mut n = NEST.with(|c| c.get());
    if !begun || !n.holding || n.depth == 0 {
        return;
    }
    n.depth -= 1;
    if n.depth == 0 {
        n.nested += now() - local() - n.since;
    }
    NEST.with(|c| c.set(n));
}

/// A section of the sped-up mutex begins: timed from now if the sampler
/// draws it (`sampling.rs`), else not held as a section at all.
fn section_begins() {
    if let Some(weight) = sampling::draw() {
        let v = now() - local();
        NEST.with(|c| c.set(Nest { holding: true, entered: v, weight, ..Nest::OUT }));
    }
}

/// Whether a speedup is asked (the mode's DELAY flag covers both).
#[inline]
pub fn on() -> bool {
    ADDRESS.load(Relaxed) != 0
}

/// Parses `0xADDR@PERCENT` (once, from `mode::decide`).
pub fn parse(spec: &str) -> Result<(), String> {
    let (address, pct) = locks::in_mutex::input::parse_at(spec, "percent")?;
    if pct > 100 {
        return Err(format!("{pct}: not a percent 0..100"));
    }
    ADDRESS.store(address, Relaxed);
    PERCENT.store(pct, Relaxed);
    Ok(())
}

/// What the report says: the percent, the sections ended, their virtual
/// length in all, the pause owed in all and what was waited to pay it, ns.
pub fn totals() -> Option<[u64; 5]> {
    on().then(|| {
        [
            PERCENT.load(Relaxed),
            SECTIONS.load(Relaxed),
            SECTION_NS.load(Relaxed),
            GLOBAL.load(Relaxed).max(0) as u64,
            PAID_NS.load(Relaxed),
        ]
    })
}

/// A forked child starts its own account (its forking thread included).
pub fn clear_in_child() {
    for a in [&SECTIONS, &SECTION_NS, &PAID_NS] {
        a.store(0, Relaxed);
    }
    GLOBAL.store(0, Relaxed);
    LOCAL.with(|l| l.set(UNSET));
    for s in &VT {
        s.0.store(0, Relaxed);
    }
}

fn now() -> i64 {
    monotonic_ns() as i64
}

/// This thread's `L`: a new thread owes nothing.
fn local() -> i64 {
    LOCAL.with(|l| match l.get() {
        UNSET => {
            let g = GLOBAL.load(Relaxed);
            l.set(g);
            g
        }
        v => v,
    })
}

fn set_local(v: i64) {
    LOCAL.with(|l| l.set(v));
}

/// Pays this thread's debt if it reached [`PAY_AT`], by busy waiting on
/// the clock.
///
/// Busy waiting, not sleeping: a pause must stop this thread's progress
/// and nothing else. With more runnable threads than CPUs, a sleeping
/// thread would hand its CPU to the others, which would then run faster
/// than in the program being predicted, and the pause would cost the
/// execution nothing (measured: a mutex's sped-up executions ran no
/// longer than the baseline, and the gain was overstated about
/// twofold). A spinning thread keeps its share of the CPU, as its work
/// would; with a CPU of its own it is simply paused.
pub fn pay() {
    let l = local();
    let debt = GLOBAL.load(Relaxed) - l;
    if debt < PAY_AT {
        return;
    }
    let t = now();
    let mut n = t;
    while n - t < debt {
        std::hint::spin_loop();
        n = now();
    }
    set_local(l + (n - t));
    PAID_NS.fetch_add((n - t) as u64, Relaxed);
}

/// Slots keeping the virtual time of the last release of a mutex, or of
/// the last signal of a condition variable, by address.
const SLOTS: usize = 1 << 13;
/// How far a lookup probes.
const PROBE: usize = 16;
struct Slot(AtomicUsize, AtomicI64);
#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Slot = Slot(AtomicUsize::new(0), AtomicI64::new(i64::MIN));
static VT: [Slot; SLOTS] = [EMPTY; SLOTS];

/// The slot of `address`, claimed if new (None: the probe found none).
fn slot(address: usize) -> Option<&'static AtomicI64> {
    let start = (address >> 3).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (usize::BITS - 13);
    for k in 0..PROBE {
        let s = &VT[(start + k) & (SLOTS - 1)];
        let key = s.0.load(Relaxed);
        if key == address {
            return Some(&s.1);
        }
        if key == 0
            && s.0.compare_exchange(0, address, Relaxed, Relaxed).map_or_else(|k| k == address, |_| true)
        {
            return Some(&s.1);
        }
    }
    None
}

/// Leaves the virtual time of a release or signal at `address`: this
/// thread's, as if it had paid its debt first (Coz pays before every
/// release, so that a thread woken by it owes only what accrued since).
/// Stamped with the debt unpaid, the release would lie in the virtual
/// future, and whoever takes the mutex next would inherit the debt and
/// pay it too (measured: a mutex's pauses were paid about 1.5 times over
/// and its gain read as none where the real change gave 25%).
fn mark(address: usize) {
    if let Some(s) = slot(address) {
        s.store(now() - local().max(GLOBAL.load(Relaxed)), Relaxed);
    }
}

/// After an acquisition or a wake-up: this thread cannot be virtually
/// earlier than the events at `after` (the mutex's release, the signal),
/// and skips at most what it really waited since `blocked` (with the
/// global pause owed when it blocked, for the fallback).
fn caught(after: &[usize], blocked: Option<(i64, i64)>) {
    let t = now();
    let l = local();
    let mut bound = match blocked {
        Some((since, _)) => l + (t - since),
        None => l,
    };
    let mut known = false;
    for &a in after {
        if let Some(v) = slot(a).map(|s| s.load(Relaxed)).filter(|&v| v != i64::MIN) {
            bound = bound.min(t.saturating_sub(v));
            known = true;
        }
    }
    match blocked {
        // Coz's rule where nothing was recorded: skip what accrued while
        // this thread was blocked.
        Some((_, global)) if !known => set_local(l + (GLOBAL.load(Relaxed) - global).max(0)),
        _ => set_local(bound),
    }
}

/// Where a blocking call began: the time and the pause owed then.
pub fn blocking() -> (i64, i64) {
    (now(), GLOBAL.load(Relaxed))
}

/// After `m` was taken (`blocked`: since when, if the thread waited for
/// it): the debt it inherits; the start of a sped-up section.
///
/// An acquisition that did not wait, by a thread not ahead of the global
/// account (`L ≤ GLOBAL`, the usual case), reads no clock: the release
/// it follows left `t_rel − GLOBAL_rel` at most, and `GLOBAL` grows no
/// faster than real time (the sped-up sections are serialized by their
/// mutex, and each adds at most its own length), so the bound `now −
/// that` is at least `GLOBAL ≥ L` and `caught` would change nothing.
/// (Off by at most one section: one that began before the release and
/// ended after it adds its whole share at once.) Two clock reads per
/// lock and unlock were most of what the accounts cost a program of
/// short sections.
pub fn acquired(m: *mut pthread_mutex_t, blocked: Option<(i64, i64)>) {
    if blocked.is_some() || local() > GLOBAL.load(Relaxed) {
        caught(&[m as usize], blocked);
    }
    if m as usize == ADDRESS.load(Relaxed) {
        section_begins();
    }
}

/// Before `m` is released: the end of a sped-up section (everyone else
/// owes its share, this thread is excused it), then the release's virtual
/// time, where a thread may be asleep on `m` (`asleep`): a release that
/// wakes nobody bounds no one who waited (a thread that blocks later is
/// let go by a later release, which leaves its own time), and a thread
/// that did not wait skips the bound (`acquired`).
pub fn releasing(m: *mut pthread_mutex_t, asleep: bool) {
    if m as usize == ADDRESS.load(Relaxed) {
        let n = NEST.with(|c| c.replace(Nest::OUT));
        if n.holding {
            let l = local();
            let v = now() - l;
            // A mutex taken inside and still held (hand over hand) counts
            // until now.
            let nested = n.nested + if n.depth > 0 { v - n.since } else { 0 };
            let h = (v - n.entered - nested).max(0);
            sampling::timed(h);
            // A timed section stands for `weight` sections like it.
            let d = h * n.weight * PERCENT.load(Relaxed) as i64 / 100;
            GLOBAL.fetch_add(d, Relaxed);
            set_local(l + d);
            SECTIONS.fetch_add(n.weight as u64, Relaxed);
            SECTION_NS.fetch_add((h * n.weight) as u64, Relaxed);
        }
    } else {
        nest_end(true);
    }
    if asleep {
        mark(m as usize);
    }
}

/// Before a condition variable is signalled: the signal's virtual time.
pub fn signalling(c: *mut libc::pthread_cond_t) {
    mark(c as usize);
}

/// After a condition wait on `c` with `m` returned `rc` (it began at
/// `blocked`): a wake-up inherits the signaller's debt and the mutex's; a
/// timeout skips nothing (the thread would have waited that long anyway);
/// the mutex is held again either way.
pub fn woken(c: *mut libc::pthread_cond_t, m: *mut pthread_mutex_t, blocked: (i64, i64), rc: c_int) {
    if rc == 0 {
        caught(&[c as usize, m as usize], Some(blocked));
    } else {
        caught(&[m as usize], None);
    }
    if m as usize == ADDRESS.load(Relaxed) {
        section_begins();
    } else {
        nest_begin(m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_of_the_chosen_mutex_is_owed_by_the_others_not_its_holder() {
        parse("0x1000@50").unwrap();
        let m = 0x1000 as *mut pthread_mutex_t;
        acquired(m, None);
        let t = std::time::Instant::now();
        while t.elapsed() < std::time::Duration::from_micros(200) {}
        releasing(m, true);
        let [pct, sections, section_ns, global, _] = totals().unwrap();
        assert_eq!((pct, sections), (50, 1));
        assert!(section_ns >= 200_000, "the section lasted {section_ns} ns");
        assert_eq!(global, section_ns / 2, "half of it is owed");
        assert!(GLOBAL.load(Relaxed) - local() <= 0, "the holder owes nothing for its own section");
        // Another thread owes the half, and pays it only past PAY_AT.
        let owed = std::thread::spawn(|| {
            let before = local();
            GLOBAL.load(Relaxed) - before
        })
        .join()
        .unwrap();
        assert_eq!(owed, 0, "a thread started after the section owes nothing for it");
        assert!(parse("0x1000@101").is_err() && parse("0x1000").is_err() && parse("4096@5").is_err());
        a_mutex_taken_inside_the_section_is_not_the_section_s_own_time();
    }

    /// Run after the test above, not beside it: both end sections of the
    /// one sped-up mutex, which that test counts.
    fn a_mutex_taken_inside_the_section_is_not_the_section_s_own_time() {
        let spin = |us| {
            let t = std::time::Instant::now();
            while t.elapsed() < std::time::Duration::from_micros(us) {}
        };
        std::thread::spawn(move || {
            let (sped, inner) = (0x1000 as *mut pthread_mutex_t, 0x2000 as *mut pthread_mutex_t);
            assert!(!nest_begin(inner), "outside the section nothing nests");
            acquired(sped, None);
            assert!(!nest_begin(sped), "the sped-up mutex does not nest in itself");
            assert!(nest_begin(inner));
            spin(300);
            releasing(inner, false);
            let n = NEST.with(|c| c.get());
            assert!(n.holding && n.depth == 0 && n.nested >= 300_000, "nested {} ns", n.nested);
            // A lock that fails ends what it began.
            let begun = nest_begin(inner);
            nest_end(begun);
            assert_eq!(NEST.with(|c| c.get()).depth, 0);
            releasing(sped, false);
            assert!(!NEST.with(|c| c.get()).holding);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_woken_thread_is_never_virtually_earlier_than_its_waker() {
        let a = 0x5000 as *mut pthread_mutex_t;
        // This thread is 2 ms ahead of the global account (it skipped a
        // long wait); the release it follows left GLOBAL + 1 ms: it
        // inherits the difference.
        let g = GLOBAL.load(Relaxed);
        set_local(g + 2_000_000);
        slot(a as usize).unwrap().store(now() - (g + 1_000_000), Relaxed);
        acquired(a, None);
        // (Up to 0.5 ms passes between the store and the acquisition on a
        // busy machine.)
        assert!(local() < g + 1_500_000, "the debt travels with the mutex: {} {g}", local());
        // Not ahead of the account, it keeps its own (no clock is read).
        set_local(g);
        acquired(a, None);
        assert_eq!(local(), g);
        // A thread blocked 1 ms skips no more than that.
        let l = local();
        slot(a as usize).unwrap().store(0, Relaxed);
        acquired(a, Some((now() - 1_000_000, GLOBAL.load(Relaxed))));
        assert!(local() - l >= 1_000_000 && local() - l < 2_000_000);
    }
}
