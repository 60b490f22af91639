//! `--profile`: per mutex, acquisitions, contended acquisitions (the
//! try-lock that comes first failed), the wait of each contended one
//! (total, largest, and a log-linear histogram for percentiles), and the
//! hold from acquisition to unlock; named by the call site of its first
//! acquisition, and its contended acquisitions grouped by their short
//! stack ([`crate::stack`]: up to [`record::STACKS`] stacks per mutex, with their
//! count and wait; the rest counted together).
//!
//! A mutex is its address: a table of [`SLOTS`] records (`record.rs`, found by `slots.rs`). Every count is written by the
//! thread that holds the mutex, so plain relaxed loads and stores suffice
//! (the mutex orders them): the profile adds no atomic read-modify-write
//! to an acquisition. The
//! table is static (no allocation: the program's allocator may itself
//! lock mutexes); a mutex that finds no slot within [`crate::slots::MAX_PROBES`] is
//! counted in one overflow record with the others, whose counts are
//! atomic adds and whose holds are not measured.

use crate::mode::Mode;
use crate::mutex::{self, holds};
use crate::stack;
use libc::{c_int, pthread_mutex_t};
use locks::sys::clock::monotonic_ns as now;
use std::sync::atomic::{AtomicI32, Ordering::Relaxed};

mod record;
use record::{bucket, slots, RELEASED_OTHER, RELEASED_UNKNOWN};
pub use record::{Record, SLOTS};

/// The record of the mutex at `m`, claimed for it with `site` if new.
#[inline]
fn record(m: *mut pthread_mutex_t, site: usize) -> Record {
    match crate::slots::find(slots(), m as usize) {
        Some((i, true)) => {
            let r = Record::at(i);
            claimed(&r, m, site);
            r
        }
        Some((i, false)) => Record::at(i),
        None => Record::at(SLOTS),
    }
}

/// `r` is about to be released at `site` while others wait for it: count
/// the release and the hold it ends for the site (claiming a slot, and
/// walking its stack, the first time), and remember it, so that the next
/// contended acquisition charges its wait to it. Called by the holder,
/// before the release.
#[cold]
fn released_to_waiters(r: &Record, site: usize) {
    let start = r.hot.hold_start.load(Relaxed);
    let held = if start != 0 { now().saturating_sub(start) } else { 0 };
    let slot = (site != 0).then_some(()).and_then(|()| {
        r.holders.iter().position(|h| h.frames.first() == site).or_else(|| {
            let free = r.holders.iter().position(|h| h.frames.first() == 0)?;
            r.holders[free].frames.store(&stack::capture(site));
            Some(free)
        })
    });
    let (count, held_ns, release) = match slot {
        Some(i) => (&r.holders[i].releases, &r.holders[i].held_ns, i + 1),
        None => (&r.other_holders[0], &r.other_holders[1], RELEASED_OTHER),
    };
    r.add(count, 1);
    r.add(held_ns, held);
    r.last_release.store(release, Relaxed);
}

/// A contended acquisition of `r` that waited `w` ns: its wait goes to
/// the release that ended it. Called by the new holder.
fn charge_wait(r: &Record, w: u64) {
    let caused = match r.last_release.load(Relaxed) {
        RELEASED_UNKNOWN => &r.unattributed_ns,
        RELEASED_OTHER => &r.other_holders[2],
        i => &r.holders[i - 1].caused_ns,
    };
    r.add(caused, w);
}

/// Contended acquisitions of a mutex whose stacks are all walked; after
/// them, one in [`WALK_EVERY`].
pub const WALK_ALL: u64 = 64;
/// See [`WALK_ALL`].
pub const WALK_EVERY: u64 = 16;

/// Whether this contended acquisition of `r` walks its stack. A walk
/// costs about a microsecond, which a waiter pays before it waits: for a
/// mutex held for microseconds at a time that is longer than the hold and
/// lowers the program's throughput, so a busy mutex's stacks are sampled
/// (its counts and waits stay exact; only their split by stack is a
/// sample).
#[inline]
fn walks(r: &Record) -> bool {
    let c = r.contended.load(Relaxed);
    c < WALK_ALL || c % WALK_EVERY == 0
}

/// A record just claimed for `m`, first locked at `site`: its site, kind
/// and first stack (walked once per mutex, so that a mutex that never
/// waits is still named past the wrapper it is locked through).
#[cold]
fn claimed(r: &Record, m: *mut pthread_mutex_t, site: usize) {
    r.site.store(site, Relaxed);
    // SAFETY: the callers pass a live mutex.
    r.kind.store(unsafe { mutex::kind(m) }, Relaxed);
    if site != 0 {
        r.first_stack.store(&stack::capture(site));
    }
}

/// An acquisition of `r` at `site` by the thread now holding it: a call
/// site not seen before gets its stack kept (up to [`record::SITES`]
/// besides the first). One comparison when the site is the last one seen
/// (the hot line's); a mutex locked from two places alternately pays a
/// few more on the cold path.
#[inline]
fn acquired_at(r: &Record, site: usize) {
    if site != r.hot.last_site.load(Relaxed) && !r.is_overflow() {
        new_site(r, site);
    }
}

/// See [`acquired_at`].
#[cold]
fn new_site(r: &Record, site: usize) {
    r.hot.last_site.store(site, Relaxed);
    if site == 0 || site == r.site.load(Relaxed) {
        return;
    }
    for kept in &r.sites {
        match kept.first() {
            0 => return kept.store(&stack::capture(site)),
            first if first == site => return,
            _ => {}
        }
    }
}

/// The hold begins: count the acquisition, and remember where a
/// contended one was made (for [`end`]'s parking test).
fn begin(r: &Record, waited: Option<u64>, at: u64, site: usize) {
    r.add(&r.hot.acquisitions, 1);
    if let Some(w) = waited {
        r.add(&r.contended, 1);
        r.add(&r.wait_ns, w);
        if r.is_overflow() {
            r.max_wait_ns.fetch_max(w, Relaxed);
        } else if w > r.max_wait_ns.load(Relaxed) {
            r.max_wait_ns.store(w, Relaxed);
        }
        r.add(&r.hist[bucket(w)], 1);
    }
    if !r.is_overflow() {
        r.hot.hold_start.store(at, Relaxed);
        // An uncontended acquisition stores nothing more when the mark
        // is clear, as `end` leaves it (measured: storing it every time
        // cost the uncontended profiled lock and unlock 0.7 ns); a mark
        // left by a hold that ended where `end` did not see it goes.
        match waited.filter(|_| site != 0) {
            Some(w) => {
                r.pending_wait_ns.store(w, Relaxed);
                r.hot.waited_at.store(site, Relaxed);
            }
            None if r.hot.waited_at.load(Relaxed) != 0 => r.hot.waited_at.store(0, Relaxed),
            None => {}
        }
    }
}

/// How a hold ends.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Release {
    /// pthread_mutex_unlock.
    Unlock,
    /// A condition wait, which releases the mutex.
    CondWait,
}

/// Code bytes from the return address of a lock call to that of the
/// release that follows, at most, for the section between them to be
/// empty. An unlock: 12, room for the unlock's argument (a register move
/// or a RIP-relative `lea`, 3 to 7 bytes) and its call (5 or 6), but not
/// for a call of anything else (a call, and the argument the unlock then
/// needs again, are 8 or more). A condition wait: 40, room for the test of
/// a predicate (a load, a compare and a branch) and the wait's two
/// arguments, the canonical `while (!ready) pthread_cond_wait(...)`.
const EMPTY_UNLOCK: usize = 12;
const EMPTY_COND_WAIT: usize = 40;

/// Whether the section between a lock call returning at `locked` and a
/// release called from `released` did nothing: the release follows the
/// lock in the same code with at most its arguments between. A thread
/// that waited for a mutex only to let it go (redis's io threads park on
/// their mutexes this way while the main thread holds them), or to go
/// straight into a condition wait because there was nothing to do, was
/// parking, not contending: making anyone's section shorter would not
/// have let it do more.
fn empty_section(locked: usize, released: usize, how: Release) -> bool {
    let limit = match how {
        Release::Unlock => EMPTY_UNLOCK,
        Release::CondWait => EMPTY_COND_WAIT,
    };
    released.wrapping_sub(locked) <= limit
}

/// The hold ends at a release from `site` (the overflow record measures
/// no holds: its mutexes' holds overlap); a hold begun by a wait whose
/// section was empty counts as parking.
fn end(r: &Record, site: usize, how: Release) {
    if r.is_overflow() {
        return;
    }
    let start = r.hot.hold_start.load(Relaxed);
    if start != 0 {
        r.hot.hold_start.store(0, Relaxed);
        r.add(&r.hot.holds, 1);
        r.add(&r.hot.hold_ns, now().saturating_sub(start));
    }
    let locked = r.hot.waited_at.load(Relaxed);
    if locked != 0 {
        r.hot.waited_at.store(0, Relaxed);
        if empty_section(locked, site, how) {
            r.add(&r.parked, 1);
            r.add(&r.parked_wait_ns, r.pending_wait_ns.load(Relaxed));
        }
    }
}

/// glibc kinds whose try-lock is not a side-effect-free "is it free"
/// (robust 16, PI 32, PP 64): glibc's try-lock of a robust mutex that is
/// not recoverable returns ENOTRECOVERABLE but leaves it locked, so a
/// later try-lock says EBUSY where a lock says ENOTRECOVERABLE.
const NO_TRY_FIRST: i32 = 16 | 32 | 64;

/// Whether glibc's mutex `m` of kind `k` (robust, PI or PP) is held now,
/// from its lock word: the owner's TID (FUTEX_TID_MASK) for robust and
/// PI, the low 19 bits below the priority ceiling for PP. A racy read, as
/// a failed try-lock is: "held when this thread arrived".
///
/// # Safety
/// `m` points at a live glibc mutex of kind `k`.
unsafe fn held_by_word(m: *mut pthread_mutex_t, k: i32) -> bool {
    // SAFETY: offset 0 is glibc's 4-aligned `int __lock` (the caller's
    // contract), which glibc changes only with atomic operations.
    let word = unsafe { (*(m as *const AtomicI32)).load(Relaxed) } as u32;
    if k & 64 != 0 {
        word & 0x7_ffff != 0
    } else {
        word & 0x3fff_ffff != 0
    }
}

/// A profiled acquisition by `blocking` (a lock or timed lock of `m`).
/// Whether it was contended comes from a try-lock first; only EBUSY means
/// "someone holds it, wait", and any other result of the try-lock is the
/// result of the call itself (EOWNERDEAD with the mutex acquired,
/// ENOTRECOVERABLE, EAGAIN for a recursive count at its limit, EINVAL),
/// returned unchanged, as glibc's call would have returned it. Robust, PI
/// and PP mutexes are never tried first (see [`NO_TRY_FIRST`]): their
/// lock word says whether they are held, and `blocking` runs as the
/// program asked.
///
/// # Safety
/// As [`mutex::acquire`]; `blocking` acquires `m` as the program asked.
unsafe fn acquire(
    m: *mut pthread_mutex_t,
    site: usize,
    mode: Mode,
    blocking: impl FnOnce() -> c_int,
) -> c_int {
    let r = &record(m, site);
    // SAFETY: the caller's contract: a live mutex.
    let k = unsafe { mutex::kind(m) };
    let contended = if k & NO_TRY_FIRST != 0 {
        // SAFETY: a live glibc mutex of one of those kinds.
        unsafe { held_by_word(m, k) }
    } else {
        // SAFETY: the caller's contract.
        let first = unsafe { mutex::try_acquire(m, mode) };
        if first != libc::EBUSY {
            if holds(first) {
                acquired_at(r, site);
                begin(r, None, now(), site);
            }
            return first;
        }
        true
    };
    // The stack is walked before the wait, by a thread that is about to
    // wait anyway, and not inside the measured wait; counted once the
    // mutex is ours. A mutex without a record of its own keeps none.
    let tracked = contended && !r.is_overflow();
    let frames = (tracked && walks(r)).then(|| stack::capture(site));
    if tracked {
        // So that the holder's release knows someone waits (see
        // `released_to_waiters`).
        r.hot.waiting.fetch_add(1, Relaxed);
    }
    let t0 = if contended { now() } else { 0 };
    let rc = blocking();
    if tracked {
        r.hot.waiting.fetch_sub(1, Relaxed);
    }
    if holds(rc) {
        acquired_at(r, site);
        let t1 = now();
        begin(r, contended.then(|| t1 - t0), t1, site);
        if tracked {
            charge_wait(r, t1 - t0);
        }
        if let Some(frames) = &frames {
            r.add_stack(frames, t1 - t0);
        }
    }
    rc
}

/// A profiled pthread_mutex_lock.
///
/// # Safety
/// As [`mutex::acquire`].
pub unsafe fn lock(m: *mut pthread_mutex_t, site: usize, mode: Mode) -> c_int {
    // SAFETY: the caller's contract, passed on.
    unsafe { acquire(m, site, mode, || mutex::acquire(m, mode)) }
}

/// A profiled pthread_mutex_trylock.
///
/// # Safety
/// As [`mutex::acquire`].
pub unsafe fn try_lock(m: *mut pthread_mutex_t, site: usize, mode: Mode) -> c_int {
    let r = &record(m, site);
    // SAFETY: the caller's contract.
    let rc = unsafe { mutex::try_acquire(m, mode) };
    if holds(rc) {
        acquired_at(r, site);
        begin(r, None, now(), site);
    } else if rc == libc::EBUSY {
        // Not holding: an atomic add (a failed try-lock is not ordered by
        // the mutex).
        r.try_failed.fetch_add(1, Relaxed);
    }
    rc
}

/// A profiled pthread_mutex_timedlock / clocklock.
///
/// # Safety
/// As [`mutex::timed_acquire`].
pub unsafe fn timed_lock(
    m: *mut pthread_mutex_t,
    site: usize,
    mode: Mode,
    clock: Option<libc::clockid_t>,
    deadline: *const libc::timespec,
) -> c_int {
    // glibc refuses a clock it cannot wait on before it looks at the
    // mutex; so does this, before the try-lock.
    if clock.is_some_and(|c| c != libc::CLOCK_REALTIME && c != libc::CLOCK_MONOTONIC) {
        return libc::EINVAL;
    }
    // SAFETY: the caller's contract, passed on.
    unsafe { acquire(m, site, mode, || mutex::timed_acquire(m, mode, clock, deadline)) }
}

/// A profiled pthread_mutex_unlock.
///
/// # Safety
/// As [`mutex::release`].
pub unsafe fn unlock(m: *mut pthread_mutex_t, site: usize, mode: Mode) -> c_int {
    let r = &record(m, 0);
    if r.hot.waiting.load(Relaxed) != 0 && !r.is_overflow() {
        released_to_waiters(r, site);
    }
    end(r, site, Release::Unlock);
    // SAFETY: the caller's contract.
    unsafe { mutex::release(m, mode) }
}

/// A condition wait on `m` begins (the caller holds `m`): counted, so a
/// reader can tell a mutex whose kernel waits come from condition waits'
/// re-acquisitions.
pub fn cond_wait_begins(m: *mut pthread_mutex_t, site: usize) {
    let r = &record(m, site);
    r.add(&r.cond_waits, 1);
}

/// glibc's condition wait releases and re-takes `m` inside glibc: the hold
/// ends before it and a new one (an acquisition, uncontended as far as
/// the profile can tell: its wait, if any, is inside glibc, and shows
/// only in the kernel's count of waits on the mutex) begins after.
pub fn around_glibc_wait(m: *mut pthread_mutex_t, site: usize, wait: impl FnOnce() -> c_int) -> c_int {
    let r = &record(m, site);
    if r.hot.waiting.load(Relaxed) != 0 && !r.is_overflow() {
        released_to_waiters(r, site);
    }
    end(r, site, Release::CondWait);
    let rc = wait();
    acquired_at(r, site);
    begin(r, None, now(), site);
    rc
}

/// A forked child profiles itself from zero: its parent reports what came
/// before the fork.
pub extern "C" fn clear_in_child() {
    (0..=SLOTS).map(Record::at).filter(|r| r.key() != 0 || r.is_overflow()).for_each(|r| r.clear());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_come_from_the_histogram_capped_by_the_max() {
        let r = Record::leaked();
        assert_eq!(r.wait_quantile(0.99), 0, "no contended acquisition");
        // 99 waits of 1 µs and one of 1 ms.
        for w in std::iter::repeat_n(1_000, 99).chain([1_000_000]) {
            begin(&r, Some(w), 1, 0);
        }
        assert_eq!(r.contended.load(Relaxed), 100);
        let p50 = r.wait_quantile(0.5);
        assert!((1_000..=1_125).contains(&p50), "p50 {p50}");
        assert!((1_000..=1_125).contains(&r.wait_quantile(0.99)), "the 99th of 100 is a 1 µs wait");
        assert_eq!(r.wait_quantile(1.0), 1_000_000, "the top bucket's edge is capped by the max");
        end(&r, 0, Release::Unlock);
        assert_eq!(r.hot.holds.load(Relaxed), 1);
    }

    #[test]
    fn a_wait_followed_by_an_empty_section_is_parking() {
        let r = Record::leaked();
        // Waited at 0x1000, unlocked right after (the unlock's call 9
        // bytes on): parking.
        begin(&r, Some(5_000), 1, 0x1000);
        end(&r, 0x1009, Release::Unlock);
        // Waited, then a call between (unlocked 40 bytes on): work.
        begin(&r, Some(7_000), 1, 0x1000);
        end(&r, 0x1028, Release::Unlock);
        // Waited, then straight into a condition wait: parking.
        begin(&r, Some(11_000), 1, 0x2000);
        end(&r, 0x2020, Release::CondWait);
        // Did not wait: nothing to say, however empty.
        begin(&r, None, 1, 0x1000);
        end(&r, 0x1009, Release::Unlock);
        // A release earlier in the code than the lock is another section.
        begin(&r, Some(13_000), 1, 0x3000);
        end(&r, 0x2ff0, Release::Unlock);
        assert_eq!((r.parked.load(Relaxed), r.parked_wait_ns.load(Relaxed)), (2, 16_000));
        assert_eq!((r.contended.load(Relaxed), r.hot.holds.load(Relaxed)), (4, 5));
    }
}
