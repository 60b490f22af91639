//! `contend alloc`'s flags, as clap sees them.

use crate::engine::repeat_args::RepeatArgs;
use crate::family::alloc::registry::{parse_allocator, Allocator};
use crate::family::alloc::workload::Pattern;
use crate::model::value::{parse_axis, parse_count, List};
use crate::model::value::{parse_sizes, Sizes};
use crate::output::args::OutputArgs;
use clap::Args;

pub(crate) const ALLOC_EXAMPLES: &str = "\
Examples:
  contend alloc --pattern local,pairs --allocator glibc,tcmalloc,jemalloc,mimalloc --threads 16
  contend alloc --pattern pairs --allocator glibc,glibc:arena_max=1 --pairs 8 --size 16-4096:log";

/// `contend alloc`.
#[derive(Debug, Args)]
#[command(mut_args(crate::output::args::fit_to(
    "one block per pattern: a row per allocator and thread count",
    None
)))]
#[command(next_help_heading = crate::output::args::WORKLOAD)]
pub struct AllocArgs {
    /// Patterns: local (each thread frees its own blocks), pairs (consumers
    /// free what producers allocated).
    #[arg(long, value_parser = pattern_list, default_value = "local,pairs", value_name = "PATTERN[,...]")]
    pub pattern: List<Pattern>,

    /// Allocators: glibc (optionally glibc:arena_max=1:tcache_count=0 for
    /// glibc tunables), tcmalloc, jemalloc, mimalloc.
    #[arg(long, value_parser = allocator_list, default_value = "glibc,tcmalloc,jemalloc,mimalloc",
          value_name = "ALLOCATOR[,...]")]
    pub allocator: List<Allocator>,

    /// Threads for the local pattern.
    #[arg(long, short = 't', value_parser = parse_count, default_value = "16", allow_hyphen_values = true)]
    #[arg(value_name = "N")]
    pub threads: u32,

    /// Producer/consumer pairs for the pairs pattern.
    #[arg(long, value_parser = parse_count, default_value = "16", allow_hyphen_values = true)]
    #[arg(value_name = "N")]
    pub pairs: u32,

    /// Rounds per thread (local) or per pair (pairs).
    #[arg(long, default_value_t = 1000)]
    #[arg(value_name = "N")]
    pub iterations: u64,

    /// Blocks per round.
    #[arg(long, default_value_t = 1024)]
    #[arg(value_name = "N")]
    pub batch: usize,

    /// Block sizes in bytes: a list (64 or 16,64,4k), a uniform range
    /// (16-4096) or a log-uniform one (16-4096:log).
    #[arg(long, value_parser = parse_sizes, default_value = "16-512")]
    pub size: Sizes,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub repeat: RepeatArgs,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub output: OutputArgs,
}

fn pattern_list(s: &str) -> Result<List<Pattern>, String> {
    parse_axis(s, |p| match p {
        "local" => Ok(Pattern::Local),
        "pairs" => Ok(Pattern::Pairs),
        other => Err(format!("unknown pattern `{other}` (expected local or pairs)")),
    })
}

fn allocator_list(s: &str) -> Result<List<Allocator>, String> {
    parse_axis(s, parse_allocator)
}
