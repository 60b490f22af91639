//! `contend wakeup`: pairs of threads or processes ping-pong through a
//! wake primitive; side A records the latencies.

pub mod args;
pub mod placement;
pub mod registry;
pub mod report;
pub mod sched;
pub mod spec;
pub mod sweep;
pub mod workload;
