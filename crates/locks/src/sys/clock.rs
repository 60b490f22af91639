//! Reading a clock in nanoseconds: clock_gettime through the vDSO (about
//! 25 ns here, no syscall). For `adaptive`'s quantum and for the
//! interposer's deadlines and profile.

/// Now on `clock` (CLOCK_MONOTONIC, CLOCK_REALTIME, ...), ns.
#[inline]
pub fn ns_on(clock: libc::clockid_t) -> i64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(clock, &mut t) };
    t.tv_sec * 1_000_000_000 + t.tv_nsec
}

/// Now on CLOCK_MONOTONIC, ns.
#[inline]
pub fn monotonic_ns() -> u64 {
    ns_on(libc::CLOCK_MONOTONIC) as u64
}
