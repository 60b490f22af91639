//! `contend lock`'s flags, as clap sees them. Parsing only: validation
//! that spans several flags lives in `spec`.

use crate::engine::repeat_args::RepeatArgs;
use crate::family::lock::registry::parse_lock;
use crate::model::value::{
    parse_affinity, parse_axis, parse_count, parse_duration, parse_latency_every, parse_nanos, parse_percent,
    parse_spinners, parse_work, LatencyEvery, List, SpinPolicy, Work, WorkerAffinity,
};
use crate::output::args::OutputArgs;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

pub(crate) const LOCK_EXAMPLES: &str = "\
Every list flag sweeps: the run is the cartesian product, one row per point.

Examples:
  contend lock --lock seed --threads 4 --hold 1us --spin 1,10,100,1000,10000,100000 \\
      --duration 5s
  contend lock --lock futex,pthread --threads 2,4,8 --hold 1us --idle sleep:50us
  contend lock --lock futex --threads 4 --period 1000ns --duty 10%,50%,90%
  contend lock --lock adaptive --spinners none,one,many --threads 256 --period 1000ns --duty 50%
  contend lock --lock seed --threads 4 --format seed
  contend lock --lock pi --threads 4 --hold sleep:1us --affinity none,spread
  contend lock --lock futex --export-json result.json
  contend lock --procs 10,100,1000 --lock flock,fcntl,sysv --hold sleep:100us --idle 0 \\
      --duration 10s --format gnuplot";

/// `contend lock`.
#[derive(Debug, Args)]
#[command(mut_args(crate::output::args::fit_to(
    "lockscale's layout: a `# lock hold idle duration` line, then per worker count the workers, seconds, user and system seconds, and the per-worker acquisition statistics",
    Some("cs/s against the swept axis with 95% intervals, and a fairness panel")
)))]
#[command(next_help_heading = crate::output::args::WORKLOAD)]
pub struct LockArgs {
    /// Locks to measure, comma separated (`contend list locks` shows them).
    #[arg(long, short = 'l', value_parser = lock_list, default_value = "futex", value_name = "LOCK[,...]")]
    pub lock: List<&'static str>,

    /// Worker threads, comma separated [default: 4].
    #[arg(long, short = 't', value_parser = count_list, allow_hyphen_values = true,
          value_name = "N[,N...]", conflicts_with = "procs")]
    pub threads: Option<List<u32>>,

    /// Worker processes instead of threads, comma separated: forked
    /// workers share the lock through shared memory.
    #[arg(long, short = 'p', value_parser = count_list, allow_hyphen_values = true, value_name = "N[,N...]")]
    pub procs: Option<List<u32>>,

    /// Where the workers run, comma separated to compare: none (not
    /// pinned, the scheduler decides), spread (worker i pinned to the i-th
    /// CPU contend may use, modulo their count: perf bench futex's
    /// placement) or same (every worker on the first of them). The CPUs
    /// are the ones contend may use: narrow them with taskset
    /// [default: none].
    #[arg(long, value_parser = affinity_list, value_name = "PLACEMENT[,...]")]
    pub affinity: Option<List<WorkerAffinity>>,

    /// Locks the workers are spread over, comma separated: worker i
    /// takes lock i mod N (with many locks, the kernel's futex hash
    /// buckets matter; see --futex-hash) [default: 1].
    #[arg(long, value_parser = count_list, allow_hyphen_values = true, value_name = "N[,N...]")]
    pub locks: Option<List<u32>>,

    /// The process's private futex hash, in buckets (a power of two, at
    /// least 2), set with PR_FUTEX_HASH (Linux 6.17) before each run;
    /// threads only (worker processes share futexes, which the global
    /// hash serves) [default: the kernel's own choice].
    #[arg(long, value_parser = hash_list, allow_hyphen_values = true, value_name = "BUCKETS[,...]")]
    pub futex_hash: Option<List<u32>>,

    /// Directory for the lock file of file locks and sysv (a private
    /// subdirectory is created and removed) [default: /dev/shm, a tmpfs].
    #[arg(long, value_name = "DIR")]
    pub lock_dir: Option<PathBuf>,

    /// File locks: open the lock file before every acquisition and close
    /// it after the release, as lockscale does (an open and a close in
    /// every measured cycle), instead of once per worker, which is
    /// contend's default. For matching lockscale's table exactly.
    #[arg(long)]
    pub reopen: bool,

    /// Spin budget: user-space attempts before sleeping (locks that have
    /// one) [default: 100].
    #[arg(long, short = 's', value_parser = count_list, allow_hyphen_values = true, value_name = "N[,N...]")]
    pub spin: Option<List<u32>>,

    /// glibc's mutex spin count (the GLIBC_TUNABLES
    /// glibc.pthread.mutex_spin_count, 0..32767) for pthread-adaptive:
    /// each run is a child contend started with it set, since glibc
    /// reads it only at start-up [default: glibc's own, 100, in this
    /// process].
    #[arg(long, value_parser = glibc_spin_list, allow_hyphen_values = true, value_name = "N[,N...]")]
    pub glibc_spin: Option<List<u32>>,

    /// Share of acquisitions that are reads, for reader-writer locks: each
    /// worker draws read or write per acquisition (whole percent, 0% to
    /// 100%); mutexes in the same sweep run once per point, as the
    /// reference [default: 90% for reader-writer locks].
    #[arg(long, value_parser = read_list, allow_hyphen_values = true, value_name = "PCT[,PCT...]")]
    pub read: Option<List<u32>>,

    /// Waiting policy for `adaptive`: none (sleep at once), one (one
    /// adaptive spinner, the rest sleep) or many (every waiter spins)
    /// [default: one].
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

    /// Measured window per run (rates divide by the measured length); with
    /// --precision, many short runs narrow the interval faster than a few
    /// long ones [default: 2s; 300ms with --precision].
    #[arg(long, short = 'd', value_parser = parse_duration, allow_hyphen_values = true)]
    #[arg(help_heading = crate::output::args::MEASUREMENT)]
    pub duration: Option<Duration>,

    /// Abort with a diagnosis (lock word, who holds, who waits) when no
    /// worker completes a critical section for this long [default: the
    /// larger of 10s and 100 holds].
    #[arg(long, value_parser = parse_duration, value_name = "DURATION", allow_hyphen_values = true)]
    #[arg(help_heading = crate::output::args::DIAGNOSIS)]
    pub stall_timeout: Option<Duration>,

    /// Fault injection (with --procs): this long into the window, the
    /// worker holding the lock kills itself inside its critical section.
    /// Robust locks (pthread-robust) recover and the report gives the
    /// recovery time; the others end the run with an explanation.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION", allow_hyphen_values = true)]
    #[arg(help_heading = crate::output::args::DIAGNOSIS)]
    pub kill_holder_after: Option<Duration>,

    /// Run before the window starts, per run [default: 250ms; 100ms with
    /// --precision].
    #[arg(long, value_parser = parse_duration, allow_hyphen_values = true)]
    #[arg(help_heading = crate::output::args::MEASUREMENT)]
    #[arg(value_name = "DURATION")]
    pub warmup: Option<Duration>,

    /// Time one acquisition in N per worker, from the call to lock() to
    /// the start of the critical section. A timed acquisition starts a
    /// clock read later, which under contention can change who takes the
    /// lock next: `auto` picks N per point to keep that out of cs/s (1024
    /// at hold 1us, 128 at 10us, 1 from 1ms), 1 times every one
    /// (perturbing), `off` none.
    #[arg(long, value_parser = parse_latency_every, default_value = "auto", value_name = "N|auto|off")]
    #[arg(help_heading = crate::output::args::MEASUREMENT)]
    pub latency_every: LatencyEvery,

    /// Output on stdout: a table, futex-scalability.c's summary lines, or
    /// lockscale's gnuplot columns.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    #[arg(help_heading = crate::output::args::OUTPUT)]
    pub format: Format,

    /// Measure every point as this many identical copies (replica 1, 2,
    /// ...), interleaved like distinct points: an A/A check of the
    /// method's noise (`contend compare FILE --baseline replica=1`).
    #[arg(long, value_parser = parse_count, default_value = "1", value_name = "N")]
    #[arg(help_heading = crate::output::args::MEASUREMENT)]
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

fn hash_list(s: &str) -> Result<List<u32>, String> {
    parse_axis(s, |t| {
        match parse_count(t).map_err(|e| if t.trim() == "0" { GLOBAL_HASH.into() } else { e })? {
            n if n >= 2 && n.is_power_of_two() && n <= 1 << 20 => Ok(n),
            n => Err(format!("{n} buckets: the kernel takes a power of two from 2 to 1048576")),
        }
    })
}

/// Why `--futex-hash 0` is refused.
const GLOBAL_HASH: &str =
    "0 would be the global hash, which the kernel lets a process choose once and never \
     leave (EBUSY), so a sweep cannot go there and back; leave --futex-hash out for the kernel's own choice";

fn glibc_spin_list(s: &str) -> Result<List<u32>, String> {
    parse_axis(s, |t| match t.trim().parse::<u32>() {
        Ok(n) if n <= GLIBC_SPIN_MAX => Ok(n),
        Ok(n) => Err(format!("{n} is above glibc's largest mutex spin count, {GLIBC_SPIN_MAX}")),
        Err(_) => Err(format!("`{t}` is not a whole number from 0 to {GLIBC_SPIN_MAX}")),
    })
}

fn read_list(s: &str) -> Result<List<u32>, String> {
    parse_axis(s, |t| {
        let t = t.trim();
        let Some(number) = t.strip_suffix('%') else {
            return Err(format!("`{t}` needs a %: write {t}% (the share of acquisitions that are reads)"));
        };
        match number.trim().parse::<u32>() {
            Ok(n) if n <= 100 => Ok(n),
            _ => Err(format!("`{t}` is not a whole percentage from 0% to 100%")),
        }
    })
}

/// The read share of a reader-writer lock's point without `--read`:
/// read-mostly, the load reader-writer locks are chosen for.
pub const DEFAULT_READ_PCT: u32 = 90;

/// The largest glibc.pthread.mutex_spin_count glibc accepts (its
/// dl-tunables.list); a larger one it ignores, silently.
pub const GLIBC_SPIN_MAX: u32 = 32767;

fn work_list(s: &str) -> Result<List<Work>, String> {
    parse_axis(s, parse_work)
}

fn nanos_list(s: &str) -> Result<List<u64>, String> {
    parse_axis(s, parse_nanos)
}

fn affinity_list(s: &str) -> Result<List<WorkerAffinity>, String> {
    parse_axis(s, parse_affinity)
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
