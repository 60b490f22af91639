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
//!
//! A reader-writer lock's workers (`rw_worker`, threads only) draw read
//! or write per acquisition. Its writers keep the witness, which must then
//! equal the writes; its readers check that no writer was inside while
//! they were, and a run with one such read fails.

mod fault;
mod placement;
mod rw_worker;
mod shared;
mod stall;
mod worker;

use crate::engine::crew::{Close, Crew, Stuck};
use crate::engine::{measure_window, wait_arrivals, Ending, Interrupted, Window};
use crate::measure::children;
use crate::measure::fairness::Fairness;
use crate::measure::futex::FutexCounters;
use crate::measure::latency::Distribution;
use crate::measure::shared_hist::Counts;
use crate::measure::{Probes, UsageSource};
use crate::model::lock::Point;
use crate::model::lock::{AcquireLatency, LockCounters, LockSample, MemoryUse, RwSample, WorkerCounts};
use anyhow::{anyhow, bail, Context, Result};
use crossbeam_utils::CachePadded;
use fault::{fault_report, Injector};
use locks::sys::lockfile::InlinePath;
use locks::{LockConfig, ProcessShared, RawLock, RawRwLock};
use shared::{witnessed, Header, LockArena, LockCell, LockTable};
use stall::StallWatch;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use worker::{worker, Cycle};

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
    /// File locks open and close the lock file around every acquisition
    /// (`--reopen`).
    pub reopen: bool,
}

impl RunContext {
    /// This context with `futex` in place of its own counters (a counting
    /// run's). Every field is named, so a new one cannot be left behind.
    pub fn with_futex(&self, futex: Option<FutexCounters>) -> RunContext {
        let RunContext { futex: _, lock_file, sysv_set, reopen } = self;
        RunContext { futex, lock_file: *lock_file, sysv_set: *sysv_set, reopen: *reopen }
    }
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
        reopen: ctx.reopen,
    }
}

/// Where workers that do not leave are stuck, with the lock word as they
/// left it (where the lock has one): it tells a lost wake-up (sleepers
/// counted, nobody holding) from a holder that died.
fn stuck<'a>(detail: &'a dyn Fn() -> Option<String>) -> Stuck<'a> {
    Stuck { place: "the lock", why: "a lost wake-up, or a peer died or stopped holding it", detail }
}

/// The lock table of a point with `--locks` above 1 (None for one lock),
/// in memory the workers share: MAP_SHARED for processes.
fn table<L: RawLock>(point: &Point, ctx: &RunContext, shared: bool) -> Result<Option<LockTable<L>>> {
    if point.locks <= 1 {
        return Ok(None);
    }
    let config = lock_config(point, ctx);
    let cells = (0..point.locks)
        .map(|_| {
            L::try_new(&config).map(|lock| CachePadded::new(LockCell { lock, witness: Default::default() }))
        })
        .collect::<Result<Vec<_>, String>>()
        .and_then(|cells| LockTable::plain(shared, (), cells))
        .map_err(|why| anyhow!("creating {} locks `{}`: {why}", point.locks, point.lock))?;
    Ok(Some(cells))
}

/// Runs one point with lock type `L` in worker threads.
pub fn run<L: RawLock>(point: &Point, ctx: &RunContext) -> Result<LockSample> {
    let n = point.workers as usize;
    set_futex_hash(point)?;
    let arena = LockArena::<L>::private(&lock_config(point, ctx), Header::default(), n, Default::default)
        .map_err(|why| anyhow!("creating lock `{}`: {why}", point.lock))?;
    let table = table::<L>(point, ctx, false)?;
    let (arena, table) = (&arena, table.as_ref());
    let plan = placement::plan(point)?;
    let plan = plan.as_slice();
    std::thread::scope(|scope| {
        let cycle = Cycle::of(point);
        let crew = Crew::threads(scope, n, &arena.header().gate, move |i| {
            placement::pin(arena.header(), plan, i);
            worker(arena, table, i, cycle, false)
        })
        .inspect_err(|_| arena.header().stop.store(true, Relaxed))?;
        measure::<L, ()>(point, ctx, arena, table, crew, None, plan)
    })
    .map(|sample| futex_hash_after(point, sample))
    .with_context(|| format!("running lock `{}`", point.lock))
}

/// Runs one point of a reader-writer lock `L` in worker threads, each
/// drawing read or write per acquisition (`point.read_pct`; a point
/// without one, as the lock checks build, takes it only to write).
pub fn run_rw<L: RawRwLock>(point: &Point, ctx: &RunContext) -> Result<LockSample> {
    let n = point.workers as usize;
    let read_pct = point.read_pct.unwrap_or(0);
    set_futex_hash(point)?;
    let arena = LockArena::<L>::private(&lock_config(point, ctx), Header::default(), n, Default::default)
        .map_err(|why| anyhow!("creating lock `{}`: {why}", point.lock))?;
    let arena = &arena;
    let plan = placement::plan(point)?;
    let plan = plan.as_slice();
    std::thread::scope(|scope| {
        let cycle = Cycle::of(point);
        let crew = Crew::threads(scope, n, &arena.header().gate, move |i| {
            placement::pin(arena.header(), plan, i);
            rw_worker::rw_worker(arena, i, cycle, read_pct)
        })
        .inspect_err(|_| arena.header().stop.store(true, Relaxed))?;
        measure::<L, ()>(point, ctx, arena, None, crew, None, plan)
    })
    .map(|sample| futex_hash_after(point, sample))
    .with_context(|| format!("running lock `{}`", point.lock))
}

/// Sets the process's private futex hash for a point that asks for one,
/// before its workers exist: the kernel resizes it while no futex waits.
fn set_futex_hash(point: &Point) -> Result<()> {
    if let Some(buckets) = point.futex_hash {
        locks::sys::kernel_knobs::set_futex_hash_slots(buckets)
            .with_context(|| format!("setting a private futex hash of {buckets} buckets"))?;
    }
    Ok(())
}

/// Records the hash size the kernel reports after the window, for a
/// point that set one.
fn futex_hash_after(point: &Point, mut sample: LockSample) -> LockSample {
    if point.futex_hash.is_some() {
        sample.futex_hash_slots = locks::sys::kernel_knobs::futex_hash_slots().ok();
    }
    sample
}

/// Runs one point with lock type `L` in forked worker processes.
pub fn run_procs<L: ProcessShared>(point: &Point, ctx: &RunContext) -> Result<LockSample> {
    let n = point.workers as usize;
    let arena = LockArena::<L>::shared(&lock_config(point, ctx), Header::default(), n, Default::default)
        .map_err(|why| anyhow!("creating lock `{}`: {why}", point.lock))?;
    // L is ProcessShared, so its table may live in MAP_SHARED memory
    // (what `LockTable::plain` leaves to its caller to check).
    let table = table::<L>(point, ctx, true)?;
    let cycle = Cycle::of(point);
    let inject = point.kill_holder_after_ns > 0;
    let plan = placement::plan(point)?;
    let crew = Crew::<()>::processes(n, &arena.header().gate, |i| {
        placement::pin(arena.header(), &plan, i);
        worker(&arena, table.as_ref(), i, cycle, inject);
        0
    })?;
    let injector = inject.then(|| Injector::new(point));
    measure::<L, ()>(point, ctx, &arena, table.as_ref(), crew, injector, &plan)
        .with_context(|| format!("running lock `{}` in {n} processes", point.lock))
}

/// Everything after the workers exist: arrivals, window, stop, drain,
/// mutual-exclusion check.
fn measure<L: RawLock, T: Send>(
    point: &Point,
    ctx: &RunContext,
    arena: &LockArena<L>,
    table: Option<&LockTable<L>>,
    crew: Crew<'_, T>,
    mut injector: Option<Injector>,
    plan: &[Option<usize>],
) -> Result<LockSample> {
    let header = arena.header();
    let n = arena.len();
    let usage = crew.usage();
    let worker_pids = match &usage {
        UsageSource::Children(pids) => Some(pids.clone()),
        UsageSource::SelfProcess => None,
    };
    let crew = RefCell::new(crew);
    let mut stall = StallWatch::new(point.stall());
    let mut watch = || -> Result<()> {
        let mut crew = crew.borrow_mut();
        if let (Some(injector), Some(children)) = (injector.as_mut(), crew.children()) {
            injector.tick::<L>(point, &arena.header().fault, children)?;
        }
        crew.check(|_| false, |i| format!("worker thread {i}"))?;
        stall.check(point, arena, table)
    };
    let probes = Probes::new(ctx.futex.as_ref(), usage);
    let timed = point.latency_every > 0;
    let rw = point.read_pct.is_some();
    let snapshot = || {
        let counts = (0..n).map(|i| arena.slot(i).read(rw)).collect::<Vec<_>>();
        let (mut latency, mut read_latency) = (Counts(Vec::new()), Counts(Vec::new()));
        if timed {
            latency = Counts::default();
            (0..n).for_each(|i| arena.slot(i).latency.add_to(&mut latency.0));
        }
        if timed && rw {
            read_latency = Counts::default();
            (0..n).for_each(|i| arena.slot(i).read_latency.add_to(&mut read_latency.0));
        }
        // The histograms were read after the counters: the acquisitions
        // they saw lie between the two counts.
        let acquired_after =
            if timed { (0..n).map(|i| arena.slot(i).read(rw).acquisitions).sum() } else { 0 };
        Reading { counts, latency, read_latency, acquired_after }
    };
    let (window, worker_rss) = {
        // Stops the workers on every way out of this block.
        let _stop = StopOnDrop(&header.stop);
        // Every worker pinned itself (or noted why not) before arriving.
        let arrived =
            wait_arrivals(&header.gate, n, &mut watch).and_then(|()| placement::check(header, plan));
        let window = arrived.and_then(|()| {
            measure_window(
                &header.gate,
                point.warmup(),
                &Ending::after(point.duration()),
                &probes,
                |_| snapshot(),
                &mut watch,
            )
        });
        (window, worker_pids.as_deref().and_then(children::rss_kib))
    };
    let word = || Some(format!("lock word: {}", stall::lock_words(arena, table)));
    let drained = crew.borrow_mut().finish(
        &Close::of(&window),
        point.drain_grace(),
        &format!("running lock `{}`", point.lock),
        &stuck(&word),
    );
    let window = match (window, drained) {
        (Ok(w), Ok(_)) => w,
        (Err(e), Ok(_)) | (Ok(_), Err(e)) => return Err(e),
        // An interrupt is the cause; anything else gains the drain's
        // finding (which worker panicked, and why).
        (Err(e), Err(_)) if e.is::<Interrupted>() => return Err(e),
        (Err(e), Err(d)) => bail!("{e:#}: {d:#}"),
    };

    let finals: Vec<WorkerCounts> = (0..n).map(|i| arena.slot(i).read(rw)).collect();
    let total: u64 = finals.iter().map(|w| w.acquisitions).sum();
    // Only writers keep the witness in a reader-writer run.
    let exclusive = total - finals.iter().map(|w| w.reads).sum::<u64>();
    let witness = witnessed(arena, table);
    if L::CAPS.exclusive && witness != exclusive {
        bail!(
            "mutual exclusion violated by lock `{}`: the counters incremented inside the \
             critical sections read {witness}, but the workers completed {exclusive} {}critical \
             sections ({} increments lost to overlapping critical sections)",
            point.lock,
            if rw { "write " } else { "" },
            exclusive.abs_diff(witness)
        );
    }
    let overlaps: u64 = (0..n).map(|i| arena.slot(i).overlaps()).sum();
    if overlaps > 0 {
        bail!(
            "lock `{}` let readers in beside a writer: {overlaps} reads saw a writer inside or its \
             witness move during their hold",
            point.lock
        );
    }
    let fault = fault_report::<L>(point, &header.fault, worker_pids.as_deref());
    let memory = MemoryUse {
        coordinator_peak_kib: children::own_peak_rss_kib(),
        worker_rss_mean_kib: worker_rss.map(|(mean, _)| mean),
        worker_rss_max_kib: worker_rss.map(|(_, max)| max),
    };
    let mut sample = summarize::<L>(window, total, memory, point);
    sample.fault = fault;
    Ok(sample)
}

/// The workers' counters and latency histograms at one edge of the window.
struct Reading {
    counts: Vec<WorkerCounts>,
    latency: Counts,
    read_latency: Counts,
    /// The acquisitions, all workers, read again after the histograms
    /// (0 when nothing is timed): the reader can be preempted between
    /// the counters and the histograms, so only this bracket is exact.
    acquired_after: u64,
}

impl Reading {
    /// The acquisitions, all workers, read before the histograms.
    fn acquired(&self) -> u64 {
        self.counts.iter().map(|w| w.acquisitions).sum()
    }
}

fn summarize<L: RawLock>(
    window: Window<Reading>,
    total: u64,
    memory: MemoryUse,
    point: &Point,
) -> LockSample {
    let latency_every = point.latency_every;
    let (end, start) = (&window.end, &window.start);
    let workers: Vec<WorkerCounts> =
        end.counts.iter().zip(&start.counts).map(|(&end, &start)| end - start).collect();
    let acquisitions: u64 = workers.iter().map(|w| w.acquisitions).sum();
    let timed = latency_every > 0;
    let (writes_waited, reads_waited) = (
        end.latency.since(&start.latency).to_latencies(),
        end.read_latency.since(&start.read_latency).to_latencies(),
    );
    let rw = point.read_pct.map(|_| {
        let reads: u64 = workers.iter().map(|w| w.reads).sum();
        let writes = acquisitions - reads;
        RwSample {
            reads,
            writes,
            reads_per_s: reads as f64 / window.seconds,
            writes_per_s: writes as f64 / window.seconds,
            read_wait: timed.then(|| Distribution::of(&reads_waited)),
            write_wait: timed.then(|| Distribution::of(&writes_waited)),
        }
    });
    // Every timed wait, reads and writes together, for the columns and
    // figures every lock has.
    let acquire_latency = timed.then(|| {
        let mut all = writes_waited;
        all.merge(&reads_waited);
        AcquireLatency {
            every: latency_every,
            distribution: Distribution::of(&all),
            spans_at_least: end.acquired().saturating_sub(start.acquired_after),
            spans_at_most: end.acquired_after.saturating_sub(start.acquired()),
        }
    });
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
        acquire_latency,
        futex_hash_slots: None,
        rw,
        workers,
        total_acquisitions: total,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_lock_workers_sit_in_the_measured_section() {
        let section = crate::measure::section::bounds();
        let worker = super::worker::<locks::raw::FutexMutex> as *const () as usize;
        assert!(section.contains(&worker), "worker at {worker:#x}, section {section:x?}");
    }
}
