//! Deadlines and naps for the interposer's timed lock (the clocks
//! themselves are `locks::sys::clock`).

use libc::timespec;
use locks::sys::clock::ns_on;

/// ns from now until the absolute `deadline` on `clock` (negative: past).
pub fn ns_until(clock: libc::clockid_t, deadline: &timespec) -> i64 {
    deadline.tv_sec.saturating_mul(1_000_000_000).saturating_add(deadline.tv_nsec) - ns_on(clock)
}

/// Sleeps about `ns`.
pub fn nap(ns: i64) {
    let t = timespec { tv_sec: ns / 1_000_000_000, tv_nsec: ns % 1_000_000_000 };
    // SAFETY: `t` is a valid relative timespec; the remainder is not wanted.
    unsafe { libc::nanosleep(&t, std::ptr::null_mut()) };
}
