//! The futex(2) syscall: FUTEX_WAIT / FUTEX_WAKE, process-private or shared.

use super::futex_api::{Futex, WaitOutcome};
use std::sync::atomic::AtomicU32;

/// Process-private futex operations (`FUTEX_WAIT_PRIVATE`,
/// `FUTEX_WAKE_PRIVATE`): the kernel may key the futex on the address alone,
/// which is cheaper than a shared futex.
#[derive(Debug, Default, Clone, Copy)]
pub struct PrivateFutex;

/// Process-shared futex operations (no FUTEX_PRIVATE_FLAG): the kernel keys
/// the futex on the backing page, so processes that map the same memory at
/// different addresses still meet. Needed for locks in shared memory.
#[derive(Debug, Default, Clone, Copy)]
pub struct SharedFutex;

/// futex(2) on `word` with the arguments these operations use (no second
/// word); the raw result.
#[inline]
fn futex(
    word: &AtomicU32,
    op: libc::c_int,
    val: u32,
    timeout: *const libc::timespec,
    val3: u32,
) -> libc::c_long {
    // SAFETY: `word` is a valid, aligned 32-bit atomic that outlives the
    // call; `timeout` is null ("no timeout") or points at a timespec the
    // caller keeps alive across it; the operations used read no second
    // word (uaddr2 is null).
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), op, val, timeout, std::ptr::null::<u32>(), val3) }
}

#[inline]
fn wait(word: &AtomicU32, expected: u32, op: libc::c_int) -> WaitOutcome {
    if futex(word, op, expected, std::ptr::null(), 0) == 0 {
        return WaitOutcome::Woken;
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EAGAIN) => WaitOutcome::ValueChanged,
        Some(libc::EINTR) => WaitOutcome::Interrupted,
        // Any other error means the arguments are wrong, which is a bug in
        // this crate, not a condition to recover from.
        other => panic!("FUTEX_WAIT failed: errno {other:?}"),
    }
}

#[inline]
fn wake(word: &AtomicU32, n: u32, op: libc::c_int) -> u32 {
    let r = futex(word, op, n, std::ptr::null(), 0);
    assert!(r >= 0, "FUTEX_WAKE failed: {}", std::io::Error::last_os_error());
    r as u32
}

impl Futex for PrivateFutex {
    #[inline]
    fn wait(word: &AtomicU32, expected: u32) -> WaitOutcome {
        wait(word, expected, libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG)
    }

    #[inline]
    fn wake(word: &AtomicU32, n: u32) -> u32 {
        wake(word, n, libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG)
    }
}

impl Futex for SharedFutex {
    #[inline]
    fn wait(word: &AtomicU32, expected: u32) -> WaitOutcome {
        wait(word, expected, libc::FUTEX_WAIT)
    }

    #[inline]
    fn wake(word: &AtomicU32, n: u32) -> u32 {
        wake(word, n, libc::FUTEX_WAKE)
    }
}

/// How a wait with a deadline ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Until {
    /// Woken (or spuriously).
    Woken,
    /// The word no longer held the expected value.
    ValueChanged,
    /// A signal interrupted the sleep.
    Interrupted,
    /// The deadline passed.
    TimedOut,
    /// The kernel refused the deadline (EINVAL: nanoseconds out of range).
    Invalid,
}

/// FUTEX_WAIT_BITSET on `word` while it holds `expected`, until the
/// absolute `deadline` on CLOCK_REALTIME (`realtime`) or CLOCK_MONOTONIC,
/// or with no deadline; process-private unless `shared`. What a condition
/// variable's timed wait needs: POSIX deadlines are absolute, and only the
/// bitset wait takes an absolute time on either clock.
pub fn wait_until(
    word: &AtomicU32,
    expected: u32,
    deadline: Option<&libc::timespec>,
    realtime: bool,
    shared: bool,
) -> Until {
    let mut op = libc::FUTEX_WAIT_BITSET;
    if !shared {
        op |= libc::FUTEX_PRIVATE_FLAG;
    }
    if realtime {
        op |= libc::FUTEX_CLOCK_REALTIME;
    }
    let timeout = deadline.map_or(std::ptr::null(), |d| d as *const libc::timespec);
    // SAFETY: `word` is a valid, aligned 32-bit atomic that outlives the
    // call; `timeout` is null or points at a timespec the caller keeps
    // alive across it; the bitset (all ones) matches any wake.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op,
            expected,
            timeout,
            std::ptr::null::<u32>(),
            u32::MAX,
        )
    };
    if r == 0 {
        return Until::Woken;
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EAGAIN) => Until::ValueChanged,
        Some(libc::EINTR) => Until::Interrupted,
        Some(libc::ETIMEDOUT) => Until::TimedOut,
        Some(libc::EINVAL) => Until::Invalid,
        other => panic!("FUTEX_WAIT_BITSET failed: errno {other:?}"),
    }
}

/// FUTEX_WAKE of up to `n` waiters, process-private unless `shared`.
pub fn wake_some(word: &AtomicU32, n: u32, shared: bool) -> u32 {
    let op = if shared { libc::FUTEX_WAKE } else { libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG };
    wake(word, n, op)
}
