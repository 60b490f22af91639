//! Fault injection for --kill-holder-after: the shared state armed by the
//! coordinator and fired by the worker that holds the lock, the
//! coordinator's side that arms it and judges the outcome, and the report.

use crate::engine::procs::Children;
use crate::model::lock::{FaultReport, Point};
use anyhow::{bail, Result};
use locks::RawLock;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// The fault injected by --kill-holder-after, in shared memory: armed by
/// the coordinator, fired by the first worker that sees it while holding
/// the lock (it records itself and raises SIGKILL), and the recovery
/// stamped by the first acquisition that finds the owner dead.
#[derive(Default)]
pub struct Fault {
    pub(super) state: AtomicU32,
    pub(super) victim: AtomicU32,
    pub(super) killed_at_ns: AtomicU64,
    pub(super) recovered_at_ns: AtomicU64,
    pub(super) recovered_by: AtomicU32,
}

// The fault's state starts at 0 (not armed), as Default makes it.
pub(super) const FAULT_ARMED: u32 = 1;
pub(super) const FAULT_FIRED: u32 = 2;

/// CLOCK_MONOTONIC in ns: the same clock in every process (the one the
/// hold loop reads, `Work::run`).
pub(super) use locks::sys::clock::monotonic_ns;

/// The coordinator's side of --kill-holder-after: arms the fault once the
/// window has run that long, and once the victim is dead either lets the
/// run go on (robust locks recover) or ends it with an explanation.
pub(super) struct Injector {
    arm_at: Option<Instant>,
    armed_ns: u64,
}

impl Injector {
    pub(super) fn new(point: &Point) -> Self {
        Self {
            arm_at: Some(Instant::now() + point.warmup() + Duration::from_nanos(point.kill_holder_after_ns)),
            armed_ns: 0,
        }
    }

    pub(super) fn tick<L: RawLock>(
        &mut self,
        point: &Point,
        fault: &Fault,
        children: &mut Children,
    ) -> Result<()> {
        if self.arm_at.is_some_and(|at| Instant::now() >= at) {
            self.arm_at = None;
            self.armed_ns = monotonic_ns();
            fault.state.store(FAULT_ARMED, Relaxed);
        }
        if fault.state.load(Relaxed) != FAULT_FIRED {
            return Ok(());
        }
        let victim = fault.victim.load(Relaxed) as usize;
        let survives = L::CAPS.robust || L::CAPS.released_on_death;
        if children.expect_death(victim) && !survives {
            bail!(
                "worker process {victim} (pid {}) was killed inside its critical section \
                 (--kill-holder-after); lock `{}` has no owner-death recovery, so the others \
                 could never acquire it again: the run stops here (locks that survive it: {})",
                children.pids()[victim],
                point.lock,
                crate::family::lock::registry::names_with(|c| c.robust || c.released_on_death)
            );
        }
        Ok(())
    }
}

/// The fault report, once a victim has died.
pub(super) fn fault_report<L: RawLock>(
    point: &Point,
    fault: &Fault,
    pids: Option<&[nix::unistd::Pid]>,
) -> Option<FaultReport> {
    if point.kill_holder_after_ns == 0 || fault.state.load(Relaxed) != FAULT_FIRED {
        return None;
    }
    let victim = fault.victim.load(Relaxed) as usize;
    let killed = fault.killed_at_ns.load(Relaxed);
    let recovered = fault.recovered_at_ns.load(Relaxed);
    Some(FaultReport {
        victim,
        victim_pid: pids.and_then(|p| p.get(victim)).map_or(0, |p| p.as_raw()),
        killed_after_s: point.kill_holder_after_ns as f64 / 1e9,
        recovered_by: (recovered != 0).then(|| fault.recovered_by.load(Relaxed) as usize),
        recovery_us: (recovered != 0).then(|| recovered.saturating_sub(killed) as f64 / 1e3),
        recovered_how: if L::CAPS.robust {
            "eownerdead"
        } else if L::CAPS.released_on_death {
            "kernel_release"
        } else {
            "none"
        },
    })
}
