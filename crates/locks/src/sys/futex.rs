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

#[inline]
fn wait(word: &AtomicU32, expected: u32, op: libc::c_int) -> WaitOutcome {
    // SAFETY: `word` is a valid, aligned 32-bit atomic that outlives the
    // call; a null timeout means "no timeout"; the other arguments are
    // ignored by FUTEX_WAIT.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op,
            expected,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        )
    };
    if r == 0 {
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
    // SAFETY: as in `wait`; FUTEX_WAKE only reads the address as a key.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op,
            n,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        )
    };
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
