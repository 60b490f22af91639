//! Running workers and timing the window: worker threads or processes,
//! the start gate, the measured window, signals, the resources a run
//! creates (and the ledger that lets `contend cleanup` remove them after a
//! SIGKILL), and the sweep over a spec's points.

pub mod alloc_sweep;
pub mod allocators;
pub mod cleanup;
pub mod emergency;
pub mod ledger;
pub mod ledger_dir;
pub mod limits;
pub mod placement;
pub mod procs;
pub mod repeat;
pub mod resources;
pub mod rounds;
pub mod sched;
pub mod signals;
pub mod sweep;
pub mod threads;
pub mod tune;
pub mod wakeup_sweep;
pub mod window;

pub use window::{measure_window, wait_arrivals, Edge, Ending, Window};

/// A run ended by SIGINT or SIGTERM: not a failure, but the process exits
/// with 128 + the signal number after reporting what it measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("interrupted by {0}")]
pub struct Interrupted(pub nix::sys::signal::Signal);

/// What one point's run means for a sweep: its result, if it produced one
/// (perhaps cut short by a signal, which `cut_short` reads off it), and
/// the signal that should end the sweep. Failures other than an interrupt
/// stay errors.
pub fn point_outcome<T>(
    run: anyhow::Result<T>,
    cut_short: impl Fn(&T) -> Option<nix::sys::signal::Signal>,
) -> anyhow::Result<(Option<T>, Option<nix::sys::signal::Signal>)> {
    match run {
        Ok(value) => {
            let sig = cut_short(&value);
            Ok((Some(value), sig))
        }
        Err(e) => match e.downcast_ref::<Interrupted>() {
            Some(Interrupted(sig)) => Ok((None, Some(*sig))),
            None => Err(e),
        },
    }
}
