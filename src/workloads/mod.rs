//! Workloads: each turns one point of a spec into a sample.

pub mod alloc;
pub mod lock;
pub mod lock_sample;
pub mod wakeup;
