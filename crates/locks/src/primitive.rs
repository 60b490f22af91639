//! The atomics the lock algorithms use: `std`'s normally, loom's under
//! `cfg(loom)` so the futex protocols can be model-checked unchanged.

#[cfg(not(loom))]
pub use std::hint::spin_loop;
#[cfg(not(loom))]
pub use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};

#[cfg(loom)]
pub use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};
/// Under loom a spinning thread must yield, or the model checker explores
/// the spin forever instead of running the thread it waits for.
#[cfg(loom)]
pub use loom::thread::yield_now as spin_loop;
