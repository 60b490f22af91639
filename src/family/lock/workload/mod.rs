//! `contend lock`: N workers, threads or processes, contend for one lock.
//!
//! Each worker loops: lock; read the witness; hold; write the witness + 1;
//! unlock; publish its counters; idle. The loop is generic over the lock
//! type, so each registry entry gets its own monomorphized copy with no
//! dynamic dispatch. Threads and processes run the same loop on the same
//! arena (the lock, a header and a slot per worker), which is MAP_SHARED
//! when the workers are forked processes.
//!
//! Mutual exclusion is checked on every run with the witness: read when the
//! critical section starts and written (plus one) when it ends, not
//! incremented atomically. If two workers are ever inside at once,
//! increments get lost and the total no longer matches the sum of the
//! workers' acquisitions. (Relaxed atomics, not a plain integer, so a broken
//! lock shows up as a wrong count rather than undefined behaviour; on x86
//! both compile to the same mov/mov.)

mod fault;
mod shared;
mod stall;
mod worker;

use crate::engine::procs::Children;
use crate::engine::threads::{await_finished, join_all, spawn_workers};
use crate::engine::{measure_window, wait_arrivals, Ending, Interrupted, Window};
use crate::family::lock::spec::Point;
use crate::measure::children;
use crate::measure::fairness::Fairness;
use crate::measure::futex::FutexCounters;
use crate::measure::{Probes, UsageSource};
use crate::model::lock::{LockCounters, LockSample, MemoryUse, WorkerCounts};
use crate::session::emergency;
use crate::session::signals;
use anyhow::{anyhow, bail, Context, Result};
use fault::{fault_report, Injector};
use locks::sys::lockfile::InlinePath;
use locks::{LockConfig, ProcessShared, RawLock};
use shared::{Header, LockArena};
use stall::StallWatch;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Duration;
use worker::worker;

/// What every point of a sweep shares.
#[derive(Debug, Default)]
pub struct RunContext {
    /// Futex syscall counters, opened on the thread that runs the points,
    /// when counting is possible.
    pub futex: Option<FutexCounters>,
    /// The run's lock file, for locks that need one.
    pub lock_file: Option<InlinePath>,
    /// The run's SysV semaphore set (id, size), for `sysv`.
    pub sysv_set: Option<(i32, u16)>,
}

/// Raises the stop flag when dropped, so every exit from the coordinator,
/// errors included, lets the workers finish.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Relaxed);
    }
}

fn lock_config(point: &Point, ctx: &RunContext) -> LockConfig {
    LockConfig {
        spin: point.spin.unwrap_or(LockConfig::DEFAULT_SPIN),
        spinners: point.spinners.map(Into::into).unwrap_or_default(),
        lock_file: ctx.lock_file,
        sysv_set: ctx.sysv_set,
    }
}

/// Worker threads did not leave the lock: they can be neither killed nor
/// joined, so the run takes the emergency exit. The lock word as they
/// left it (where the lock has one) is what tells a lost wake-up apart.
#[derive(Debug, thiserror::Error)]
#[error("{0} worker thread(s) did not stop within {1:?}: stuck in the lock (lock word: {2})")]
struct StuckThreads(usize, Duration, String);

/// Runs one point with lock type `L` in worker threads.
pub fn run<L: RawLock>(point: &Point, ctx: &RunContext) -> Result<LockSample> {
    let n = point.workers as usize;
    let arena = LockArena::<L>::private(&lock_config(point, ctx), Header::default(), n, Default::default)
        .map_err(|why| anyhow!("creating lock `{}`: {why}", point.lock))?;
    let arena = &arena;
    std::thread::scope(|scope| {
        let (hold, idle) = (point.hold, point.idle);
        let handles = spawn_workers(scope, n, &arena.header().gate, move |i| {
            worker(arena, i, hold, idle, false)
        });
        let handles = RefCell::new(Some(
            handles.inspect_err(|_| arena.header().stop.store(true, Relaxed))?,
        ));
        let mut stall = StallWatch::new(point.stall());
        let mut watch = || -> Result<()> {
            match handles.borrow().as_ref() {
                Some(h) if h.iter().any(|h| h.is_finished()) => {
                    bail!("a worker thread stopped early (it panicked)")
                }
                _ => stall.check(point, arena),
            }
        };
        // Threads cannot be killed, only joined once they leave the lock:
        // wait for that (briefly after a failure, when they may be stuck),
        // watching for interrupts; if they do not, the caller takes the
        // emergency exit.
        let mut finish = |failed: bool| -> Result<()> {
            let grace = if failed {
                Duration::from_secs(1)
            } else {
                point.drain_grace()
            };
            let unfinished = await_finished(&handles, grace);
            if unfinished > 0 {
                let word = stall::lock_word(arena.lock());
                return Err(anyhow!(StuckThreads(unfinished, grace, word)));
            }
            join_all(handles.borrow_mut().take().unwrap_or_default()).map(|_| ())
        };
        measure::<L>(
            point,
            ctx,
            arena,
            UsageSource::SelfProcess,
            &mut watch,
            &mut finish,
        )
    })
    .with_context(|| format!("running lock `{}`", point.lock))
}

/// Runs one point with lock type `L` in forked worker processes.
pub fn run_procs<L: ProcessShared>(point: &Point, ctx: &RunContext) -> Result<LockSample> {
    let n = point.workers as usize;
    let arena = LockArena::<L>::shared(&lock_config(point, ctx), Header::default(), n, Default::default)
        .map_err(|why| anyhow!("creating lock `{}`: {why}", point.lock))?;
    let (hold, idle) = (point.hold, point.idle);
    let inject = point.kill_holder_after_ns > 0;
    let children = RefCell::new(Children::spawn(n, &arena.header().gate, |i| {
        worker(&arena, i, hold, idle, inject);
        0
    })?);
    let usage = UsageSource::Children(children.borrow().pids().to_vec());
    let mut stall = StallWatch::new(point.stall());
    let mut injector = inject.then(|| Injector::new(point));
    let mut watch = || {
        if let Some(injector) = injector.as_mut() {
            injector.tick::<L>(point, &arena, &mut children.borrow_mut())?;
        }
        children.borrow_mut().check()?;
        stall.check(point, &arena)
    };
    // After a failure (a worker died, perhaps holding the lock) there is
    // nothing to drain: kill the rest at once instead of waiting them out.
    let mut finish = |failed: bool| {
        let grace = if failed {
            Duration::ZERO
        } else {
            point.drain_grace()
        };
        // The lock word tells a lost wake-up (sleepers counted, nobody
        // holding) from a holder that died, as the threads' message does.
        children
            .borrow_mut()
            .finish(grace)
            .map_err(|e| anyhow!("{e:#}; lock word: {}", stall::lock_word(arena.lock())))
    };
    measure::<L>(point, ctx, &arena, usage, &mut watch, &mut finish)
        .with_context(|| format!("running lock `{}` in {n} processes", point.lock))
}

/// Everything after the workers exist: arrivals, window, stop, drain,
/// mutual-exclusion check.
fn measure<L: RawLock>(
    point: &Point,
    ctx: &RunContext,
    arena: &LockArena<L>,
    usage: UsageSource,
    watch: &mut dyn FnMut() -> Result<()>,
    finish: &mut dyn FnMut(bool) -> Result<()>,
) -> Result<LockSample> {
    let header = arena.header();
    let n = arena.len();
    let worker_pids = match &usage {
        UsageSource::Children(pids) => Some(pids.clone()),
        UsageSource::SelfProcess => None,
    };
    let probes = Probes::new(ctx.futex.as_ref(), usage);
    let snapshot = || (0..n).map(|i| arena.slot(i).read()).collect::<Vec<_>>();
    let (window, worker_rss) = {
        // Stops the workers on every way out of this block.
        let _stop = StopOnDrop(&header.stop);
        let window = wait_arrivals(&header.gate, n, watch).and_then(|()| {
            measure_window(
                &header.gate,
                point.warmup(),
                &Ending::after(point.duration()),
                &probes,
                |_| snapshot(),
                watch,
            )
        });
        (window, worker_pids.as_deref().and_then(children::rss_kib))
    };
    // An interrupt is not a failure: the workers get the full drain.
    let interrupted = match &window {
        Ok(w) => w.interrupted,
        Err(e) => e.downcast_ref::<Interrupted>().map(|i| i.0),
    };
    let drained = finish(window.is_err() && interrupted.is_none());
    if let Some(stuck) = drained
        .as_ref()
        .err()
        .and_then(|e| e.downcast_ref::<StuckThreads>())
    {
        let cause = window
            .as_ref()
            .err()
            .map_or(String::new(), |e| format!("{e:#}; then "));
        let code = interrupted.map_or(1, signals::exit_status);
        emergency::exit(code, &format!("running lock `{}`: {cause}{stuck}", point.lock));
    }
    let window = match (window, drained) {
        (Ok(w), Ok(())) => w,
        (Err(e), Ok(())) | (Ok(_), Err(e)) => return Err(e),
        // An interrupt is the cause; anything else gains the drain's
        // finding (which worker panicked, and why).
        (Err(e), Err(_)) if e.is::<Interrupted>() => return Err(e),
        (Err(e), Err(d)) => bail!("{e:#}: {d:#}"),
    };

    let total: u64 = (0..n).map(|i| arena.slot(i).read().acquisitions).sum();
    let witness = header.witness.load(Relaxed);
    if L::CAPS.exclusive && witness != total {
        bail!(
            "mutual exclusion violated by lock `{}`: the counter incremented inside the \
             critical section reads {witness}, but the workers completed {total} critical \
             sections ({} increments lost to overlapping critical sections)",
            point.lock,
            total.abs_diff(witness)
        );
    }
    let fault = fault_report::<L>(point, &header.fault, worker_pids.as_deref());
    let memory = MemoryUse {
        coordinator_peak_kib: children::own_peak_rss_kib(),
        worker_rss_mean_kib: worker_rss.map(|(mean, _)| mean),
        worker_rss_max_kib: worker_rss.map(|(_, max)| max),
    };
    let mut sample = summarize::<L>(window, total, memory);
    sample.fault = fault;
    Ok(sample)
}

fn summarize<L: RawLock>(window: Window<Vec<WorkerCounts>>, total: u64, memory: MemoryUse) -> LockSample {
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
        run: Default::default(),
        window_s: window.seconds,
        acquisitions,
        cs_per_s: acquisitions as f64 / window.seconds,
        mean_hold_ns: (hold_ns > 0 && acquisitions > 0).then(|| hold_ns as f64 / acquisitions as f64),
        stretched_holds: workers.iter().map(|w| w.stretched_holds).sum(),
        fairness: Fairness::of(&counts),
        cpu: window.probes.cpu,
        process: window.probes.process,
        memory,
        fault: None,
        interrupted: window.interrupted.map(|sig| sig.as_str().to_string()),
        futex: window.probes.futex,
        coordinator_cpu_s: window.probes.coordinator_cpu_s,
        lock_counters,
        workers,
        total_acquisitions: total,
    }
}
