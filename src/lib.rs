//! contend: a Linux lab that measures how locks, semaphores and allocators
//! behave under contention.
//!
//! One folder per family (`family::{lock, wakeup, alloc}`: arguments,
//! spec, registry, workload, sweep, report) over one shared engine
//! (`engine`: workers, start gate, measured window, interleaved rounds)
//! and one session (`session`: signals, resources, ledger, cleanup,
//! limits). `measure` holds the probes and statistics, `model` the shapes
//! results share and the value types, `output` the formats. Dependencies
//! point down: nothing imports a family but `main.rs`, `tune` (which runs
//! the lock family) and `list`.
//! All `unsafe` lives in the `locks` crate, but for the attributes that
//! put the measured loops in their own page-aligned section
//! (`measure::section`), each allowed where it stands.

#![deny(unsafe_code)]

pub mod cli;
pub mod engine;
pub mod experiment;
pub mod exports;
pub mod family;
pub mod list;
pub mod measure;
pub mod model;
pub mod output;
pub mod session;
pub mod tune;
