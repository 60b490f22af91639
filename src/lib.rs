//! contend: a Linux lab that measures how locks, semaphores and allocators
//! behave under contention.
//!
//! Data flows one way: `cli` (clap) -> `spec` (validated, serializable) ->
//! `runner` (workers, start gate, measured window, sweep) -> `measure`
//! (probes and statistics) -> `report` (formats). `workloads` holds what
//! each worker does; `registry` maps CLI names to monomorphized workloads;
//! `model` is the shape every family's results share.
//! All `unsafe` lives in the `locks` crate.

#![forbid(unsafe_code)]

pub mod cli;
pub mod compare;
pub mod measure;
pub mod model;
pub mod parse;
pub mod registry;
pub mod report;
pub mod runner;
pub mod spec;
pub mod workloads;
