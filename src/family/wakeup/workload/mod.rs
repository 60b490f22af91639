//! `contend wakeup`: pairs ping-pong through a primitive and side A of
//! each records the latencies (see `pair` for one round). Threads and
//! processes run the same two sides on the same arena: a header (start
//! gate, phase) and one slot per pair holding its two channels and the
//! stamps B hands to A. The arena is MAP_SHARED for processes, which also
//! inherit the descriptors of fd-based primitives.
//!
//! The coordinator reuses the lock engine's window: start gate, warm-up
//! (rounds run, not recorded), t0, then until every pair has recorded its
//! iterations or the duration is up, t1. A stall watchdog ends the run
//! with the pair that stopped making round trips.

mod pair;
mod record;

pub use crate::model::wakeup::{Distribution, PairSample, WakeupSample};
pub use pair::{Header, PairSlot, Plan};
pub use record::PairRecord;

use crate::engine::crew::{Close, Crew, Stuck};
use crate::engine::{measure_window, wait_arrivals, Edge, Ending, Window};
use crate::family::wakeup::point::{Length, WakeupPoint};
use crate::measure::futex::FutexCounters;
use crate::measure::latency::Latencies;
use crate::measure::tracefs::Tracer;
use crate::measure::{Probes, UsageSource};
use crate::model::Mode;
use anyhow::{anyhow, bail, Context, Result};
use locks::sys::shm::Arena;
use locks::wake::{Channel, ChannelConfig};
use pair::{side_a, side_b, SetupFailure, MEASURE, STOP};
use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// What every point of a sweep shares.
#[derive(Debug, Default)]
pub struct WakeupContext {
    /// Futex syscall counters, opened before any worker starts.
    pub futex: Option<FutexCounters>,
    /// The run's SysV set (id, size), for `sysv-sem`.
    pub sysv_set: Option<(i32, u16)>,
    /// The outlier tracer, when --trace-threshold is given.
    pub tracer: Option<Tracer>,
    /// Where worker processes leave their records.
    pub scratch: Option<PathBuf>,
}

type WakeArena<C> = Arena<(), Header, PairSlot<C>>;

fn build<C: Channel>(point: &WakeupPoint, ctx: &WakeupContext) -> Result<WakeArena<C>> {
    let shared = point.mode == Mode::Processes;
    let mut slots = Vec::with_capacity(point.pairs());
    for i in 0..point.pairs() {
        let config = |k: usize| -> Result<ChannelConfig> {
            let sysv = match ctx.sysv_set {
                Some((id, size)) => {
                    let index = u16::try_from(2 * i + k).ok().filter(|&x| x < size).ok_or_else(|| {
                        anyhow!(
                            "{} pairs need more than the {size} semaphores of the SysV set",
                            point.pairs()
                        )
                    })?;
                    Some((id, index))
                }
                None => None,
            };
            Ok(ChannelConfig { shared, sysv })
        };
        let to_b = C::new(&config(0)?).with_context(|| format!("creating pair {i}'s channel to B"))?;
        let to_a = C::new(&config(1)?).with_context(|| format!("creating pair {i}'s channel to A"))?;
        slots.push(PairSlot::new(to_b, to_a));
    }
    Arena::plain(shared, Header::default(), slots).map_err(anyhow::Error::msg)
}

fn plan<'a>(point: &'a WakeupPoint, ctx: &'a WakeupContext, pair: usize) -> Plan<'a> {
    Plan {
        pair,
        placement: &point.placements[pair],
        sched: point.sched,
        mlock: point.mlock && point.mode == Mode::Processes,
        interval_ns: point.interval_ns,
        iterations: match point.length {
            Length::Iterations(n) => Some(n),
            Length::Duration(_) => None,
        },
        tracer: ctx.tracer.as_ref(),
    }
}

/// Runs one point with channel type `C` in threads.
pub fn run<C: Channel>(point: &WakeupPoint, ctx: &WakeupContext) -> Result<WakeupSample> {
    let arena = build::<C>(point, ctx)?;
    let arena = &arena;
    let n = point.pairs();
    std::thread::scope(|scope| -> Result<WakeupSample> {
        let crew = Crew::threads(scope, 2 * n, &arena.header().gate, move |i| {
            let (pair, plan) = (i / 2, plan(point, ctx, i / 2));
            if i % 2 == 0 {
                Some(side_a(arena.header(), arena.slot(pair), &plan))
            } else {
                side_b(arena.header(), arena.slot(pair), &plan);
                None
            }
        })
        .inspect_err(|_| arena.header().phase.store(STOP, Ordering::Release))?;
        let (window, joined) = drive(point, ctx, arena, crew);
        // A failed window explains a panic (the primitive vanished under
        // an interrupt); otherwise the panic is the news.
        let window = window?;
        let records: Vec<_> = joined?.into_iter().flatten().collect();
        Ok(summarize(point, window, &records, ctx.tracer.as_ref().is_some_and(Tracer::stopped_here)))
    })
    .with_context(|| format!("running primitive `{}`", point.primitive))
}

/// Runs one point with channel type `C` in worker processes, two per pair.
pub fn run_procs<C: Channel>(point: &WakeupPoint, ctx: &WakeupContext) -> Result<WakeupSample> {
    let scratch = ctx.scratch.as_deref().context("no scratch directory for worker records")?;
    let record_path = |pair: usize| scratch.join(format!("pair-{pair}.json"));
    for pair in 0..point.pairs() {
        let _ = std::fs::remove_file(record_path(pair));
    }
    let arena = build::<C>(point, ctx)?;
    let n = point.pairs();
    let crew = Crew::<()>::processes(2 * n, &arena.header().gate, |i| {
        let (pair, plan) = (i / 2, plan(point, ctx, i / 2));
        let header = arena.header();
        let code = if i % 2 == 0 {
            let rec = side_a(header, arena.slot(pair), &plan);
            // The record goes back through a file: histograms do not fit a
            // fixed slot, and the file is in the run's private directory.
            match std::fs::write(record_path(pair), rec.to_json()) {
                Ok(()) => 0,
                Err(_) => 3,
            }
        } else {
            side_b(header, arena.slot(pair), &plan);
            0
        };
        // Stay alive (asleep) until the window closes: the coordinator
        // reads each worker's CPU time from /proc at t1, and a worker that
        // exits after its iterations would take its CPU time with it.
        while header.phase.load(Ordering::Acquire) != STOP {
            std::thread::sleep(Duration::from_millis(1));
        }
        code
    })?;
    let (window, finished) = drive(point, ctx, &arena, crew);
    let window = window?;
    finished.with_context(|| format!("stopping the `{}` workers", point.primitive))?;
    let mut records = Vec::with_capacity(n);
    for pair in 0..n {
        let text = std::fs::read_to_string(record_path(pair))
            .with_context(|| format!("reading pair {pair}'s record"))?;
        records.push(PairRecord::from_json(&text).map_err(anyhow::Error::msg)?);
        let _ = std::fs::remove_file(record_path(pair));
    }
    let stopped = records.iter().any(|r| r.stopped_trace);
    Ok(summarize(point, window, &records, stopped))
}

/// Watches `crew` through the window and finishes it: the window, and
/// what the workers returned.
fn drive<C: Channel, T: Send>(
    point: &WakeupPoint,
    ctx: &WakeupContext,
    arena: &WakeArena<C>,
    crew: Crew<'_, T>,
) -> (Result<Window<()>>, Result<Vec<T>>) {
    let usage = crew.usage();
    let crew = RefCell::new(crew);
    let mut stall = Stall::new(point);
    let mut watch = || -> Result<()> {
        // A side that ends while its pair has not finished panicked (a
        // primitive's call failed): say so now, not at the stall.
        crew.borrow_mut().check(
            |i| arena.slot(i / 2).finished.load(Ordering::Acquire),
            |i| format!("side {} of pair {}", if i % 2 == 0 { "A" } else { "B" }, i / 2),
        )?;
        stall.check(point, arena)
    };
    let window = coordinate(point, ctx, arena, usage, &mut watch);
    // Every pair leaves once it sees STOP (A posts B a last time), within
    // a round: at least 10 s, more with a long --interval.
    let drain = Duration::from_secs(10).max(Duration::from_nanos(point.interval_ns.saturating_mul(4)));
    let finished = crew.borrow_mut().finish(
        &Close::of(&window),
        drain,
        &format!("running primitive `{}`", point.primitive),
        &Stuck {
            place: &format!("`{}`", point.primitive),
            why: "waiting for a post that never came: a lost wake-up",
            detail: &|| None,
        },
    );
    (window, finished)
}

/// Per-pair progress, for the stall watchdog.
struct Stall {
    limit: Duration,
    seen: Vec<(u64, Instant)>,
}

impl Stall {
    fn new(point: &WakeupPoint) -> Self {
        Self {
            limit: Duration::from_nanos(point.stall_timeout_ns),
            seen: vec![(0, Instant::now()); point.pairs()],
        }
    }

    fn check<C: Channel>(&mut self, point: &WakeupPoint, arena: &WakeArena<C>) -> Result<()> {
        if !arena.header().gate.is_open() {
            return Ok(());
        }
        let now = Instant::now();
        for (i, seen) in self.seen.iter_mut().enumerate() {
            let slot = arena.slot(i);
            let rounds = slot.rounds.load(Ordering::Relaxed);
            if rounds != seen.0 || slot.finished.load(Ordering::Acquire) {
                *seen = (rounds, now);
            } else if now - seen.1 >= self.limit {
                bail!(
                    "pair {i} made no round trip for {:?} (after {rounds}): one side is waiting on \
                     `{}` for a post that never came (a lost wake-up, or a side starved by \
                     real-time threads); raise --stall-timeout if rounds are really this slow",
                    self.limit,
                    point.primitive
                );
            }
        }
        Ok(())
    }
}

/// The measured part, shared by threads and processes: arrivals, setup
/// check, window. Returns the window and whose usage it measured.
fn coordinate<C: Channel>(
    point: &WakeupPoint,
    ctx: &WakeupContext,
    arena: &WakeArena<C>,
    usage: UsageSource,
    watch: &mut dyn FnMut() -> Result<()>,
) -> Result<Window<()>> {
    let header = arena.header();
    // Every way out of here stops the pairs.
    struct StopOnDrop<'a>(&'a std::sync::atomic::AtomicU32);
    impl Drop for StopOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(STOP, Ordering::Release);
        }
    }
    let _stop = StopOnDrop(&header.phase);
    wait_arrivals(&header.gate, 2 * point.pairs(), watch)?;
    if let Some((i, f)) = (0..point.pairs()).find_map(|i| arena.slot(i).failure().map(|f| (i, f))) {
        header.gate.abort();
        let placement = &point.placements[i];
        bail!(match f {
            SetupFailure::Affinity(e) => format!(
                "pair {i} could not be pinned to CPUs {}: {}",
                placement.label(),
                nix::errno::Errno::from_raw(e)
            ),
            SetupFailure::Policy(e) => format!(
                "pair {i} could not switch to --policy {} --priority {}: {}",
                point.sched.policy,
                point.sched.priorities(),
                nix::errno::Errno::from_raw(e)
            ),
            SetupFailure::Mlock => "a worker process could not lock its memory (--mlock)".to_string(),
        });
    }
    let probes = Probes::new(ctx.futex.as_ref(), usage);
    let all_done = || (0..point.pairs()).all(|i| arena.slot(i).finished.load(Ordering::Acquire));
    let ending = Ending { duration: point.max_window(), done: &all_done, poll: Duration::from_millis(10) };
    let snapshot = |edge: Edge| {
        header.phase.store(if edge == Edge::Start { MEASURE } else { STOP }, Ordering::Release);
    };
    let warmup = Duration::from_nanos(point.warmup_ns);
    measure_window(&header.gate, warmup, &ending, &probes, snapshot, watch)
}

fn summarize(
    point: &WakeupPoint,
    window: Window<()>,
    records: &[PairRecord],
    stopped_trace: bool,
) -> WakeupSample {
    let mut round_trip = Latencies::new();
    let mut one_way = Latencies::new();
    let pairs: Vec<PairSample> = records
        .iter()
        .enumerate()
        .map(|(i, rec)| {
            round_trip.merge(&rec.round_trip);
            one_way.merge(&rec.a_to_b);
            one_way.merge(&rec.b_to_a);
            record::pair_sample(i, &point.placements[i], rec)
        })
        .collect();
    WakeupSample {
        run: Default::default(),
        window_s: window.seconds,
        round_trips_per_s: round_trip.len() as f64 / window.seconds,
        cpu: window.probes.cpu,
        process: window.probes.process,
        futex: window.probes.futex,
        coordinator_cpu_s: window.probes.coordinator_cpu_s,
        pairs,
        round_trip: Distribution::of(&round_trip),
        one_way: Distribution::of(&one_way),
        stopped_trace,
        interrupted: window.interrupted.map(|s| s.as_str().to_string()),
    }
}
