//! The futex2 syscalls futex_wait(2) / futex_wake(2) (Linux 6.7+): the same
//! wait/wake semantics as FUTEX_WAIT/FUTEX_WAKE with an explicit size and a
//! bitmask, behind their own syscall numbers.

use super::futex_api::{Futex, WaitOutcome};
use std::sync::atomic::AtomicU32;

/// futex_wake(2): the number is the same on every architecture (new
/// syscalls share one table since Linux 5.1); libc does not name it yet.
const SYS_FUTEX_WAKE: libc::c_long = 454;
/// futex_wait(2).
const SYS_FUTEX_WAIT: libc::c_long = 455;
/// A 32-bit, process-private futex.
const PRIVATE: libc::c_uint = (libc::FUTEX2_SIZE_U32 | libc::FUTEX2_PRIVATE) as libc::c_uint;
/// A 32-bit futex shared between processes.
const SHARED: libc::c_uint = libc::FUTEX2_SIZE_U32 as libc::c_uint;
/// Match every waiter (no bitset filtering).
const MASK: libc::c_ulong = u32::MAX as libc::c_ulong;

/// Process-private futex2 operations.
#[derive(Debug, Default, Clone, Copy)]
pub struct Futex2Private;

/// Process-shared futex2 operations.
#[derive(Debug, Default, Clone, Copy)]
pub struct Futex2Shared;

/// Whether this kernel has futex_wait(2)/futex_wake(2): a wake on a word
/// nobody waits on returns 0 where it exists and ENOSYS where it does not.
pub fn available() -> Result<(), String> {
    let word = AtomicU32::new(0);
    // SAFETY: a valid aligned u32 address; waking nobody has no effect.
    let r = unsafe { libc::syscall(SYS_FUTEX_WAKE, word.as_ptr(), MASK, 1 as libc::c_int, PRIVATE) };
    if r >= 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    Err(match e.raw_os_error() {
        Some(libc::ENOSYS) => "futex_wait(2)/futex_wake(2) need Linux 6.7 or later (ENOSYS)".into(),
        _ => format!("futex_wake(2) probe failed: {e}"),
    })
}

fn wait(word: &AtomicU32, expected: u32, flags: libc::c_uint) -> WaitOutcome {
    // SAFETY: valid aligned u32 that outlives the call; null timeout means
    // wait forever (the clockid argument is then ignored).
    let r = unsafe {
        libc::syscall(
            SYS_FUTEX_WAIT,
            word.as_ptr(),
            expected as libc::c_ulong,
            MASK,
            flags,
            std::ptr::null::<libc::timespec>(),
            libc::CLOCK_MONOTONIC,
        )
    };
    if r == 0 {
        return WaitOutcome::Woken;
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EAGAIN) => WaitOutcome::ValueChanged,
        Some(libc::EINTR) => WaitOutcome::Interrupted,
        other => panic!("futex_wait(2) failed: errno {other:?}"),
    }
}

#[link_section = "contend_measured"] // crate docs: Placement
fn wake(word: &AtomicU32, n: u32, flags: libc::c_uint) -> u32 {
    // SAFETY: as in `wait`; the address is only used as a key.
    let r = unsafe { libc::syscall(SYS_FUTEX_WAKE, word.as_ptr(), MASK, n as libc::c_int, flags) };
    assert!(r >= 0, "futex_wake(2) failed: {}", std::io::Error::last_os_error());
    r as u32
}

impl Futex for Futex2Private {
    #[inline]
    fn wait(word: &AtomicU32, expected: u32) -> WaitOutcome {
        wait(word, expected, PRIVATE)
    }

    #[inline]
    fn wake(word: &AtomicU32, n: u32) -> u32 {
        wake(word, n, PRIVATE)
    }
}

impl Futex for Futex2Shared {
    #[inline]
    fn wait(word: &AtomicU32, expected: u32) -> WaitOutcome {
        wait(word, expected, SHARED)
    }

    #[inline]
    fn wake(word: &AtomicU32, n: u32) -> u32 {
        wake(word, n, SHARED)
    }
}
