//! The futex operations the protocols need, as a trait.
//!
//! The lock algorithms are generic over [`Futex`] so the same protocol code
//! runs against the real syscalls ([`crate::sys::futex::PrivateFutex`]) and,
//! under loom, against a model that parks a thread only if the word still
//! holds the expected value and unparks it on wake.

use crate::primitive::AtomicU32;

/// What a futex wait returned. Callers treat every outcome the same way
/// (re-check the word), but the counters distinguish them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitOutcome {
    /// The thread slept and was woken (or woke spuriously).
    Woken,
    /// The word no longer held the expected value: the kernel returned EAGAIN
    /// without sleeping.
    ValueChanged,
    /// A signal interrupted the sleep (EINTR).
    Interrupted,
}

/// Wake count meaning "every waiter". The kernel reads the count as a C
/// `int`, so `u32::MAX` would arrive as -1 and wake only one.
pub const WAKE_ALL: u32 = i32::MAX as u32;

/// Futex wait/wake on a 32-bit word.
pub trait Futex: Send + Sync + 'static {
    /// Sleep while `*word == expected`.
    fn wait(word: &AtomicU32, expected: u32) -> WaitOutcome;
    /// Wake at most `n` threads sleeping on `word`; returns how many woke.
    fn wake(word: &AtomicU32, n: u32) -> u32;
}
