//! `contend lock`: N threads contend for one lock.
//!
//! Each worker loops: lock; bump the witness counter; hold; unlock; publish
//! its counters; idle. The loop is generic over the lock type, so each
//! registry entry gets its own monomorphized copy with no dynamic dispatch.
//!
//! Mutual exclusion is checked on every run with a witness counter that is
//! read when the critical section starts and written (plus one) when it
//! ends, not incremented atomically: if two workers are ever inside at once,
//! increments get lost and the total no longer matches. (Relaxed atomics,
//! not a plain integer, so a broken lock shows up as a wrong count rather
//! than undefined behaviour; on x86 both compile to the same mov/mov.)

use super::lock_sample::{LockCounters, LockSample, WorkerCounts};
use crate::measure::fairness::Fairness;
use crate::measure::futex::FutexCounters;
use crate::measure::Probes;
use crate::parse::Work;
use crate::runner::threads::spawn_workers;
use crate::runner::{measure_window, StartGate};
use crate::spec::Point;
use anyhow::{bail, Context, Result};
use crossbeam_utils::CachePadded;
use locks::{LockConfig, LockStats, RawLock};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// What every point of a sweep shares.
#[derive(Debug, Default)]
pub struct RunContext {
    /// Futex syscall counters, opened on the thread that runs the points,
    /// when counting is possible.
    pub futex: Option<FutexCounters>,
}

/// A worker's published counters: written only by their owner, read by the
/// coordinator at the window edges; each in its own cache line.
#[derive(Default)]
struct Slot {
    acquisitions: AtomicU64,
    hold_ns: AtomicU64,
    stretched_holds: AtomicU64,
    spins: AtomicU64,
    waits: AtomicU64,
    wakes: AtomicU64,
}

impl Slot {
    #[inline(always)]
    fn publish(&self, acquisitions: u64, hold: &HoldTally, stats: &LockStats) {
        self.acquisitions.store(acquisitions, Relaxed);
        self.hold_ns.store(hold.ns, Relaxed);
        self.stretched_holds.store(hold.stretched, Relaxed);
        self.spins.store(stats.spins, Relaxed);
        self.waits.store(stats.waits, Relaxed);
        self.wakes.store(stats.wakes, Relaxed);
    }

    fn read(&self) -> WorkerCounts {
        WorkerCounts {
            acquisitions: self.acquisitions.load(Relaxed),
            hold_ns: self.hold_ns.load(Relaxed),
            stretched_holds: self.stretched_holds.load(Relaxed),
            spins: self.spins.load(Relaxed),
            waits: self.waits.load(Relaxed),
            wakes: self.wakes.load(Relaxed),
        }
    }
}

/// A worker's running total of hold time and of holds stretched by
/// preemption.
#[derive(Default)]
struct HoldTally {
    ns: u64,
    stretched: u64,
}

struct Shared<L> {
    lock: CachePadded<L>,
    witness: CachePadded<AtomicU64>,
    stop: CachePadded<AtomicBool>,
    slots: Vec<CachePadded<Slot>>,
    gate: StartGate,
}

/// Raises the stop flag when dropped, so every exit from the coordinator,
/// errors included, lets the workers finish and the scope join them.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Relaxed);
    }
}

#[inline(never)]
fn worker<L: RawLock>(sh: &Shared<L>, me: usize, hold: Work, idle: Work) -> u64 {
    if !sh.gate.arrive_and_wait() {
        return 0;
    }
    let slot = &sh.slots[me];
    let node = L::Node::default();
    let mut stats = LockStats::default();
    let stretched_above = hold.stretched_above();
    let mut acquisitions = 0u64;
    let mut held = HoldTally::default();
    while !sh.stop.load(Relaxed) {
        let this_hold = sh.lock.with(&node, &mut stats, || {
            // Read on entry, write on exit: any overlap during the hold, not
            // just in a nanosecond-wide gap, loses an increment.
            let seen = sh.witness.load(Relaxed);
            let spent = hold.run();
            sh.witness.store(seen + 1, Relaxed);
            spent
        });
        held.ns += this_hold;
        held.stretched += u64::from(this_hold > stretched_above);
        acquisitions += 1;
        slot.publish(acquisitions, &held, &stats);
        idle.run();
    }
    acquisitions
}

/// Runs one point with lock type `L`.
pub fn run<L: RawLock>(point: &Point, ctx: &RunContext) -> Result<LockSample> {
    let threads = point.threads as usize;
    let config = LockConfig {
        spin: point.spin.unwrap_or(LockConfig::DEFAULT_SPIN),
        spinners: point.spinners.map(Into::into).unwrap_or_default(),
    };
    let lock = L::try_new(&config).map_err(|why| anyhow::anyhow!("creating lock `{}`: {why}", point.lock))?;
    let sh = Shared {
        lock: CachePadded::new(lock),
        witness: CachePadded::new(AtomicU64::new(0)),
        stop: CachePadded::new(AtomicBool::new(false)),
        slots: (0..threads).map(|_| CachePadded::new(Slot::default())).collect(),
        gate: StartGate::default(),
    };
    let probes = Probes::new(ctx.futex.as_ref());
    let snapshot = || sh.slots.iter().map(|s| s.read()).collect::<Vec<_>>();

    let (window, totals) = std::thread::scope(|scope| -> Result<_> {
        let stop = StopOnDrop(&sh.stop);
        let (sh_ref, hold, idle) = (&sh, point.hold, point.idle);
        let handles = spawn_workers(scope, threads, &sh.gate, move |i| {
            worker::<L>(sh_ref, i, hold, idle)
        })?;
        let window = measure_window(&sh.gate, point.warmup(), point.duration(), &probes, snapshot);
        drop(stop);
        let totals = handles
            .into_iter()
            .map(|h| h.join())
            .collect::<Result<Vec<u64>, _>>()
            .map_err(|_| anyhow::anyhow!("a worker thread panicked under lock `{}`", point.lock))?;
        Ok((window?, totals))
    })
    .with_context(|| format!("running lock `{}`", point.lock))?;

    let total: u64 = totals.iter().sum();
    let witness = sh.witness.load(Relaxed);
    if L::CAPS.exclusive && witness != total {
        bail!(
            "mutual exclusion violated by lock `{}`: the counter incremented inside the \
             critical section reads {witness}, but the workers completed {total} critical \
             sections ({} increments lost to overlapping critical sections)",
            point.lock,
            total.abs_diff(witness)
        );
    }
    Ok(summarize::<L>(window, total))
}

fn summarize<L: RawLock>(window: crate::runner::Window<Vec<WorkerCounts>>, total: u64) -> LockSample {
    let workers: Vec<WorkerCounts> = window
        .end
        .iter()
        .zip(&window.start)
        .map(|(&end, &start)| end - start)
        .collect();
    let acquisitions: u64 = workers.iter().map(|w| w.acquisitions).sum();
    let hold_ns: u64 = workers.iter().map(|w| w.hold_ns).sum();
    let counts: Vec<u64> = workers.iter().map(|w| w.acquisitions).collect();
    let lock_counters = L::CAPS.counters.then(|| LockCounters {
        spins: workers.iter().map(|w| w.spins).sum(),
        waits: workers.iter().map(|w| w.waits).sum(),
        wakes: workers.iter().map(|w| w.wakes).sum(),
    });
    LockSample {
        window_s: window.seconds,
        acquisitions,
        cs_per_s: acquisitions as f64 / window.seconds,
        mean_hold_ns: (hold_ns > 0 && acquisitions > 0).then(|| hold_ns as f64 / acquisitions as f64),
        stretched_holds: workers.iter().map(|w| w.stretched_holds).sum(),
        fairness: Fairness::of(&counts),
        cpu: window.probes.cpu,
        process: window.probes.process,
        futex: window.probes.futex,
        lock_counters,
        workers,
        total_acquisitions: total,
    }
}
