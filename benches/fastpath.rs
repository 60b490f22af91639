//! Fast-path benchmark: what contend itself costs, and how close the
//! uncontended lock paths are to their physical floor.
//!
//! - floor: two locked read-modify-writes on one word (a CAS to lock, an
//!   exchange to unlock), the least any futex mutex can do;
//! - each lock's uncontended lock+unlock (with one node kept across
//!   acquisitions, as the worker loop keeps it), interleaved with the
//!   floor in the same run so machine noise hits both, reported as a
//!   ratio;
//! - harness: the real `contend lock` worker loop, one thread, hold 0, in
//!   ns per acquisition, with the no-op lock (the loop alone) and with
//!   each lock, beside that lock alone. The loop should cost every lock
//!   alike. It did not: for a lock whose slow paths count spins, waits or
//!   wakes it read the counts every cycle, where for std's and
//!   parking_lot's the compiler folded that away. (Loop and lock overlap
//!   in the pipeline, so the loop's cost is not their difference.)
//!
//! Run: `cargo bench --bench fastpath`. Prints a table; asserts nothing
//! (timing belongs in benchmarks, not tests).

use contend::family::lock::registry;
use contend::family::lock::spec::Point;
use contend::family::lock::workload::RunContext;
use crossbeam_utils::CachePadded;
use locks::raw::{Adaptive, FutexMutex, NoLock, ParkingLot, PthreadMutex, Seed, StdMutex};
use locks::{LockConfig, LockStats, RawLock};
use std::hint::black_box;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

const ITERS: u32 = 5_000_000;
const ROUNDS: usize = 9;

fn ns_per_op(mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..ITERS {
        f();
    }
    start.elapsed().as_nanos() as f64 / f64::from(ITERS)
}

fn floor_op(word: &AtomicU32) {
    let _ = black_box(word).compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed);
    black_box(word).swap(0, Ordering::Release);
}

fn lock_op<L: RawLock>(lock: &L, node: &L::Node, stats: &mut LockStats) {
    black_box(lock).with(node, stats, || ());
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median ns/op of the floor and of `L`, measured alternately.
fn versus_floor<L: RawLock>() -> (f64, f64) {
    // Each on its own cache line, so the stack layout of one lock type
    // cannot put the floor's word beside another's (it read 13 ns next to
    // some locks and 18 ns next to others before).
    let word = CachePadded::new(AtomicU32::new(0));
    let lock = CachePadded::new(L::new(&LockConfig::default()));
    // One node for the whole run, as the worker loop keeps it.
    let node = CachePadded::new(L::Node::default());
    let mut stats = LockStats::default();
    let (mut floor, mut ours) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        floor.push(ns_per_op(|| floor_op(&word)));
        ours.push(ns_per_op(|| lock_op(&*lock, &node, &mut stats)));
    }
    (median(floor), median(ours))
}

/// The worker loop of `contend lock`, one thread, hold 0, with each lock
/// registered as one of `names`: median ns per acquisition of three 1 s
/// runs each, the locks taken in turn in each round so that a slow
/// stretch of the host lands on all of them.
fn harness_ns_per_acquisition(names: &[&'static str]) -> Vec<f64> {
    let mut runs = vec![Vec::new(); names.len()];
    for _ in 0..3 {
        for (name, runs) in names.iter().zip(&mut runs) {
            let point = Point {
                duration_ns: 1_000_000_000,
                warmup_ns: 100_000_000,
                ..Point::new(name, contend::family::lock::spec::Mode::Threads, 1)
            };
            let entry = registry::find(name).expect("the lock is registered");
            let sample = (entry.run)(&point, &RunContext::default()).expect("a one-thread run");
            runs.push(1e9 / sample.cs_per_s);
        }
    }
    runs.into_iter().map(median).collect()
}

type Measure = fn() -> (f64, f64);

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` asks for a listing; nothing to list.
    }
    // glibc takes non-atomic shortcuts in pthread_mutex_lock while the
    // process has only ever had one thread (__libc_single_threaded), which
    // would make pthread look faster than two locked instructions. The real
    // workload always runs on spawned threads, so start one here too; the
    // flag never returns to "single threaded" once cleared.
    std::thread::spawn(|| ()).join().expect("helper thread");
    println!("uncontended lock+unlock, median of {ROUNDS} rounds of {ITERS} ops, alternating with the floor");
    println!("{:<12} {:>10} {:>12} {:>8}", "lock", "ns/op", "floor ns/op", "ratio");
    let rows: [(&str, Measure); 7] = [
        ("adaptive", versus_floor::<Adaptive>),
        ("parking_lot", versus_floor::<ParkingLot>),
        ("std", versus_floor::<StdMutex>),
        ("futex", versus_floor::<FutexMutex>),
        ("seed", versus_floor::<Seed>),
        ("pthread", versus_floor::<PthreadMutex>),
        ("noop", versus_floor::<NoLock>),
    ];
    let mut alone = Vec::new();
    for (name, measure) in rows {
        let (floor, ours) = measure();
        println!("{name:<12} {ours:>10.2} {floor:>12.2} {:>8.2}", ours / floor);
        alone.push((name, ours));
    }
    println!();
    println!("harness: the worker loop, 1 thread, hold 0, ns per acquisition, beside the lock alone");
    println!("{:<12} {:>10} {:>10}", "lock", "loop", "alone");
    // Not seed: a syscall a cycle hides the loop.
    alone.retain(|(name, _)| *name != "seed");
    let names: Vec<&'static str> = alone.iter().map(|(name, _)| *name).collect();
    for ((name, ours), looped) in alone.iter().zip(harness_ns_per_acquisition(&names)) {
        println!("{name:<12} {looped:>10.2} {ours:>10.2}");
    }
}
