//! `contend tune`: searches the lock family's spin budget for the one that
//! maximizes throughput at a given hold time.

pub mod report;
pub mod run;
pub mod spec;
pub mod table;
