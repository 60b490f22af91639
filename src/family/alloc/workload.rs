//! `contend alloc`, the part that runs in the child process under the
//! preloaded allocator. Every malloc and free goes through libc, so the
//! allocator the dynamic linker bound is the one measured.
//!
//! - `local`: each thread runs `iterations` rounds of `batch` mallocs
//!   followed by their frees (allocator fast paths, per-thread caches).
//! - `pairs`: each producer mallocs `batch` blocks into one of two buffers
//!   and posts a semaphore; its consumer waits and frees them, so every
//!   block is freed by a thread other than the one that allocated it (the
//!   remote-free path that made ptmalloc slow in the classic lecture).
//!   The semaphores count their own futex syscalls, so the report can
//!   separate them from the allocator's.
//!
//! Every thread is spawned and allocates and frees one batch (its warm-up:
//! arena and thread-cache creation) before a start gate; the timer runs
//! from the gate to the last thread's end.

use crate::model::value::{SizeStream, Sizes};
use locks::sem::CountingSem;
use locks::sys::alloc::Block;
use serde::{Deserialize, Serialize};
use std::sync::{Barrier, Mutex};
use std::time::Instant;

pub use crate::model::alloc::Pattern;

/// What the child is asked to do (passed as JSON on its command line).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChildSpec {
    /// The pattern.
    pub pattern: Pattern,
    /// Threads for `local`, pairs for `pairs`.
    pub workers: u32,
    /// Rounds per worker.
    pub iterations: u64,
    /// Blocks per round.
    pub batch: usize,
    /// Block sizes, as the user wrote them.
    pub sizes: String,
    /// The coordinator's pid: the child dies with it (PR_SET_PDEATHSIG),
    /// and refuses to start if it is already gone.
    pub parent: u32,
}

/// What the child reports back (JSON on its stdout).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChildResult {
    /// Seconds from the start gate (every thread spawned and warmed up)
    /// to the last worker's end.
    pub wall_s: f64,
    /// mallocs + frees.
    pub operations: u64,
    /// Futex syscalls made by the pattern's own semaphores.
    pub own_futex_calls: u64,
    /// The allocator library mapped into the child (from /proc/self/maps),
    /// proving the preload took: `None` means glibc's malloc.
    pub mapped_allocator: Option<String>,
    /// GLIBC_TUNABLES as the child saw it (proof the parent set it).
    #[serde(default)]
    pub glibc_tunables: Option<String>,
}

fn mapped_allocator() -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| ["tcmalloc", "jemalloc", "mimalloc"].iter().any(|a| p.contains(a)))
        .map(str::to_string)
}

/// Allocates and frees one batch: each thread's warm-up before the start
/// gate, so arena and thread-cache creation stay out of the timer.
fn warm_up(spec: &ChildSpec, stream: &mut SizeStream<'_>) {
    let blocks: Vec<Block> = (0..spec.batch).map(|_| Block::alloc(stream.next_size())).collect();
    for b in blocks {
        b.free();
    }
}

/// Times `threads` bodies from one start gate: every thread is spawned
/// and warmed up first, then calls `go` (the gate), and the time runs from
/// the first thread through the gate to the last thread's end (not to the
/// joins).
fn timed(threads: usize, body: impl Fn(usize, &dyn Fn()) + Sync) -> f64 {
    let gate = Barrier::new(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (body, gate) = (&body, &gate);
                s.spawn(move || {
                    let start = std::cell::Cell::new(None);
                    body(t, &|| {
                        gate.wait();
                        start.set(Some(Instant::now()));
                    });
                    (start.get(), Instant::now())
                })
            })
            .collect();
        let spans: Vec<(Option<Instant>, Instant)> =
            handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect();
        let first = spans.iter().filter_map(|(start, _)| *start).min();
        let last = spans.iter().map(|(_, end)| *end).max();
        match (first, last) {
            (Some(first), Some(last)) => last.saturating_duration_since(first).as_secs_f64(),
            _ => 0.0,
        }
    })
}

fn local(spec: &ChildSpec, sizes: &Sizes) -> (u64, f64) {
    let wall_s = timed(spec.workers as usize, |t, go| {
        let mut stream = SizeStream::new(sizes, t as u64);
        warm_up(spec, &mut stream);
        go();
        let mut blocks = Vec::with_capacity(spec.batch);
        for _ in 0..spec.iterations {
            for _ in 0..spec.batch {
                blocks.push(Block::alloc(stream.next_size()));
            }
            for b in blocks.drain(..) {
                b.free();
            }
        }
    });
    (0, wall_s)
}

/// Two buffers per pair, handed back and forth with counting semaphores.
struct Pair {
    buffers: [Mutex<Vec<Block>>; 2],
    full: CountingSem,
    empty: CountingSem,
}

fn pairs(spec: &ChildSpec, sizes: &Sizes) -> (u64, f64) {
    let pairs: Vec<Pair> = (0..spec.workers)
        .map(|_| {
            let pair = Pair {
                buffers: [
                    Mutex::new(Vec::with_capacity(spec.batch)),
                    Mutex::new(Vec::with_capacity(spec.batch)),
                ],
                full: CountingSem::default(),
                empty: CountingSem::default(),
            };
            pair.empty.post();
            pair.empty.post();
            pair
        })
        .collect();
    // Thread 2p is pair p's producer, 2p + 1 its consumer.
    let wall_s = timed(2 * pairs.len(), |t, go| {
        let pair = &pairs[t / 2];
        let mut stream = SizeStream::new(sizes, (t / 2) as u64);
        warm_up(spec, &mut stream);
        go();
        if t % 2 == 0 {
            for i in 0..spec.iterations {
                pair.empty.wait();
                // Uncontended: the semaphores hand each buffer over whole.
                let mut buffer = pair.buffers[(i % 2) as usize].lock().unwrap_or_else(|e| e.into_inner());
                for _ in 0..spec.batch {
                    buffer.push(Block::alloc(stream.next_size()));
                }
                drop(buffer);
                pair.full.post();
            }
        } else {
            for i in 0..spec.iterations {
                pair.full.wait();
                let mut buffer = pair.buffers[(i % 2) as usize].lock().unwrap_or_else(|e| e.into_inner());
                for b in buffer.drain(..) {
                    b.free();
                }
                drop(buffer);
                pair.empty.post();
            }
        }
    });
    let own = pairs.iter().map(|p| p.full.syscalls() + p.empty.syscalls()).sum();
    (own, wall_s)
}

/// Asks the kernel to SIGKILL this child when the coordinator dies (a
/// SIGKILLed coordinator cannot stop it otherwise), then checks the
/// coordinator did not die before that took effect.
fn die_with_parent(parent: u32) -> Result<(), String> {
    nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
        .map_err(|e| format!("PR_SET_PDEATHSIG: {e}"))?;
    if nix::unistd::getppid().as_raw() as u32 != parent {
        return Err(format!("the coordinator (pid {parent}) is gone"));
    }
    Ok(())
}

/// `contend __alloc-child SPEC`: runs the workload, prints its result
/// as JSON on stdout.
pub fn child_command(spec: &str) -> anyhow::Result<std::process::ExitCode> {
    use anyhow::Context;
    let spec: ChildSpec = serde_json::from_str(spec).context("the child's spec")?;
    let result = run_child(&spec).map_err(anyhow::Error::msg)?;
    crate::output::sink::print(&(serde_json::to_string(&result)? + "\n"))?;
    Ok(std::process::ExitCode::SUCCESS)
}

/// Runs the child's workload.
pub fn run_child(spec: &ChildSpec) -> Result<ChildResult, String> {
    die_with_parent(spec.parent)?;
    let sizes = crate::model::value::parse_sizes(&spec.sizes)?;
    let (own_futex_calls, wall_s) = match spec.pattern {
        Pattern::Local => local(spec, &sizes),
        Pattern::Pairs => pairs(spec, &sizes),
    };
    Ok(ChildResult {
        wall_s,
        operations: 2 * u64::from(spec.workers) * spec.iterations * spec.batch as u64,
        own_futex_calls,
        mapped_allocator: mapped_allocator(),
        glibc_tunables: std::env::var("GLIBC_TUNABLES").ok(),
    })
}
