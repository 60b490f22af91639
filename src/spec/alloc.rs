//! `contend alloc`, validated.

use super::SpecError;
use crate::cli::AllocArgs;
use crate::parse::Sizes;
use crate::runner::allocators::Allocator;
use crate::runner::limits::Limits;
use crate::workloads::alloc::Pattern;
use serde::Serialize;
use std::path::PathBuf;

/// What `contend alloc` runs.
#[derive(Debug, Clone, Serialize)]
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
    /// JSON export target.
    pub export_json: Option<PathBuf>,
    /// CSV export target.
    pub export_csv: Option<PathBuf>,
    /// Markdown export target.
    pub export_markdown: Option<PathBuf>,
    /// gnuplot export target.
    pub export_gnuplot: Option<PathBuf>,
    /// Runs per pattern and allocator.
    pub repeat: crate::runner::repeat::Repeat,
    /// Show a progress bar (on a terminal, for sweeps over 2 s).
    pub progress: bool,
}

impl AllocSpec {
    /// Validates the arguments of `contend alloc`.
    pub fn from_args(args: &AllocArgs) -> Result<Self, SpecError> {
        let limits = Limits::read();
        limits.check_threads(u64::from(args.threads)).map_err(SpecError)?;
        limits
            .check_threads(2 * u64::from(args.pairs))
            .map_err(SpecError)?;
        if args.iterations == 0 || args.batch == 0 {
            return Err(SpecError("--iterations and --batch must be at least 1".into()));
        }
        let allocators = args
            .allocator
            .0
            .iter()
            .cloned()
            .map(Allocator::resolved)
            .collect::<Result<Vec<_>, _>>()
            .map_err(SpecError)?;
        let mut patterns = args.pattern.0.clone();
        patterns.dedup();
        Ok(AllocSpec {
            patterns,
            allocators,
            threads: args.threads,
            pairs: args.pairs,
            iterations: args.iterations,
            batch: args.batch,
            sizes: args.size.clone(),
            export_json: args.export_json.clone(),
            export_csv: args.export_csv.clone(),
            export_markdown: args.export_markdown.clone(),
            export_gnuplot: args.export_gnuplot.clone(),
            repeat: args.repeat.plan().map_err(SpecError)?,
            progress: !args.no_progress,
        })
    }
}
