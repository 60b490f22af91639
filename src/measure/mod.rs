//! What is measured around a run window: system-wide CPU split, the
//! process's own CPU time and context switches, futex syscalls, fairness,
//! and the environment the numbers came from.

pub mod children;
pub mod clock;
pub mod cpu;
pub mod drift;
pub mod env;
pub mod fairness;
pub mod futex;
pub mod futex_view;
pub mod kernel_choices;
pub mod latency;
pub mod probes;
pub mod rusage;
pub mod section;
pub mod shared_hist;
pub mod stats;
pub mod tracefs;

pub use probes::{Probes, UsageSource, WindowDelta};
