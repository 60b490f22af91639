//! `contend run`'s flags, as clap sees them.

use crate::engine::repeat_args::RepeatArgs;
use crate::model::program::GLIBC;
use crate::output::args::OutputArgs;
use clap::Args;
use std::ffi::OsString;
use std::path::PathBuf;

pub(crate) const PROGRAM_EXAMPLES: &str = "\
Examples:
  contend run --profile --runs 1 -- sysbench threads --threads=8 --thread-locks=2 --time=2 run
  contend run --lock pthread,adaptive,mcs --runs 5 -- pigz -p 4 -k -f big.tar
  contend run --lock adaptive@0x4040c0,tas@queue_put --runs 5 -- ./prog
  contend run --recommend --lock adaptive,tas,mcs --runs 5 -- pigz -p 4 -k -f big.tar
  contend run --what-if top:3 --runs 8 -- ./prog
  contend run --what-if 0x4040c0,queue_put --runs 8 -- ./prog
  contend run --lock pthread,adaptive --metric 'events/s \\(eps\\): *([0-9.]+)' \\
      -- sysbench mutex run";

/// When the program runs without address randomization (`--aslr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Aslr {
    /// Off only where mutexes are chosen by address.
    Auto,
    /// Never turned off.
    On,
    /// Always off.
    Off,
}

/// Where the program's stdout and stderr go (`--output`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProgramOutput {
    /// To contend's own stdout and stderr, every execution's.
    Inherit,
    /// Nowhere (/dev/null); --metric still reads them.
    Null,
    /// Every execution's, appended in order, written to this file when
    /// the run ends.
    File(PathBuf),
}

impl ProgramOutput {
    /// `--output`'s value: `inherit`, `null`, or a file (`./null` for a
    /// file of that name).
    pub fn parse(v: &str) -> Result<Self, String> {
        match v {
            "inherit" => Ok(Self::Inherit),
            "null" => Ok(Self::Null),
            "" => Err("give inherit, null or a file name".into()),
            file => Ok(Self::File(file.into())),
        }
    }
}

/// `contend run`.
#[derive(Debug, Args)]
#[command(mut_args(crate::output::args::fit_to(
    "one row per lock: mean wall time (or --metric), its 95% interval, the ratio to pthread and that ratio's interval",
    Some("each lock's metric with its 95% interval; with --profile, the waits of each lock's five most waited-on mutexes by percentile")
)))]
#[command(next_help_heading = crate::output::args::LOCKS_AND_PROFILE)]
pub struct ProgramArgs {
    /// Locks to run the program with, comma-separated: `pthread` (glibc's
    /// own mutex, the baseline every ratio is to; added first if missing)
    /// and any lock that fits in a pthread_mutex_t: adaptive, mcs, ticket,
    /// tas, ttas, backoff, pthread-spin (glibc's pthread_spin_lock algorithm), yield,
    /// pi, parking_lot. `LOCK@MUTEX` swaps only that mutex (an address from
    /// --profile, or a name it prints: a function, file:line or
    /// module+0xoffset), every other one stays
    /// glibc's; join several with `+` (`tas@0x4040c0+mcs@queue_put`). A
    /// comma inside brackets is part of a name (`tas@ns::f(int, long)`).
    #[arg(long, default_value = GLIBC, value_name = "LOCK[,...]")]
    pub lock: Vec<String>,

    /// Profile every mutex: acquisitions, contended ones, total and p99
    /// wait, mean hold, named by the call site of its first acquisition.
    /// Costs time per acquisition (measured in the README), so the wall
    /// times of a profiled run are the profile's, not the program's.
    #[arg(long)]
    pub profile: bool,

    /// Recommend a lock per mutex: profile the program once, then try each
    /// of `--lock`'s locks (all that fit when only pthread is given) on
    /// each of the `--mutexes` most waited-on mutexes alone, interleaved
    /// in rounds and paired with glibc's mutex; then run the winners
    /// together. Prints the plan's executions before it starts.
    #[arg(long)]
    pub recommend: bool,

    /// With --recommend: the mutexes tried, the most waited-on first.
    #[arg(long, default_value_t = crate::family::program::run_mode::MUTEXES, value_name = "N")]
    pub mutexes: usize,

    /// With --recommend: the smallest gain worth a change, percent. A
    /// lock whose interval reaches past it on the winning side without
    /// clearing 1 reads "cannot tell" (with the runs that would decide),
    /// not "keep glibc" [default: 5%].
    #[arg(long, value_parser = parse_pct, value_name = "PCT")]
    pub threshold: Option<f64>,

    /// What shorter critical sections would buy: profile once, then, by
    /// virtual speedup (Coz's method: every other thread paused instead),
    /// predict the program with each MUTEX's sections half as long (and
    /// gone, for one mutex), interleaved in rounds, and rank the mutexes.
    /// MUTEX: an address or a name the profile prints, several joined by
    /// commas, or `top:N` for the N most waited-on.
    #[arg(long, value_name = "MUTEX[,...]|top:N")]
    pub what_if: Option<String>,

    /// With --what-if MUTEX: predict by lengthening its critical sections
    /// by each of these delays instead, and fitting a line through them
    /// (the older method: it extrapolates, and fails for sections of tens
    /// of ns).
    #[arg(long, value_delimiter = ',', value_parser = crate::model::value::parse_duration, value_name = "DURATION[,...]")]
    pub delays: Option<Vec<std::time::Duration>>,

    /// Mutexes shown per lock in the profile, by --sort's key.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top: usize,

    /// With --profile: do not split the futex words' waits by what their
    /// holders were doing (the split follows every context switch of the
    /// program's threads, which costs a little more in the counting run).
    #[arg(long)]
    pub no_holder_state: bool,

    /// The futex view's user stacks (who waited and who woke, by code):
    /// at most N a second, each futex call's stack while under it, the
    /// first calls of each tenth of a second above it (0: none).
    #[arg(long, default_value_t = crate::measure::futex_view::stacks::PER_S, value_name = "PER_S")]
    pub futex_stacks: u64,

    /// The profile's table ordered by KEY, largest first (as `perf lock
    /// report -k`): wait (total wait), acquisitions, contended (had to
    /// wait), max-wait, held (total hold). The table's order only:
    /// --what-if top:N, --recommend and the export rank by total wait.
    #[arg(long, value_enum, default_value_t = crate::model::program::ProfileSort::Wait, value_name = "KEY")]
    pub sort: crate::model::program::ProfileSort,

    /// Only the mutexes of the processes named NAME (their comm, as `ps`
    /// shows it): the profile's tables and export, the mutexes --what-if
    /// top:N and --recommend rank, and the names --lock and --what-if
    /// look up. For a script that starts a server and its client
    /// (`--process mariadbd`). The run's times stay the whole program's.
    #[arg(long, value_name = "NAME")]
    pub process: Option<String>,

    /// Where the program's stdout and stderr go (and the output of
    /// --prepare, --conclude and --cleanup): `inherit` (contend's own,
    /// every execution's, the default), `null` (nowhere, as hyperfine's
    /// default; --metric still reads them) or FILE (every execution's, in
    /// order, written when the run ends, as an export is: whole, never
    /// through another user's link; `./null` for a file of that name). Its
    /// stdin is always contend's.
    #[arg(long = "output", value_parser = ProgramOutput::parse, default_value = "inherit")]
    #[arg(value_name = "inherit|null|FILE", help_heading = crate::output::args::PROGRAM)]
    pub program_output: ProgramOutput,

    /// Executions of the program under glibc's mutex, unprofiled, before
    /// the first measured one, kept out of every result: they warm the
    /// page cache and whatever else a first execution pays for (as
    /// hyperfine's --warmup). Each gets --prepare and --conclude.
    #[arg(long, short = 'w', default_value_t = 0, value_name = "N")]
    #[arg(help_heading = crate::output::args::PROGRAM)]
    pub warmup: u32,

    /// A shell command (sh -c) run before every execution, untimed: a
    /// server's data directory reset, a cache dropped. It sees the
    /// execution's lock in $CONTEND_LOCK. A failure ends the run; what it
    /// leaves running is ended when it exits, as the program's is.
    #[arg(long, short = 'p', value_name = "CMD")]
    #[arg(help_heading = crate::output::args::PROGRAM)]
    pub prepare: Option<String>,

    /// A shell command run after every execution, untimed (hyperfine's
    /// --conclude). It sees $CONTEND_LOCK; a failure ends the run.
    #[arg(long, value_name = "CMD")]
    #[arg(help_heading = crate::output::args::PROGRAM)]
    pub conclude: Option<String>,

    /// A shell command run once after the last execution, also when the
    /// run failed or was interrupted (hyperfine's --cleanup). A failure is
    /// a warning: the results stand.
    #[arg(long, short = 'c', value_name = "CMD")]
    #[arg(help_heading = crate::output::args::PROGRAM)]
    pub cleanup: Option<String>,

    /// Run the program once per value of NAME, from MIN to MAX (integers,
    /// by --parameter-step-size): `{NAME}` in its arguments, --prepare
    /// and --conclude is replaced by the value (as hyperfine's flag).
    /// Every value's points run in the same interleaved rounds, and each
    /// lock's ratio is to pthread at the same value. Not with --recommend
    /// or --what-if, which advise on one program.
    #[arg(long, short = 'P', num_args = 3, value_names = ["NAME", "MIN", "MAX"])]
    #[arg(conflicts_with_all = ["recommend", "what_if", "parameter_list"])]
    #[arg(help_heading = crate::output::args::PROGRAM)]
    pub parameter_scan: Option<Vec<String>>,

    /// The step of --parameter-scan [default: 1].
    #[arg(long, short = 'D', value_name = "STEP", requires = "parameter_scan")]
    #[arg(help_heading = crate::output::args::PROGRAM)]
    pub parameter_step_size: Option<String>,

    /// As --parameter-scan, over a list of values, comma-separated
    /// (`--parameter-list threads 1,2,8`; any text but a comma).
    #[arg(long, short = 'L', num_args = 2, value_names = ["NAME", "VALUES"])]
    #[arg(conflicts_with_all = ["recommend", "what_if"])]
    #[arg(help_heading = crate::output::args::PROGRAM)]
    pub parameter_list: Option<Vec<String>>,

    /// Take the program's own rate from its output instead of its wall
    /// time: the first capture group (or the whole match) of the last line
    /// of stdout, else stderr, that matches REGEX, read as a number.
    #[arg(long, value_name = "REGEX")]
    #[arg(help_heading = crate::output::args::PROGRAM)]
    pub metric: Option<String>,

    /// When contend is interrupted (Ctrl-C, SIGTERM, SIGHUP, SIGQUIT), the
    /// program and every process it started get SIGTERM, then SIGKILL
    /// after this grace; a second interrupt kills them at once. Processes
    /// the program leaves running when it exits get the same.
    #[arg(long, value_parser = crate::model::value::parse_duration, default_value = "2s", value_name = "DURATION")]
    #[arg(help_heading = crate::output::args::PROGRAM)]
    pub grace: std::time::Duration,

    /// Exit statuses that count as success, besides 0: with no value,
    /// every one (as hyperfine's flag); or a list (`--ignore-failure=1,2`:
    /// a grep that found nothing). An execution that exits otherwise, dies
    /// of a signal, or in which the interposer said it could not go on, has
    /// failed: under glibc's mutex that ends the run (the program fails
    /// without contend's locks); under another lock, that lock is reported
    /// as failed, with no ratio, and contend exits 1.
    #[arg(long, short = 'i', num_args = 0..=1, require_equals = true,
          default_missing_value = "all-non-zero", value_name = "CODES")]
    #[arg(help_heading = crate::output::args::PROGRAM)]
    pub ignore_failure: Option<String>,

    /// An execution under a swapped lock is ended once it runs FACTOR times
    /// as long as glibc's slowest execution so far (and at least 2 s), and
    /// its lock reported as failed: a queue lock under oversubscription can
    /// make a program hundreds of times slower. 0: no limit. Glibc's mutex
    /// runs first in the first round, so the limit holds from the start.
    #[arg(long, default_value_t = 10.0, value_name = "FACTOR")]
    #[arg(help_heading = crate::output::args::PROGRAM)]
    pub max_slowdown: f64,

    /// The program's address randomization (ASLR). `auto` turns it off,
    /// as `setarch -R` does, only where mutexes are chosen by address
    /// (`--lock LOCK@MUTEX`, --recommend, --what-if), so that an address
    /// the profile printed names the same mutex in the next execution;
    /// `on` never turns it off (a chosen mutex may then move: contend says
    /// when none was taken); `off` always. A server run without it is
    /// easier to attack: the choice is the user's, and the table says
    /// when it was off.
    #[arg(long, value_enum, default_value_t = Aslr::Auto, value_name = "WHEN")]
    #[arg(help_heading = crate::output::args::PROGRAM)]
    pub aslr: Aslr,

    /// The interposer library [default: $CONTEND_INTERPOSER, else the one
    /// contend carries inside itself, written on first use to this user's
    /// private directory, $XDG_RUNTIME_DIR/contend or /tmp/contend-UID].
    #[arg(long, value_name = "FILE.so")]
    #[arg(help_heading = crate::output::args::PROGRAM)]
    pub interposer: Option<PathBuf>,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub repeat: RepeatArgs,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub output: OutputArgs,

    /// The program and its arguments, after `--` (passed as they are,
    /// UTF-8 or not). Its stdin, stdout and stderr are its own; contend's
    /// table goes to stderr, like time(1) and perf stat.
    #[arg(required = true, last = true, num_args = 1.., value_name = "PROGRAM",
          value_parser = clap::value_parser!(OsString))]
    pub program: Vec<OsString>,
}

/// A percentage: `5%` or `5`, in (0, 100).
fn parse_pct(v: &str) -> Result<f64, String> {
    let n: f64 = v.trim().trim_end_matches('%').parse().map_err(|_| format!("{v}: not a percentage (5%)"))?;
    if !(n > 0.0 && n < 100.0) {
        return Err(format!("{v}: a percentage above 0 and below 100"));
    }
    Ok(n)
}
