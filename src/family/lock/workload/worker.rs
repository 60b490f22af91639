//! The measured loop each worker runs, thread or process: lock, witness,
//! hold, unlock, publish, idle; and, with fault injection, dying inside the
//! critical section when the fault is armed. A run with no hold, no idle
//! and no fault runs a bare copy of the loop with none of that code in it.

use crate::family::lock::workload::fault::{monotonic_ns, Fault, FAULT_ARMED, FAULT_FIRED};
use crate::family::lock::workload::shared::{lock_of, LockArena, LockTable, Tally, HOLDING, IDLE, WAITING};
use crate::model::value::Work;
use locks::RawLock;
use std::sync::atomic::Ordering::Relaxed;

/// Runs `$cycle!(false)` (an untimed cycle) `$every` - 1 times, then
/// `$cycle!(true)` (a timed one), over and over until `$stop` rises;
/// `$every` 0 times none. Both workers' loops: a macro, not a function
/// taking a closure, so that each worker's `cycle!` expands in place and
/// the measured loop is the code it was when each spelled the loop out.
macro_rules! every_nth_timed {
    ($stop:expr, $every:expr, $cycle:ident) => {{
        let untimed = if $every == 0 { u64::MAX } else { u64::from($every) - 1 };
        'run: loop {
            for _ in 0..untimed {
                if $stop.load(std::sync::atomic::Ordering::Relaxed) {
                    break 'run;
                }
                $cycle!(false);
            }
            if $stop.load(std::sync::atomic::Ordering::Relaxed) {
                break;
            }
            $cycle!(true);
        }
    }};
}
pub(super) use every_nth_timed;

/// What a worker does each cycle, and how often it times an acquisition.
#[derive(Debug, Clone, Copy)]
pub(super) struct Cycle {
    pub(super) hold: Work,
    pub(super) idle: Work,
    pub(super) latency_every: u32,
}

impl Cycle {
    pub(super) fn of(point: &crate::model::lock::Point) -> Self {
        Self { hold: point.hold, idle: point.idle, latency_every: point.latency_every }
    }
}

/// Runs one worker until the stop flag rises. In the page-aligned
/// measured section (crate::measure::section), so its offsets do not move
/// with unrelated code.
#[inline(never)]
#[allow(unsafe_code)] // link_section: a named code section, nothing else.
#[link_section = "contend_measured"]
pub(super) fn worker<L: RawLock>(
    arena: &LockArena<L>,
    table: Option<&LockTable<L>>,
    me: usize,
    work: Cycle,
    inject: bool,
) {
    let Cycle { hold, idle, latency_every } = work;
    let header = arena.header();
    if !header.gate.arrive_and_wait() {
        return;
    }
    let ((lock, witness), slot) = (lock_of(arena, table, me), arena.slot(me));
    let node = L::Node::default();
    let mut stats = slot.lock_stats();
    let stretched_above = hold.stretched_above();
    let mut tally = Tally::default();
    // With no idle the IDLE state would last a few instructions: the
    // next cycle's WAITING follows at once, and the store is saved.
    let idles = !idle.is_none();
    // With fault injection: when the last hold began, if the victim had
    // died by then (0 otherwise).
    let entered_after_death = std::cell::Cell::new(0);
    // One cycle: lock, witness, hold, unlock, publish, idle. A macro, not
    // a closure, so that the timed and the untimed cycle are two copies of
    // the code with `$timed` a constant: the untimed one, nearly every
    // cycle, carries no trace of the timing (a runtime flag cost 4% at
    // hold 0 on one thread). The timed one reads the clock before lock()
    // and again on entry, where the hold's own start read is that second
    // read (Work::run_from).
    // `$bare` (a third constant) is the cycle of a run with no hold, no
    // idle and no fault injection: the lock, the witness, the state and
    // the count, nothing else. Testing at run time for each of those it
    // skips cost the no-op lock's loop 38 instructions and 7 taken
    // branches a cycle, 2.47 ns; the bare loop runs one in 0.83 ns, so at
    // hold 0 the lock, not the harness, sets the pace.
    macro_rules! any_cycle {
        ($timed:literal, $bare:literal) => {{
            slot.state.store(WAITING, Relaxed);
            // Only an injected death makes a recovery to note; the loop
            // reads no lock count otherwise (the slow paths publish them).
            let recovered_before = if !$bare && inject { stats.counts().recoveries } else { 0 };
            let asked = if $timed { monotonic_ns() } else { 0 };
            let (this_hold, acquired) = lock.with(&node, &mut stats, || {
                let acquired = if $timed { Some(monotonic_ns()) } else { None };
                slot.state.store(HOLDING, Relaxed);
                if !$bare && inject {
                    entered_after_death.set(at_entry(&header.fault, me));
                }
                // Read on entry, write on exit: any overlap during the hold,
                // not just in a nanosecond-wide gap, loses an increment.
                let seen = witness.load(Relaxed);
                let spent = if $bare { 0 } else { hold.run_from(acquired) };
                witness.store(seen + 1, Relaxed);
                (spent, acquired)
            });
            if !$bare && idles {
                slot.state.store(IDLE, Relaxed);
            }
            if let Some(acquired) = acquired {
                slot.latency.record(acquired.saturating_sub(asked));
            }
            // Only after a death is there a recovery to note: the clock is
            // not read in the measured loop otherwise. A lock that reports
            // the owner's death (EOWNERDEAD) names the recovery itself; for
            // one the kernel releases, it is the first hold that began
            // after the death.
            let told = stats.counts().recoveries != recovered_before;
            if !$bare && inject && (told || (entered_after_death.get() != 0 && !L::CAPS.robust)) {
                note_recovery(&header.fault, me, entered_after_death.get(), this_hold);
            }
            slot.count(&mut tally, this_hold, stretched_above);
            if !$bare {
                idle.run();
            }
        }};
    }
    macro_rules! cycle {
        ($timed:literal) => {
            any_cycle!($timed, false)
        };
    }
    macro_rules! bare_cycle {
        ($timed:literal) => {
            any_cycle!($timed, true)
        };
    }
    if !inject && hold.is_none() && idle.is_none() {
        every_nth_timed!(header.stop, latency_every, bare_cycle);
    } else {
        every_nth_timed!(header.stop, latency_every, cycle);
    }
}

/// After the acquisition that recovered from the victim's death: records
/// it if it is the first, with its time, `entered_ns` when the hold's
/// start was read (else estimated as now less the hold). (It used to judge
/// from now less the hold whether the hold began after the death: a
/// worker preempted between its unlock and this call looked as if it had
/// acquired after the death, and was named the recoverer in place of the
/// one EOWNERDEAD told; tests/holder.rs caught it once in CI.)
fn note_recovery(fault: &Fault, me: usize, entered_ns: u64, hold_ns: u64) {
    if fault.recovered_at_ns.load(Relaxed) != 0 {
        return;
    }
    let acquired_at = if entered_ns != 0 { entered_ns } else { monotonic_ns().saturating_sub(hold_ns) };
    if fault.recovered_at_ns.compare_exchange(0, acquired_at.max(1), Relaxed, Relaxed).is_ok() {
        fault.recovered_by.store(me as u32, Relaxed);
    }
}

/// Inside the critical section, with fault injection: if the fault is
/// armed, this worker is the victim; it records itself and dies holding
/// the lock. If the victim has died and nobody has recovered yet, returns
/// the time this hold began (it began after the death: the victim set
/// FAULT_FIRED inside its own critical section); else 0.
#[cold]
fn at_entry(fault: &Fault, me: usize) -> u64 {
    match fault.state.load(Relaxed) {
        FAULT_ARMED if fault.state.compare_exchange(FAULT_ARMED, FAULT_FIRED, Relaxed, Relaxed).is_ok() => {
            fault.victim.store(me as u32, Relaxed);
            fault.killed_at_ns.store(monotonic_ns(), Relaxed);
            let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
            0
        }
        FAULT_FIRED if fault.recovered_at_ns.load(Relaxed) == 0 => monotonic_ns().max(1),
        _ => 0,
    }
}
