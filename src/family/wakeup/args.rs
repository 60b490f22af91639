//! `contend wakeup`'s flags.

use crate::family::wakeup::placement::Affinity;
use crate::family::wakeup::registry::parse_primitive;
use crate::model::value::{parse_axis, parse_count, parse_cpu_list, parse_duration, parse_nanos, List};
use clap::Args;
use std::time::Duration;

pub(crate) const EXAMPLES: &str = "\
A round: A stamps the clock, posts B's primitive and waits on its own; B wakes,
stamps, posts A's; A stamps again. The round trip is A's two stamps; the
one-way times are measured directly across the two threads' stamps
(CLOCK_MONOTONIC is one clock on every CPU).

Examples:
  contend wakeup --primitive posix-sem,sysv-sem,futex --pairs 2 --iterations 100000 \\
      --interval 100us --affinity cross
  contend wakeup --primitive futex --affinity same,cross,none --policy fifo --priority 80 \\
      --mlock
  contend wakeup --primitive pipe,eventfd --proc-pairs 2
  contend wakeup --primitive futex --trace-threshold 200us --trace-stop --trace-sched
  contend wakeup --primitive sysv-sem --histogram 1us --export-json wake.json";

/// `contend wakeup`.
#[derive(Debug, Args)]
#[command(mut_args(crate::output::args::fit_to(
    "one block per point: round-trip latency (µs) at each percentile",
    Some("round-trip latency against percentile, a line per point")
)))]
#[command(next_help_heading = crate::output::args::WORKLOAD)]
pub struct WakeupArgs {
    /// Primitives, comma separated (`contend list primitives`).
    #[arg(long, short = 'P', value_parser = primitive_list, default_value = "posix-sem,sysv-sem,futex",
          value_name = "PRIMITIVE[,...]")]
    pub primitive: List<&'static str>,

    /// Ping-pong pairs of threads running at once [default: 1].
    #[arg(long, value_parser = parse_count, allow_hyphen_values = true, value_name = "N")]
    pub pairs: Option<u32>,

    /// Pairs of processes instead of threads, as `contend lock --procs`
    /// is processes instead of threads (primitives that work across
    /// processes only: posix-sem, sysv-sem, futex, futex2, eventfd, pipe,
    /// condvar).
    #[arg(long, value_parser = parse_count, allow_hyphen_values = true, value_name = "N",
          conflicts_with = "pairs")]
    pub proc_pairs: Option<u32>,

    /// Round trips measured per pair and run; with the default 3 runs,
    /// 9000 per pair [default: 3000, unless --duration].
    #[arg(long, short = 'n', conflicts_with = "duration")]
    #[arg(help_heading = crate::output::args::MEASUREMENT)]
    #[arg(value_name = "N")]
    pub iterations: Option<u64>,

    /// Measure for this long instead of a fixed number of round trips.
    #[arg(long, short = 'd', value_parser = parse_duration, allow_hyphen_values = true)]
    #[arg(help_heading = crate::output::args::MEASUREMENT)]
    pub duration: Option<Duration>,

    /// How long the pairs ping-pong before measuring starts (not
    /// recorded), per point.
    #[arg(long, value_parser = parse_duration, default_value = "100ms", allow_hyphen_values = true)]
    #[arg(help_heading = crate::output::args::MEASUREMENT)]
    #[arg(value_name = "DURATION")]
    pub warmup: Duration,

    /// Sleep between rounds, on an absolute schedule as rt-tests does (0:
    /// back to back).
    #[arg(long, short = 'i', value_parser = parse_nanos, default_value = "1ms", allow_hyphen_values = true)]
    #[arg(value_name = "DURATION")]
    pub interval: u64,

    /// Placement, comma separated to compare several: same (a pair's two
    /// threads on one CPU), cross (on different CPUs), none (unpinned),
    /// spread (partners half the CPU list apart, CPUs shared evenly).
    #[arg(long, short = 'a', value_parser = affinity_list, default_value = "none", value_name = "PLACEMENT[,...]")]
    #[arg(help_heading = crate::output::args::SCHEDULING)]
    pub affinity: List<Affinity>,

    /// CPUs to use, as a list (0-3,6) [default: every CPU this process may
    /// run on].
    #[arg(long, value_parser = cpu_list, value_name = "LIST")]
    #[arg(help_heading = crate::output::args::SCHEDULING)]
    pub cpus: Option<List<usize>>,

    /// CPUs to leave alone (e.g. the one taking interrupts).
    #[arg(long, value_parser = cpu_list, value_name = "LIST")]
    #[arg(help_heading = crate::output::args::SCHEDULING)]
    pub exclude_cpus: Option<List<usize>>,

    /// Scheduling policy of the measured threads: other, fifo or rr.
    #[arg(long, default_value = "other", value_name = "POLICY")]
    #[arg(help_heading = crate::output::args::SCHEDULING)]
    pub policy: String,

    /// Real-time priority (1-99) for --policy fifo or rr [default: 50]. Two
    /// values, A,B, give each side its own: `--priority 50,51` runs the
    /// replying thread one level above the poster, as semtest does, so a
    /// post preempts the poster at once.
    #[arg(long, allow_hyphen_values = true, value_parser = parse_priorities, value_name = "N[,N]")]
    #[arg(help_heading = crate::output::args::SCHEDULING)]
    pub priority: Option<(i32, Option<i32>)>,

    /// Lock all memory (mlockall) so no page fault lands in a round trip.
    #[arg(long)]
    #[arg(help_heading = crate::output::args::SCHEDULING)]
    pub mlock: bool,

    /// Write a tag (pair, CPUs, latency, iteration) to the ftrace buffer's
    /// trace_marker for every round trip longer than this.
    #[arg(long, value_parser = parse_nanos, value_name = "DURATION")]
    #[arg(help_heading = crate::output::args::DIAGNOSIS)]
    pub trace_threshold: Option<u64>,

    /// With --trace-threshold: turn tracing off at the first such round
    /// trip, so the buffer ends with what led up to it (cyclictest -b).
    #[arg(long, requires = "trace_threshold")]
    #[arg(help_heading = crate::output::args::DIAGNOSIS)]
    pub trace_stop: bool,

    /// With --trace-threshold: enable the scheduler's switch, wakeup and
    /// migration events for the run, so the buffer explains the outlier.
    #[arg(long, requires = "trace_threshold")]
    #[arg(help_heading = crate::output::args::DIAGNOSIS)]
    pub trace_sched: bool,

    /// Print round-trip histograms, cyclictest style: one row per bucket of
    /// this width, one column per pair [default: 1us when given alone].
    #[arg(long, value_parser = parse_nanos, num_args = 0..=1, default_missing_value = "1us",
          value_name = "BUCKET")]
    #[arg(help_heading = crate::output::args::OUTPUT)]
    pub histogram: Option<u64>,

    /// Abort with a diagnosis when a pair makes no round trip for this
    /// long [default: the larger of 10s and 100 intervals].
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    #[arg(help_heading = crate::output::args::DIAGNOSIS)]
    pub stall_timeout: Option<Duration>,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub output: crate::output::args::OutputArgs,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub repeat: crate::engine::repeat_args::RepeatArgs,
}

fn primitive_list(s: &str) -> Result<List<&'static str>, String> {
    parse_axis(s, parse_primitive)
}

fn affinity_list(s: &str) -> Result<List<Affinity>, String> {
    parse_axis(s, Affinity::parse)
}

fn cpu_list(s: &str) -> Result<List<usize>, String> {
    parse_cpu_list(s).map(List)
}

/// `N` or `A,B`.
fn parse_priorities(text: &str) -> Result<(i32, Option<i32>), String> {
    let number = |t: &str| {
        t.trim()
            .parse::<i32>()
            .map_err(|_| format!("`{}` is not a priority (expected a whole number, or A,B)", t.trim()))
    };
    match text.split_once(',') {
        None => Ok((number(text)?, None)),
        Some((a, b)) => Ok((number(a)?, Some(number(b)?))),
    }
}

impl WakeupArgs {
    /// How many pairs, and whether they are processes (--proc-pairs).
    pub fn pairs(&self) -> (u32, bool) {
        match (self.pairs, self.proc_pairs) {
            (_, Some(n)) => (n, true),
            (n, None) => (n.unwrap_or(1), false),
        }
    }
}
