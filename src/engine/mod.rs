//! The engine every family shares: worker threads and processes, the
//! start gate and measured window, and the interleaved rounds that turn
//! points into repeated, screened runs.

pub mod child;
pub mod crew;
pub mod futex_plan;
pub mod procs;
pub mod progress;
pub mod repeat;
pub mod repeat_args;
pub mod rounds;
pub mod threads;
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
