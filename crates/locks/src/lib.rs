//! Lock algorithms and the Linux syscall layer that `contend` measures.
//!
//! Everything `unsafe` in the project lives in this crate, mostly under
//! [`sys`]: the binary only sees safe APIs. Each algorithm is one file under
//! [`raw`] and implements [`RawLock`]; the wake-up channels of `contend
//! wakeup` are under [`wake`]; the binary's registry turns each into a
//! monomorphized workload so no dynamic dispatch sits inside a measured loop.
//!
//! # Placement
//!
//! A lock's out-of-line paths (the contended acquisition, the slow
//! unlock, the wake) carry `#[link_section = "contend_measured"]`, so the
//! binary places them in the page-aligned section beside the measured
//! loops (contend's `measure::section`, which aligns it), where their
//! offsets do not move when unrelated code grows: a 10% swing at four
//! threads, hold 0, came from `lock_contended` moving within its cache
//! line. In another binary (the interposer) the section is just a section.

#[cfg(not(loom))]
pub mod check;
#[cfg(not(loom))]
pub mod gate;
#[cfg(not(loom))]
pub mod in_mutex;
pub mod primitive;
#[cfg(not(loom))]
pub mod pthread_check;
pub mod raw;
#[cfg(not(loom))]
pub mod sem;
pub mod sys;
#[cfg(not(loom))]
pub mod wake;

pub use raw::{
    Caps, LockConfig, LockCounts, LockStats, ProcessShared, RawLock, RawRwLock, SharedCounts, Spinners,
    TryLock,
};
