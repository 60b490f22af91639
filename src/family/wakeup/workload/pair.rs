//! The two sides of a ping-pong pair, the same code in threads and in
//! processes. A round:
//!
//! ```text
//! A: t0 = now; post_a = t0; to_b.post(); to_a.wait(); t3 = now
//! B:                to_b.wait(); t1 = now; wake_b = t1; post_b = now; to_a.post()
//! ```
//!
//! A records the round trip t3 - t0 and both one-way times, wake_b - t0
//! and t3 - post_b: CLOCK_MONOTONIC is one clock on every CPU, so the
//! stamps of two threads can be subtracted (a negative result, which only
//! clock skew could cause, is counted and recorded as 0). B's stamps reach
//! A through the pair's slot; the post that follows them orders them
//! before A's wake-up (Release/Acquire on the stamps, and the syscall in
//! between for the kernel primitives).

use crate::family::wakeup::placement::Placement;
use crate::family::wakeup::sched::{lock_memory, Sched};
use crate::family::wakeup::workload::record::PairRecord;
use crate::measure::clock::now_ns;
use crate::measure::latency::Latencies;
use crate::measure::tracefs::Tracer;
use locks::gate::Gate;
use locks::sys::sched::current_cpu;
use locks::sys::sched::pin_current_thread;
use locks::wake::Channel;
use nix::time::{clock_nanosleep, ClockId, ClockNanosleepFlags};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

/// Rounds run but not recorded.
pub const WARMUP: u32 = 0;
/// Rounds recorded.
pub const MEASURE: u32 = 1;
/// A stops at the start of its next round.
pub const STOP: u32 = 2;

/// What all pairs share.
#[derive(Debug)]
pub struct Header {
    /// The start gate.
    pub gate: Gate,
    /// WARMUP, MEASURE or STOP, set by the coordinator.
    pub phase: AtomicU32,
}

impl Default for Header {
    fn default() -> Self {
        Self { gate: Gate::default(), phase: AtomicU32::new(WARMUP) }
    }
}

/// Why a worker could not start; the coordinator reads it after every
/// worker arrived at the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetupFailure {
    /// sched_setaffinity failed with this errno.
    Affinity(i32),
    /// sched_setscheduler failed with this errno.
    Policy(i32),
    /// mlockall failed (in a worker process).
    Mlock,
}

/// One pair's shared state.
pub struct PairSlot<C> {
    /// A posts, B waits.
    pub to_b: C,
    /// B posts, A waits.
    pub to_a: C,
    post_a: AtomicU64,
    wake_b: AtomicU64,
    post_b: AtomicU64,
    cpu_b: AtomicI32,
    quit: AtomicBool,
    /// Rounds completed, recorded or not: the watchdog's progress counter.
    pub rounds: AtomicU64,
    /// Recorded rounds.
    pub recorded: AtomicU64,
    /// Set by A when it has finished.
    pub finished: AtomicBool,
    /// 0, or the encoded setup failure of a side (see `failure`).
    setup: AtomicI32,
}

impl<C: Channel> PairSlot<C> {
    /// A slot around two fresh channels.
    pub fn new(to_b: C, to_a: C) -> Self {
        Self {
            to_b,
            to_a,
            post_a: AtomicU64::new(0),
            wake_b: AtomicU64::new(0),
            post_b: AtomicU64::new(0),
            cpu_b: AtomicI32::new(-1),
            quit: AtomicBool::new(false),
            rounds: AtomicU64::new(0),
            recorded: AtomicU64::new(0),
            finished: AtomicBool::new(false),
            setup: AtomicI32::new(0),
        }
    }

    /// The first setup failure of either side, if any.
    pub fn failure(&self) -> Option<SetupFailure> {
        match self.setup.load(Ordering::Acquire) {
            0 => None,
            -1 => Some(SetupFailure::Mlock),
            v if v >= 100_000 => Some(SetupFailure::Policy(v - 100_000)),
            v => Some(SetupFailure::Affinity(v)),
        }
    }

    fn fail(&self, f: SetupFailure) {
        let code = match f {
            SetupFailure::Mlock => -1,
            SetupFailure::Policy(e) => 100_000 + e,
            SetupFailure::Affinity(e) => e.max(1),
        };
        let _ = self.setup.compare_exchange(0, code, Ordering::AcqRel, Ordering::Acquire);
    }
}

/// What a side needs to know about its run.
#[derive(Debug, Clone, Copy)]
pub struct Plan<'a> {
    /// The pair's index.
    pub pair: usize,
    /// Where its threads run.
    pub placement: &'a Placement,
    /// Scheduling.
    pub sched: Sched,
    /// Call mlockall (worker processes; threads share the coordinator's).
    pub mlock: bool,
    /// Sleep between rounds, ns.
    pub interval_ns: u64,
    /// Recorded rounds after which A stops on its own.
    pub iterations: Option<u64>,
    /// Tag round trips above the tracer's threshold.
    pub tracer: Option<&'a Tracer>,
}

/// Pins, sets the policy, locks memory; records what failed.
fn set_up<C: Channel>(slot: &PairSlot<C>, cpus: &[usize], sched: Sched, plan: &Plan) -> bool {
    if let Err(e) = pin_current_thread(cpus) {
        slot.fail(SetupFailure::Affinity(e.raw_os_error().unwrap_or(0)));
        return false;
    }
    if let Err(e) = sched.apply() {
        slot.fail(SetupFailure::Policy(e.raw_os_error().unwrap_or(0)));
        return false;
    }
    if plan.mlock && lock_memory().is_err() {
        slot.fail(SetupFailure::Mlock);
        return false;
    }
    true
}

fn sleep_until(deadline_ns: u64) {
    let t = nix::sys::time::TimeSpec::from(Duration::from_nanos(deadline_ns));
    // Signals are blocked in every contend thread, so EINTR is unlikely; a
    // short sleep would only shorten one interval.
    let _ = clock_nanosleep(ClockId::CLOCK_MONOTONIC, ClockNanosleepFlags::TIMER_ABSTIME, &t);
}

fn bit(cpu: i32) -> u64 {
    if (0..64).contains(&cpu) {
        1 << cpu
    } else {
        0
    }
}

/// Side A: runs rounds until the phase says stop (or its iterations are
/// recorded), then lets B leave. Returns what it measured.
pub fn side_a<C: Channel>(header: &Header, slot: &PairSlot<C>, plan: &Plan) -> PairRecord {
    let mut rec = PairRecord {
        round_trip: Latencies::new(),
        a_to_b: Latencies::new(),
        b_to_a: Latencies::new(),
        ..PairRecord::default()
    };
    let ready = set_up(slot, &plan.placement.a, plan.sched, plan);
    if !header.gate.arrive_and_wait() || !ready {
        return rec;
    }
    let threshold = plan.tracer.map(Tracer::threshold_ns);
    let mut next = now_ns();
    let mut iteration = 0u64;
    loop {
        let phase = header.phase.load(Ordering::Acquire);
        if phase == STOP || plan.iterations.is_some_and(|n| iteration >= n) {
            break;
        }
        if plan.interval_ns > 0 {
            next += plan.interval_ns;
            let now = now_ns();
            if now < next {
                sleep_until(next);
            } else if now - next >= plan.interval_ns {
                // Overran by a whole interval (preempted, or the round was
                // slower than the interval): restart the schedule rather
                // than run a burst of back-to-back rounds. Counted only in
                // the measured phase, as the rounds it is compared with are.
                if phase == MEASURE {
                    rec.late_starts += 1;
                }
                next = now;
            }
        }
        let t0 = now_ns();
        slot.post_a.store(t0, Ordering::Release);
        slot.to_b.post();
        slot.to_a.wait();
        let t3 = now_ns();
        let cpu_a = current_cpu();
        slot.rounds.fetch_add(1, Ordering::Relaxed);
        if phase != MEASURE {
            continue;
        }
        let wake_b = slot.wake_b.load(Ordering::Acquire);
        let post_b = slot.post_b.load(Ordering::Acquire);
        let cpu_b = slot.cpu_b.load(Ordering::Acquire);
        let rtt = t3 - t0;
        rec.round_trip.record(rtt);
        for (from, to, hist) in [(t0, wake_b, &mut rec.a_to_b), (post_b, t3, &mut rec.b_to_a)] {
            if to < from {
                rec.negative_one_way += 1;
            }
            hist.record(to.saturating_sub(from));
        }
        rec.same_cpu_rounds += u64::from(cpu_a == cpu_b);
        rec.cpus_a |= bit(cpu_a);
        rec.cpus_b |= bit(cpu_b);
        if let (Some(limit), Some(tracer)) = (threshold, plan.tracer) {
            if rtt > limit {
                rec.tagged += 1;
                rec.stopped_trace |= tracer.tag(plan.pair, cpu_a, cpu_b, rtt, iteration);
            }
        }
        iteration += 1;
        slot.recorded.store(iteration, Ordering::Relaxed);
    }
    // Finished before quit: once B has left, the pair reads as finished,
    // so the coordinator never takes B's exit for a crash.
    slot.finished.store(true, Ordering::Release);
    slot.quit.store(true, Ordering::Release);
    slot.to_b.post();
    rec
}

/// Side B: answers every post until A says quit.
pub fn side_b<C: Channel>(header: &Header, slot: &PairSlot<C>, plan: &Plan) {
    let ready = set_up(slot, &plan.placement.b, plan.sched.side_b(), plan);
    if !header.gate.arrive_and_wait() || !ready {
        return;
    }
    loop {
        slot.to_b.wait();
        let t1 = now_ns();
        if slot.quit.load(Ordering::Acquire) {
            return;
        }
        slot.wake_b.store(t1, Ordering::Release);
        slot.cpu_b.store(current_cpu(), Ordering::Release);
        slot.post_b.store(now_ns(), Ordering::Release);
        slot.to_a.post();
    }
}
