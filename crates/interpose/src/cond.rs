//! Condition variables. glibc's `pthread_cond_wait` releases and re-takes
//! the mutex through glibc's internal functions, which know nothing of a
//! swapped lock, so a process running a swapped lock uses this condition
//! variable for every `pthread_cond_t`: it releases and re-takes the mutex
//! through the interposer (swapped or glibc's, profiled or not).
//!
//! Layout in the `pthread_cond_t` (all zeros is `PTHREAD_COND_INITIALIZER`:
//! CLOCK_REALTIME, private): `seq` (offset 0) counts signals and is the
//! futex word; `waiters` (4) counts threads between their registration and
//! their return; `flags` (8): bit 0 CLOCK_MONOTONIC, bit 1 process-shared.
//!
//! A waiter registers, reads `seq`, releases the mutex and sleeps while
//! `seq` is unchanged; a signal increments `seq` and wakes one sleeper if
//! any is registered. The increments and the reads are SeqCst, so either
//! the signaller sees the waiter registered and wakes it, or the waiter
//! read `seq` after the increment and does not sleep: no wake is lost.
//! Spurious wakes are allowed by POSIX and callers loop on their predicate.
//!
//! Under `--lock pthread` glibc's condition variables are used unchanged;
//! under a per-mutex choice, only those waited on with a chosen mutex are
//! this library's (`chosen.rs`).

use crate::mode::Mode;
use libc::{c_int, clockid_t, pthread_cond_t, pthread_mutex_t, timespec};
use locks::sys::futex::{wait_until, wake_some, Until};
use locks::sys::futex_api::WAKE_ALL;
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};

const MONOTONIC: u32 = 1;
const SHARED: u32 = 2;

struct Cond<'a> {
    seq: &'a AtomicU32,
    waiters: &'a AtomicU32,
    flags: &'a AtomicU32,
}

/// The condition variable's words.
///
/// # Safety
/// `c` points at a live `pthread_cond_t` (48 bytes, 8-aligned).
unsafe fn words<'a>(c: *mut pthread_cond_t) -> Cond<'a> {
    let w = c as *const AtomicU32;
    // SAFETY: the caller's contract; the three words are inside it.
    unsafe { Cond { seq: &*w, waiters: &*w.add(1), flags: &*w.add(2) } }
}

/// pthread_cond_init.
///
/// # Safety
/// `c` points at writable memory for a `pthread_cond_t`; `attr` is null or
/// an initialized attribute object.
pub unsafe fn init(c: *mut pthread_cond_t, attr: *const libc::pthread_condattr_t) -> c_int {
    let (mut clock, mut shared): (clockid_t, c_int) = (libc::CLOCK_REALTIME, libc::PTHREAD_PROCESS_PRIVATE);
    if !attr.is_null() {
        // SAFETY: `attr` is initialized (the caller's contract); the out
        // parameters are valid.
        unsafe {
            libc::pthread_condattr_getclock(attr, &mut clock);
            libc::pthread_condattr_getpshared(attr, &mut shared);
        }
    }
    // SAFETY: the caller's contract.
    unsafe { init_as(c, clock, shared) };
    0
}

/// Writes an idle condition variable on `clock`, shared or not.
///
/// # Safety
/// `c` points at writable memory for a `pthread_cond_t` that no thread
/// waits on.
pub unsafe fn init_as(c: *mut pthread_cond_t, clock: clockid_t, shared: c_int) {
    let mut flags = 0;
    if clock == libc::CLOCK_MONOTONIC {
        flags |= MONOTONIC;
    }
    if shared == libc::PTHREAD_PROCESS_SHARED {
        flags |= SHARED;
    }
    // SAFETY: the caller's contract.
    unsafe {
        std::ptr::write_bytes(c as *mut u8, 0, std::mem::size_of::<pthread_cond_t>());
        words(c).flags.store(flags, SeqCst);
    }
}

/// glibc's `__wrefs` word: its bit 0 says process-shared, bit 1 the
/// monotonic clock (glibc's `__PTHREAD_COND_SHARED_MASK` and
/// `__PTHREAD_COND_CLOCK_MONOTONIC_MASK`).
const GLIBC_WREFS_OFFSET: usize = 36;

/// Makes `c` this library's condition variable, once, before its first
/// wait with a chosen mutex (the caller holds that mutex): converted in
/// place and listed (`chosen.rs`) for its signals to find.
///
/// # Safety
/// `c` points at a live `pthread_cond_t` on which no thread waits through
/// glibc.
pub unsafe fn adopt(c: *mut pthread_cond_t) {
    use crate::chosen::{is_ours, list, CONVERTING};
    use std::sync::atomic::{AtomicU8, Ordering};
    if is_ours(c) {
        return;
    }
    while CONVERTING.swap(true, Ordering::Acquire) {
        std::hint::spin_loop();
    }
    if !is_ours(c) {
        // SAFETY: the caller's contract: `c` is live and idle, so glibc's
        // words may be read and replaced.
        unsafe {
            let wrefs =
                (*((c as *const u8).add(GLIBC_WREFS_OFFSET) as *const AtomicU8)).load(Ordering::Relaxed);
            let clock = if wrefs & 2 != 0 { libc::CLOCK_MONOTONIC } else { libc::CLOCK_REALTIME };
            let shared =
                if wrefs & 1 != 0 { libc::PTHREAD_PROCESS_SHARED } else { libc::PTHREAD_PROCESS_PRIVATE };
            init_as(c, clock, shared);
        }
        list(c);
    }
    CONVERTING.store(false, Ordering::Release);
}

/// pthread_cond_signal (`all`: broadcast).
///
/// # Safety
/// `c` points at a live, initialized `pthread_cond_t`.
pub unsafe fn signal(c: *mut pthread_cond_t, all: bool) -> c_int {
    // SAFETY: the caller's contract.
    let w = unsafe { words(c) };
    w.seq.fetch_add(1, SeqCst);
    if w.waiters.load(SeqCst) != 0 {
        wake_some(w.seq, if all { WAKE_ALL } else { 1 }, w.flags.load(SeqCst) & SHARED != 0);
    }
    0
}

/// pthread_cond_wait / timedwait / clockwait: `deadline` with its clock
/// (None: the clock the condition variable was initialized with).
///
/// # Safety
/// `c` and `m` point at live, initialized objects and the caller holds
/// `m`; `deadline`, if given, points at a timespec.
pub unsafe fn wait(
    c: *mut pthread_cond_t,
    m: *mut pthread_mutex_t,
    deadline: Option<(Option<clockid_t>, *const timespec)>,
    site: usize,
    mode: Mode,
) -> c_int {
    // SAFETY: the caller's contract.
    let w = unsafe { words(c) };
    let flags = w.flags.load(SeqCst);
    let (deadline, realtime) = match deadline {
        None => (None, false),
        Some((_, d)) if d.is_null() => return libc::EINVAL,
        Some((clock, d)) => {
            // SAFETY: checked non-null; the caller's contract.
            let d = unsafe { &*d };
            let clock = clock.unwrap_or(if flags & MONOTONIC != 0 {
                libc::CLOCK_MONOTONIC
            } else {
                libc::CLOCK_REALTIME
            });
            if !(0..1_000_000_000).contains(&d.tv_nsec)
                || (clock != libc::CLOCK_REALTIME && clock != libc::CLOCK_MONOTONIC)
            {
                return libc::EINVAL;
            }
            (Some(d), clock == libc::CLOCK_REALTIME)
        }
    };
    w.waiters.fetch_add(1, SeqCst);
    let seen = w.seq.load(SeqCst);
    // SAFETY: the caller holds `m`.
    let rc = unsafe { crate::route::unlock_mutex(m, site, mode) };
    if rc != 0 {
        // Not the owner (an error-checking mutex says so): not waiting.
        w.waiters.fetch_sub(1, SeqCst);
        return rc;
    }
    let outcome = wait_until(w.seq, seen, deadline, realtime, flags & SHARED != 0);
    w.waiters.fetch_sub(1, SeqCst);
    // POSIX: the mutex is held again on return, timed out or not.
    // SAFETY: the caller's contract; this thread released it above.
    let rc = unsafe { crate::route::lock_mutex(m, site, mode) };
    if rc != 0 {
        return rc;
    }
    match outcome {
        Until::TimedOut => libc::ETIMEDOUT,
        Until::Invalid => libc::EINVAL,
        Until::Woken | Until::ValueChanged | Until::Interrupted => 0,
    }
}
