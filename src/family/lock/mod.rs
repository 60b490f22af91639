//! `contend lock`: N threads or processes contend for one lock.

pub mod registry;
pub mod report;
pub mod spec;
pub mod sweep;
pub mod workload;
