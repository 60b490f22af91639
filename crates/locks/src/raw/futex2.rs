//! `futex2`: Drepper's three-state mutex over the futex2 syscalls.
//!
//! | word | meaning |
//! |------|---------|
//! | 0 | unlocked |
//! | 1 | locked, no waiters |
//! | 2 | locked, waiters possible |
//!
//! Origin: the `futex` lock's protocol, unchanged, with its sleeps and wakes
//! issued through futex_wait(2)/futex_wake(2) (Linux 6.7+, the futex2
//! interface by André Almeida et al.) instead of the futex(2) multiplexer,
//! so the two can be compared on the same kernel. Reported unavailable on
//! kernels without them.
//!
//! Known failure mode: that of `futex` (spurious wake after a contended
//! episode, convoys when newcomers barge past woken threads).

use super::FutexMutex;
use crate::sys::futex2::{Futex2Private, Futex2Shared};

/// Drepper's mutex 3 over futex_wait(2)/futex_wake(2).
pub type Futex2Mutex = FutexMutex<Futex2Private>;

/// The same over process-shared futex2 operations, for worker processes.
pub type SharedFutex2Mutex = FutexMutex<Futex2Shared>;

// SAFETY: as `SharedFutexMutex`: plain word, shared futex operations.
unsafe impl crate::ProcessShared for SharedFutex2Mutex {}
