//! Running workers and timing the window: worker threads or processes,
//! the start gate, the measured window, signals, the resources a run
//! creates (and the ledger that lets `contend cleanup` remove them after a
//! SIGKILL), and the sweep over a spec's points.

pub mod alloc_sweep;
pub mod allocators;
pub mod cleanup;
pub mod emergency;
pub mod ledger;
pub mod limits;
pub mod procs;
pub mod resources;
pub mod signals;
pub mod sweep;
pub mod threads;
pub mod window;

pub use window::{measure_window, wait_arrivals, Window};

/// A run ended by SIGINT or SIGTERM: not a failure, but the process exits
/// with 128 + the signal number after reporting what it measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("interrupted by {0}")]
pub struct Interrupted(pub nix::sys::signal::Signal);
