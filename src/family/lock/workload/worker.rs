//! The measured loop each worker runs, thread or process: lock, witness,
//! hold, unlock, publish, idle; and, with fault injection, dying inside the
//! critical section when the fault is armed.

use crate::family::lock::workload::fault::{monotonic_ns, Fault, FAULT_ARMED, FAULT_FIRED};
use crate::family::lock::workload::shared::{HoldTally, LockArena, HOLDING, IDLE, WAITING};
use crate::model::value::Work;
use locks::{LockStats, RawLock};
use std::sync::atomic::Ordering::Relaxed;

/// Runs one worker until the stop flag rises.
#[inline(never)]
pub(super) fn worker<L: RawLock>(arena: &LockArena<L>, me: usize, hold: Work, idle: Work, inject: bool) {
    let header = arena.header();
    if !header.gate.arrive_and_wait() {
        return;
    }
    let (lock, slot) = (arena.lock(), arena.slot(me));
    let node = L::Node::default();
    let mut stats = LockStats::default();
    let stretched_above = hold.stretched_above();
    let mut acquisitions = 0u64;
    let mut held = HoldTally::default();
    while !header.stop.load(Relaxed) {
        slot.state.store(WAITING, Relaxed);
        let recovered_before = stats.recoveries;
        let this_hold = lock.with(&node, &mut stats, || {
            slot.state.store(HOLDING, Relaxed);
            if inject {
                die_if_armed(&header.fault, me);
            }
            // Read on entry, write on exit: any overlap during the hold, not
            // just in a nanosecond-wide gap, loses an increment.
            let seen = header.witness.load(Relaxed);
            let spent = hold.run();
            header.witness.store(seen + 1, Relaxed);
            spent
        });
        slot.state.store(IDLE, Relaxed);
        // Only after a death is there a recovery to note: the clock is not
        // read in the measured loop otherwise.
        let told = stats.recoveries != recovered_before;
        if told || (inject && header.fault.state.load(Relaxed) == FAULT_FIRED) {
            note_recovery(&header.fault, me, this_hold, told);
        }
        held.ns += this_hold;
        held.stretched += u64::from(this_hold > stretched_above);
        acquisitions += 1;
        slot.publish(acquisitions, &held, &stats);
        idle.run();
    }
}

/// After an acquisition that ended a hold of `hold_ns`, once the victim
/// has died: the first acquisition after the death is the recovery,
/// whether the lock told us (EOWNERDEAD, `told`) or the kernel released
/// it. A hold that began before the kill (it ended just before the
/// victim's) does not count.
#[cold]
fn note_recovery(fault: &Fault, me: usize, hold_ns: u64, told: bool) {
    if fault.recovered_at_ns.load(Relaxed) != 0 {
        return;
    }
    let acquired_at = monotonic_ns().saturating_sub(hold_ns);
    let after_death = told || (1..=acquired_at).contains(&fault.killed_at_ns.load(Relaxed));
    if after_death && fault.recovered_at_ns.compare_exchange(0, acquired_at, Relaxed, Relaxed).is_ok() {
        fault.recovered_by.store(me as u32, Relaxed);
    }
}

/// Inside the critical section: if the fault is armed, this worker is the
/// victim. It records itself and dies holding the lock.
#[cold]
fn die_if_armed(fault: &Fault, me: usize) {
    if fault.state.load(Relaxed) == FAULT_ARMED
        && fault.state.compare_exchange(FAULT_ARMED, FAULT_FIRED, Relaxed, Relaxed).is_ok()
    {
        fault.victim.store(me as u32, Relaxed);
        fault.killed_at_ns.store(monotonic_ns(), Relaxed);
        let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
    }
}
