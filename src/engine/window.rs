//! The measured window, as the coordinator sees it: wait for every worker
//! at the start gate, open it, let the warm-up pass, stamp t0 and snapshot
//! the counters, wait, stamp t1 and snapshot again. Rates divide by the
//! measured t1 - t0, never by the requested duration: a coordinator that
//! wakes late on a busy machine makes the window longer, not the rate
//! higher.
//!
//! Every wait is a poll on the signal fd that also wakes every `TICK` to
//! call `watch`: SIGINT/SIGTERM end the window early (the sample is marked
//! interrupted), and `watch` ends the run with an error when a worker
//! process exits or the lock stalls.

use crate::engine::Interrupted;
use crate::measure::{Probes, WindowDelta};
use crate::session::signals::{self, Event};
use anyhow::{anyhow, Result};
use locks::gate::Gate;
use nix::sys::signal::Signal;
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
    /// The signal that cut the window short, if one did.
    pub interrupted: Option<Signal>,
}

/// How often the coordinator checks on the workers while it waits.
pub const TICK: Duration = Duration::from_millis(250);

/// Waits until `n` workers have arrived at the gate, aborting the gate on
/// an interrupt or when `watch` reports a dead worker.
pub fn wait_arrivals(gate: &Gate, n: usize, watch: &mut dyn FnMut() -> Result<()>) -> Result<()> {
    while (gate.arrived() as usize) < n {
        let outcome = match signals::wait_for(Duration::from_millis(2)) {
            Event::Interrupted(sig) => Err(anyhow!(Interrupted(sig))),
            _ => watch(),
        };
        if outcome.is_err() {
            gate.abort();
            return outcome;
        }
    }
    Ok(())
}

/// Which edge of the window a snapshot is taken at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    /// t0, right after the warm-up.
    Start,
    /// t1, the end.
    End,
}

/// How a window ends: after `duration`, or earlier once `done` says the
/// workers finished a fixed amount of work (checked every `poll`).
pub struct Ending<'a> {
    /// The longest the window lasts.
    pub duration: Duration,
    /// Whether the workers have finished on their own.
    pub done: &'a dyn Fn() -> bool,
    /// How often to check `done` (and to call `watch`).
    pub poll: Duration,
}

impl Ending<'static> {
    /// A window of exactly `duration`.
    pub fn after(duration: Duration) -> Self {
        Ending { duration, done: &|| false, poll: TICK }
    }
}

/// Sleeps until `deadline` or `done`, calling `watch` every `poll` and on
/// every child event; returns the interrupting signal, if any.
fn wait_watching(
    deadline: Instant,
    poll: Duration,
    done: &dyn Fn() -> bool,
    watch: &mut dyn FnMut() -> Result<()>,
) -> Result<Option<Signal>> {
    loop {
        let until = deadline.min(Instant::now() + poll);
        match signals::wait_until(until) {
            Event::Interrupted(sig) => return Ok(Some(sig)),
            Event::Deadline | Event::Child => watch()?,
        }
        if Instant::now() >= deadline || done() {
            return Ok(None);
        }
    }
}

/// Runs the window. Every worker must have arrived at `gate`; `snapshot`
/// reads their published counters at each edge (and may tell them which
/// phase they are in). The caller raises the stop flag after.
pub fn measure_window<C>(
    gate: &Gate,
    warmup: Duration,
    ending: &Ending,
    probes: &Probes,
    snapshot: impl Fn(Edge) -> C,
    watch: &mut dyn FnMut() -> Result<()>,
) -> Result<Window<C>> {
    gate.open();
    if let Some(sig) = wait_watching(Instant::now() + warmup, TICK, &|| false, watch)? {
        return Err(anyhow!(Interrupted(sig)));
    }
    let begun = probes.begin()?;
    let t0 = Instant::now();
    let start = snapshot(Edge::Start);
    let interrupted = wait_watching(t0 + ending.duration, ending.poll, ending.done, watch)?;
    let t1 = Instant::now();
    let end = snapshot(Edge::End);
    let probes = probes.end(begun)?;
    Ok(Window { seconds: (t1 - t0).as_secs_f64(), start, end, probes, interrupted })
}
