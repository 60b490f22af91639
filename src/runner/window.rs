//! The measured window, as the coordinator sees it: open the gate, let the
//! warm-up pass, stamp t0 and snapshot the counters, sleep, stamp t1 and
//! snapshot again. Rates divide by the measured t1 - t0, never by the
//! requested duration: a coordinator that wakes late on a busy machine
//! makes the window longer, not the rate higher.

use super::StartGate;
use crate::measure::{Probes, WindowDelta};
use anyhow::Result;
use std::time::{Duration, Instant};

/// One measured window.
#[derive(Debug)]
pub struct Window<C> {
    /// Measured length, t1 - t0, in seconds.
    pub seconds: f64,
    /// Worker counters at t0.
    pub start: C,
    /// Worker counters at t1.
    pub end: C,
    /// What the probes saw between t0 and t1.
    pub probes: WindowDelta,
}

/// Runs the window. The workers must all be waiting at `gate`; `snapshot`
/// reads their published counters. The caller raises the stop flag after.
pub fn measure_window<C>(
    gate: &StartGate,
    warmup: Duration,
    duration: Duration,
    probes: &Probes,
    snapshot: impl Fn() -> C,
) -> Result<Window<C>> {
    gate.open();
    std::thread::sleep(warmup);
    let begun = probes.begin()?;
    let t0 = Instant::now();
    let start = snapshot();
    std::thread::sleep(duration);
    let t1 = Instant::now();
    let end = snapshot();
    let probes = probes.end(begun)?;
    Ok(Window {
        seconds: (t1 - t0).as_secs_f64(),
        start,
        end,
        probes,
    })
}
