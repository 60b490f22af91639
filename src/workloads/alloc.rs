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

use crate::parse::{SizeStream, Sizes};
use locks::sem::CountingSem;
use locks::sys::alloc::Block;
use serde::{Deserialize, Serialize};
use std::sync::Mutex;
use std::time::Instant;

/// Which pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// Each thread frees what it allocated.
    Local,
    /// Producers allocate, consumers free.
    Pairs,
}

/// What the child is asked to do (passed as JSON on its command line).
#[derive(Debug, Clone, Serialize, Deserialize)]
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
}

/// What the child reports back (JSON on its stdout).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChildResult {
    /// Seconds from the start gate to the last worker's end.
    pub wall_s: f64,
    /// mallocs + frees.
    pub operations: u64,
    /// Futex syscalls made by the pattern's own semaphores.
    pub own_futex_calls: u64,
    /// The allocator library mapped into the child (from /proc/self/maps),
    /// proving the preload took: `None` means glibc's malloc.
    pub mapped_allocator: Option<String>,
}

fn mapped_allocator() -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| ["tcmalloc", "jemalloc", "mimalloc"].iter().any(|a| p.contains(a)))
        .map(str::to_string)
}

fn local(spec: &ChildSpec, sizes: &Sizes) -> u64 {
    std::thread::scope(|s| {
        for t in 0..spec.workers {
            s.spawn(move || {
                let mut stream = SizeStream::new(sizes, u64::from(t));
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
        }
    });
    0
}

/// Two buffers per pair, handed back and forth with counting semaphores.
struct Pair {
    buffers: [Mutex<Vec<Block>>; 2],
    full: CountingSem,
    empty: CountingSem,
}

fn pairs(spec: &ChildSpec, sizes: &Sizes) -> u64 {
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
    std::thread::scope(|s| {
        for (p, pair) in pairs.iter().enumerate() {
            s.spawn(move || {
                let mut stream = SizeStream::new(sizes, p as u64);
                for i in 0..spec.iterations {
                    pair.empty.wait();
                    // Uncontended: the semaphores hand each buffer over whole.
                    let mut buffer = pair.buffers[(i % 2) as usize]
                        .lock()
                        .unwrap_or_else(|e| e.into_inner());
                    for _ in 0..spec.batch {
                        buffer.push(Block::alloc(stream.next_size()));
                    }
                    drop(buffer);
                    pair.full.post();
                }
            });
            s.spawn(move || {
                for i in 0..spec.iterations {
                    pair.full.wait();
                    let mut buffer = pair.buffers[(i % 2) as usize]
                        .lock()
                        .unwrap_or_else(|e| e.into_inner());
                    for b in buffer.drain(..) {
                        b.free();
                    }
                    drop(buffer);
                    pair.empty.post();
                }
            });
        }
    });
    pairs.iter().map(|p| p.full.syscalls() + p.empty.syscalls()).sum()
}

/// Runs the child's workload.
pub fn run_child(spec: &ChildSpec) -> Result<ChildResult, String> {
    let sizes = crate::parse::parse_sizes(&spec.sizes)?;
    let start = Instant::now();
    let own_futex_calls = match spec.pattern {
        Pattern::Local => local(spec, &sizes),
        Pattern::Pairs => pairs(spec, &sizes),
    };
    let wall_s = start.elapsed().as_secs_f64();
    Ok(ChildResult {
        wall_s,
        operations: 2 * u64::from(spec.workers) * spec.iterations * spec.batch as u64,
        own_futex_calls,
        mapped_allocator: mapped_allocator(),
    })
}
