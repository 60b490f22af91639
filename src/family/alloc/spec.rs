//! `contend alloc`, validated.

use crate::family::alloc::args::AllocArgs;
use crate::family::alloc::registry::Allocator;
use crate::family::alloc::workload::Pattern;
use crate::model::value::Sizes;
use crate::model::SpecError;
use crate::session::limits::Limits;
use serde::Serialize;

/// What `contend alloc` runs.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct AllocSpec {
    /// Patterns, in order.
    pub patterns: Vec<Pattern>,
    /// Allocators, in order.
    pub allocators: Vec<Allocator>,
    /// Threads for `local`.
    pub threads: u32,
    /// Producer/consumer pairs for `pairs`.
    pub pairs: u32,
    /// Rounds per worker.
    pub iterations: u64,
    /// Blocks per round.
    pub batch: usize,
    /// Block sizes.
    pub sizes: Sizes,
    /// Where results go (the export flags).
    #[serde(flatten)]
    pub output: crate::output::args::OutputArgs,
    /// Runs per pattern and allocator.
    pub repeat: crate::engine::repeat::Repeat,
    /// Show a progress bar (on a terminal, for sweeps over 2 s).
    pub progress: bool,
}

/// The memory one point can hold at once: every worker's batch of the
/// largest blocks, plus the block list itself; refused above half of
/// MemAvailable (or on overflow), before anything runs.
fn check_memory(batch: usize, largest: usize, workers: u32) -> Result<(), String> {
    let per_block = largest.saturating_add(std::mem::size_of::<usize>() * 2) as u128;
    let bytes = per_block * batch as u128 * u128::from(workers);
    let available = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        let line = m.lines().find(|l| l.starts_with("MemAvailable:"))?;
        line.split_whitespace().nth(1)?.parse::<u128>().ok().map(|kib| kib * 1024)
    });
    let limit = available.map_or(u128::from(u64::MAX), |a| a / 2);
    if bytes > limit {
        return Err(format!(
            "--batch {batch} of blocks up to {largest} B in {workers} workers may hold {:.1} GiB at once, \
             more than half of the memory available ({:.1} GiB): lower --batch or --size",
            bytes as f64 / f64::from(1u32 << 30),
            available.unwrap_or(0) as f64 / f64::from(1u32 << 30)
        ));
    }
    Ok(())
}

impl AllocSpec {
    /// Validates the arguments of `contend alloc`.
    pub fn from_args(args: &AllocArgs) -> Result<Self, SpecError> {
        let limits = Limits::read();
        limits.check_threads(u64::from(args.threads)).map_err(SpecError)?;
        limits.check_threads(2 * u64::from(args.pairs)).map_err(SpecError)?;
        if args.iterations == 0 || args.batch == 0 {
            return Err(SpecError("--iterations and --batch must be at least 1".into()));
        }
        // Blocks held at once: each local thread's batch; two buffers a pair.
        let holders = args.pattern.0.iter().map(|p| match p {
            Pattern::Local => args.threads,
            Pattern::Pairs => args.pairs.saturating_mul(2),
        });
        check_memory(args.batch, args.size.largest(), holders.max().unwrap_or(1)).map_err(SpecError)?;
        let allocators = args
            .allocator
            .0
            .iter()
            .cloned()
            .map(Allocator::resolved)
            .collect::<Result<Vec<_>, _>>()
            .map_err(SpecError)?;
        let patterns = args.pattern.0.clone();
        Ok(AllocSpec {
            patterns,
            allocators,
            threads: args.threads,
            pairs: args.pairs,
            iterations: args.iterations,
            batch: args.batch,
            sizes: args.size.clone(),
            output: args.output.clone(),
            repeat: args.repeat.plan().map_err(SpecError)?,
            progress: !args.output.no_progress,
        })
    }
}
