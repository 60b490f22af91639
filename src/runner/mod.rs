//! Running workers and timing the window: a start gate, the coordinator that
//! stamps the window, worker-thread spawning with clean failure, and the
//! sweep over a spec's points.

pub mod gate;
pub mod limits;
pub mod sweep;
pub mod threads;
pub mod window;

pub use gate::StartGate;
pub use window::{measure_window, Window};
