//! The command line, as clap sees it. Parsing only: validation that spans
//! several flags lives in `spec`. One file per family that has many flags.

mod repeat;

pub use crate::family::wakeup::args::WakeupArgs;
pub use crate::output::args::OutputArgs;
pub use repeat::RepeatArgs;

use crate::family::alloc::registry::{parse_allocator, Allocator};
use crate::family::alloc::workload::Pattern;
use crate::family::lock::registry::parse_lock;
use crate::model::value::{
    parse_axis, parse_count, parse_duration, parse_nanos, parse_percent, parse_spinners, parse_work, List,
    SpinPolicy, Work,
};
use crate::model::value::{parse_sizes, Sizes};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

/// contend: how locks, semaphores and allocators behave under contention.
#[derive(Debug, Parser)]
#[command(name = "contend", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// What to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// N threads contend for one lock: critical sections per second, CPU
    /// split, fairness, context switches and futex syscalls per point.
    #[command(after_help = LOCK_EXAMPLES)]
    Lock(Box<LockArgs>),
    /// Pairs of threads ping-pong through a primitive (semaphores, futex,
    /// eventfd, pipe, condvar, mutex hand-off): wake-up latency per pair,
    /// with percentiles, histograms, placement, real-time priority and
    /// ftrace tagging of outliers.
    #[command(after_help = crate::family::wakeup::args::EXAMPLES)]
    Wakeup(Box<WakeupArgs>),
    /// Threads doing malloc/free, and producer/consumer pairs freeing each
    /// other's blocks, under glibc, tcmalloc, jemalloc and mimalloc.
    #[command(after_help = ALLOC_EXAMPLES)]
    Alloc(Box<AllocArgs>),
    /// Compare two JSON exports point by point (ratio of the means, its
    /// 95% interval and a Welch t-test verdict; exits 1 on a significant
    /// regression beyond --threshold, for CI), or the points of one
    /// export against a baseline point, paired by round (--baseline).
    Compare(CompareArgs),
    /// Find the spin budget that maximizes throughput for a lock, thread
    /// count and hold time: a log-spaced search, then refinement around
    /// the best, each point with its confidence interval.
    #[command(after_help = TUNE_EXAMPLES)]
    Tune(Box<TuneArgs>),
    /// List what contend can measure.
    List(ListArgs),
    /// Internal: the allocator child `contend alloc` starts.
    #[command(name = "__alloc-child", hide = true)]
    AllocChild {
        /// The child's spec, as JSON.
        spec: String,
    },
    /// Remove what runs killed with SIGKILL left behind (SysV semaphore
    /// sets, lock directories), as recorded in the per-user ledger.
    Cleanup,
    /// Print a shell completion script (e.g. `contend completions bash >
    /// /etc/bash_completion.d/contend`), generated from these definitions.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page, contend(1), as roff (`contend man | man -l -`),
    /// generated from these definitions.
    Man,
}

const LOCK_EXAMPLES: &str = "\
Every list flag sweeps: the run is the cartesian product, one row per point.

Examples:
  contend lock --lock seed --threads 4 --hold 1us --spin 1,10,100,1000,10000,100000 --duration 5s
  contend lock --lock futex,pthread --threads 2,4,8 --hold 1us --idle sleep:50us
  contend lock --lock futex --threads 4 --period 1000ns --duty 10%,50%,90%
  contend lock --lock adaptive --spinners none,one,many --threads 256 --period 1000ns --duty 50%
  contend lock --lock seed --threads 4 --format seed
  contend lock --lock futex --export-json result.json
  contend lock --procs 10,100,1000 --lock flock,fcntl,sysv --hold sleep:100us --idle 0 --duration 10s --format gnuplot";

const ALLOC_EXAMPLES: &str = "\
Examples:
  contend alloc --pattern local,pairs --allocator glibc,tcmalloc,jemalloc,mimalloc --threads 16
  contend alloc --pattern pairs --allocator glibc,glibc:arena_max=1 --pairs 8 --size 16-4096:log";

/// `contend compare`.
#[derive(Debug, Args)]
#[command(after_help = COMPARE_EXAMPLES)]
pub struct CompareArgs {
    /// The baseline export (--export-json of any family); with
    /// --baseline, the one export whose points are compared.
    pub old: PathBuf,
    /// The export to judge against it (same family).
    #[arg(required_unless_present = "baseline", conflicts_with = "baseline")]
    pub new: Option<PathBuf>,
    /// Compare the points of one export with its baseline point, run
    /// against run of the same round: a lock (primitive, allocator) name,
    /// or FIELD=VALUE such as hold=1us or replica=1.
    #[arg(long, value_name = "POINT")]
    pub baseline: Option<String>,
    /// A significant slowdown larger than this is a regression (exit 1).
    #[arg(long, value_parser = parse_percent, default_value = "5%", value_name = "PERCENT")]
    pub threshold: f64,
    /// Print the comparison as JSON instead of a table (for scripts).
    #[arg(long)]
    pub json: bool,
}

const COMPARE_EXAMPLES: &str = "\
Examples:
  contend compare before.json after.json
  contend lock --lock adaptive,pthread,parking_lot --threads 2,4 --export-json m.json
  contend compare m.json --baseline pthread
  contend lock --lock seed --threads 2 --hold 1us,1.03us --runs 20 --export-json ab.json
  contend compare ab.json --baseline hold=1us";

const TUNE_EXAMPLES: &str = "\
Examples:
  contend tune --lock futex --threads 4 --hold 1us
  contend tune --lock adaptive --threads 2 --hold 2.5us --max-time 60s";

/// `contend tune`.
#[derive(Debug, Args)]
pub struct TuneArgs {
    /// The lock to tune (one with a spin budget).
    #[arg(long, short = 'l', value_parser = parse_lock, default_value = "futex")]
    pub lock: &'static str,

    /// Worker threads.
    #[arg(long, short = 't', value_parser = parse_count, default_value = "4", allow_hyphen_values = true)]
    pub threads: u32,

    /// Time inside the lock (as for contend lock).
    #[arg(long, value_parser = parse_work, default_value = "1us", allow_hyphen_values = true)]
    pub hold: Work,

    /// Time outside the lock.
    #[arg(long, value_parser = parse_work, default_value = "0", allow_hyphen_values = true)]
    pub idle: Work,

    /// Window of each run.
    #[arg(long, short = 'd', value_parser = parse_duration, default_value = "500ms", allow_hyphen_values = true)]
    pub duration: Duration,

    /// Warm-up before each run.
    #[arg(long, value_parser = parse_duration, default_value = "100ms", allow_hyphen_values = true)]
    pub warmup: Duration,

    /// Runs per spin budget.
    #[arg(long, value_parser = parse_count, default_value = "3", allow_hyphen_values = true)]
    pub runs: u32,

    /// Stop refining once this much time is spent (the coarse pass always
    /// completes).
    #[arg(long, value_parser = parse_duration, default_value = "60s", allow_hyphen_values = true)]
    pub max_time: Duration,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub output: OutputArgs,
}

/// `contend alloc`.
#[derive(Debug, Args)]
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
    pub threads: u32,

    /// Producer/consumer pairs for the pairs pattern.
    #[arg(long, value_parser = parse_count, default_value = "16", allow_hyphen_values = true)]
    pub pairs: u32,

    /// Rounds per thread (local) or per pair (pairs).
    #[arg(long, default_value_t = 1000)]
    pub iterations: u64,

    /// Blocks per round.
    #[arg(long, default_value_t = 1024)]
    pub batch: usize,

    /// Block sizes in bytes: a list (64 or 16,64,4k), a uniform range
    /// (16-4096) or a log-uniform one (16-4096:log).
    #[arg(long, value_parser = parse_sizes, default_value = "16-512")]
    pub size: Sizes,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub output: OutputArgs,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub repeat: RepeatArgs,
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

/// `contend lock`.
#[derive(Debug, Args)]
pub struct LockArgs {
    /// Locks to measure, comma separated (`contend list locks` shows them).
    #[arg(long, short = 'l', value_parser = lock_list, default_value = "futex", value_name = "LOCKS")]
    pub lock: List<&'static str>,

    /// Worker threads, comma separated (default 4).
    #[arg(long, short = 't', value_parser = count_list, allow_hyphen_values = true,
          value_name = "N[,N...]", conflicts_with = "procs")]
    pub threads: Option<List<u32>>,

    /// Worker processes instead of threads, comma separated: forked
    /// workers share the lock through shared memory.
    #[arg(long, short = 'p', value_parser = count_list, allow_hyphen_values = true, value_name = "N[,N...]")]
    pub procs: Option<List<u32>>,

    /// Directory for the lock file of file locks and sysv (a private
    /// subdirectory is created and removed); default /dev/shm (tmpfs).
    #[arg(long, value_name = "DIR")]
    pub lock_dir: Option<PathBuf>,

    /// Spin budget: user-space attempts before sleeping (locks that have one;
    /// default 100).
    #[arg(long, short = 's', value_parser = count_list, allow_hyphen_values = true, value_name = "N[,N...]")]
    pub spin: Option<List<u32>>,

    /// Waiting policy for `adaptive`: none (sleep at once), one (one
    /// adaptive spinner, the rest sleep) or many (every waiter spins);
    /// default one.
    #[arg(long, value_parser = spinners_list, value_name = "POLICY[,...]")]
    pub spinners: Option<List<SpinPolicy>>,

    /// Time inside the lock: DURATION (busy-wait on the clock), busy:DURATION
    /// or sleep:DURATION (nanosleep). Units: ns, us, ms, s.
    #[arg(long, value_parser = work_list, default_value = "1us", value_name = "WORK[,WORK...]",
          allow_hyphen_values = true, conflicts_with_all = ["period", "duty"])]
    pub hold: List<Work>,

    /// Time outside the lock between acquisitions, same syntax as --hold.
    #[arg(long, value_parser = work_list, default_value = "0", value_name = "WORK[,WORK...]",
          allow_hyphen_values = true, conflicts_with_all = ["period", "duty"])]
    pub idle: List<Work>,

    /// Alternative to --hold/--idle: the period of one lock+work cycle
    /// (busy), split by --duty into hold and idle.
    #[arg(long, value_parser = nanos_list, requires = "duty", allow_hyphen_values = true,
          value_name = "DURATION[,...]")]
    pub period: Option<List<u64>>,

    /// Share of --period spent holding the lock, e.g. 10% (hold 10%, idle 90%).
    #[arg(long, value_parser = percent_list, requires = "period", allow_hyphen_values = true,
          value_name = "PERCENT[,...]")]
    pub duty: Option<List<f64>>,

    /// Measured window per run (rates divide by the measured length);
    /// default 2s, or 300ms with --precision, where many short runs
    /// narrow the interval faster than a few long ones.
    #[arg(long, short = 'd', value_parser = parse_duration, allow_hyphen_values = true)]
    pub duration: Option<Duration>,

    /// Abort with a diagnosis (lock word, who holds, who waits) when no
    /// worker completes a critical section for this long; default the
    /// larger of 10s and 100 holds.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION", allow_hyphen_values = true)]
    pub stall_timeout: Option<Duration>,

    /// Fault injection (with --procs): this long into the window, the
    /// worker holding the lock kills itself inside its critical section.
    /// Robust locks (pthread-robust) recover and the report gives the
    /// recovery time; the others end the run with an explanation.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION", allow_hyphen_values = true)]
    pub kill_holder_after: Option<Duration>,

    /// Run before the window starts, per run; default 250ms, or 100ms
    /// with --precision.
    #[arg(long, value_parser = parse_duration, allow_hyphen_values = true)]
    pub warmup: Option<Duration>,

    /// Output on stdout: a table, futex-scalability.c's summary lines, or
    /// lockscale's gnuplot columns.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,

    /// Measure every point as this many identical copies (replica 1, 2,
    /// ...), interleaved like distinct points: an A/A check of the
    /// method's noise (`contend compare FILE --baseline replica=1`).
    #[arg(long, value_parser = parse_count, default_value = "1", value_name = "N")]
    pub replicate: u32,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub output: OutputArgs,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub repeat: RepeatArgs,
}

fn lock_list(s: &str) -> Result<List<&'static str>, String> {
    parse_axis(s, parse_lock)
}

fn count_list(s: &str) -> Result<List<u32>, String> {
    parse_axis(s, parse_count)
}

fn work_list(s: &str) -> Result<List<Work>, String> {
    parse_axis(s, parse_work)
}

fn nanos_list(s: &str) -> Result<List<u64>, String> {
    parse_axis(s, parse_nanos)
}

fn spinners_list(s: &str) -> Result<List<SpinPolicy>, String> {
    parse_axis(s, parse_spinners)
}

fn percent_list(s: &str) -> Result<List<f64>, String> {
    parse_axis(s, parse_percent)
}

/// Output formats on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// One row per point.
    Table,
    /// futex-scalability.c's lines: entries, M entries/s, entries per thread.
    Seed,
    /// lockscale's layout: a `# lock hold idle duration` line, then per
    /// worker count: workers, seconds, user s, sys s, total, min, max,
    /// mean, stddev of per-worker acquisitions.
    Gnuplot,
}

/// `contend list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// What to list.
    #[arg(value_enum, default_value_t = ListWhat::Locks)]
    pub what: ListWhat,
}

/// Things `contend list` can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListWhat {
    /// The lock registry with capabilities.
    Locks,
    /// The allocators and whether this machine has them.
    Allocators,
    /// The wake-up primitives, and which work between processes.
    Primitives,
}
