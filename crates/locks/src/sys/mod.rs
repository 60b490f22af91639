//! The only place that talks to the kernel directly: one file per facility.

#[cfg(not(loom))]
pub mod futex;
#[cfg(not(loom))]
pub mod perf;
#[cfg(not(loom))]
pub mod pthread;

pub mod futex_api;
#[cfg(not(loom))]
pub mod libc_info;

pub use futex_api::{Futex, WaitOutcome};
