//! The three families of workload (and `contend run`, which measures a
//! real program instead of a workload), one folder each with the same shape:
//! its arguments, spec (validated, serializable), registry (CLI names to
//! monomorphized workloads), workload (what each worker does), sweep (the
//! family's setup around the engine's rounds) and report (one `Report`
//! implementation with its formats).

pub mod alloc;
pub mod lock;
pub mod program;
pub mod wakeup;
