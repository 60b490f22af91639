//! `contend alloc`: threads doing malloc/free (or producer/consumer pairs
//! freeing each other's blocks) in a child process per allocator, loaded
//! with LD_PRELOAD.

pub mod registry;
pub mod report;
pub mod spec;
pub mod sweep;
pub mod workload;
