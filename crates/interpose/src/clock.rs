//! Clocks and naps for the interposer's timed waits and profile.

use libc::timespec;

/// Now on `clock`, ns.
#[inline]
pub fn now_on(clock: libc::clockid_t) -> i64 {
    let mut t = timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(clock, &mut t) };
    t.tv_sec * 1_000_000_000 + t.tv_nsec
}

/// Monotonic ns (the vDSO: no syscall).
#[inline]
pub fn now() -> u64 {
    now_on(libc::CLOCK_MONOTONIC) as u64
}

/// ns from now until the absolute `deadline` on `clock` (negative: past).
pub fn ns_until(clock: libc::clockid_t, deadline: &timespec) -> i64 {
    deadline.tv_sec.saturating_mul(1_000_000_000).saturating_add(deadline.tv_nsec) - now_on(clock)
}

/// Sleeps about `ns`.
pub fn nap(ns: i64) {
    let t = timespec { tv_sec: ns / 1_000_000_000, tv_nsec: ns % 1_000_000_000 };
    // SAFETY: `t` is a valid relative timespec; the remainder is not wanted.
    unsafe { libc::nanosleep(&t, std::ptr::null_mut()) };
}
