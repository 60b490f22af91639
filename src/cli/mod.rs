//! The command line, as clap sees it: the commands, and the flags of the
//! commands that are not a family's (compare, list). Each family's flags
//! live in its `args.rs`; parsing only, validation spanning several flags
//! lives in each `spec`. Nothing imports from here but `main.rs`: the
//! families take their shared flags from where they are defined
//! (`output::args::OutputArgs`, `engine::repeat_args::RepeatArgs`), so
//! the command tree depends on the families and never the other way.

pub mod manual;
pub mod parse;
pub mod tree;

use crate::family::alloc::args::AllocArgs;
use crate::family::lock::args::LockArgs;
use crate::family::wakeup::args::WakeupArgs;
use crate::tune::args::TuneArgs;

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

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
    #[command(after_help = crate::family::lock::args::LOCK_EXAMPLES)]
    Lock(Box<LockArgs>),
    /// Pairs of threads ping-pong through a primitive (semaphores, futex,
    /// eventfd, pipe, condvar, mutex hand-off): wake-up latency per pair,
    /// with percentiles, histograms, placement, real-time priority and
    /// ftrace tagging of outliers.
    #[command(after_help = crate::family::wakeup::args::EXAMPLES)]
    Wakeup(Box<WakeupArgs>),
    /// Threads doing malloc/free, and producer/consumer pairs freeing each
    /// other's blocks, under glibc, tcmalloc, jemalloc and mimalloc.
    #[command(after_help = crate::family::alloc::args::ALLOC_EXAMPLES)]
    Alloc(Box<AllocArgs>),
    /// Run an unmodified program with contend's interposer preloaded:
    /// profile its mutexes (--profile: acquisitions, contended ones, wait
    /// and hold, by call site) and run it with other locks in place of
    /// glibc's mutex (--lock pthread,adaptive,mcs), interleaved over
    /// --runs, with each lock's wall time and its ratio to glibc's.
    #[command(after_help = crate::family::program::args::PROGRAM_EXAMPLES)]
    Run(Box<crate::family::program::ProgramArgs>),
    /// Follow a process that is already running, with no restart and no
    /// LD_PRELOAD: every futex word its threads sleep on (pthread mutexes,
    /// condition variables, InnoDB's, Rust's, Go's and static programs'
    /// own futex locks), its waits, time blocked and who woke them, from
    /// the kernel's futex syscalls, until --duration, Ctrl-C or its exit.
    /// Needs root or CAP_PERFMON (or kernel.perf_event_paranoid=-1) and
    /// the right to ptrace it; with CAP_BPF too, the futex calls are
    /// picked out in the kernel, which costs the process less.
    Attach(crate::family::program::attach::AttachArgs),
    /// Draw a figure from one or more exports, as SVG or PNG: lock
    /// (throughput with 95% intervals, fairness and the wait to acquire,
    /// against the swept axis; or with --percentiles each point's wait
    /// against percentile), wakeup (round-trip latency against
    /// percentile) or run (each lock's wall time, the top mutexes' waits).
    Plot(crate::exports::plot::PlotArgs),
    /// Write one self-contained HTML page from one or more exports: a
    /// summary of each export's answer first, then each export's command,
    /// machine, figure, tables and warnings (folded, by kind).
    Report(crate::exports::html::ReportArgs),
    /// Compare JSON exports point by point: two (a Welch t-test over their
    /// runs, which cannot tell a change from the invocations' own
    /// difference), or several per side, one per invocation (a t-test over
    /// the invocations); exits 1 on a regression beyond --threshold, for
    /// CI. Or the points of one export against a baseline point, paired
    /// by round (--baseline).
    Compare(crate::exports::compare::args::CompareArgs),
    /// Find the spin budget that maximizes throughput for a lock, thread
    /// count and hold time: a log-spaced search, then refinement around
    /// the best, each point with its confidence interval.
    #[command(after_help = TUNE_EXAMPLES)]
    Tune(Box<TuneArgs>),
    /// List what contend can measure.
    List(crate::list::ListArgs),
    /// Internal: a pthread program for the tests of `contend run` (checks:
    /// exclusion, kinds, condvar, fork).
    #[command(name = "__interpose-check", hide = true)]
    InterposeCheck {
        /// Which check.
        what: String,
        /// Threads.
        #[arg(long, default_value_t = 8)]
        threads: u32,
    },
    /// Internal: the process between `contend run` and the program it
    /// runs, which ends everything the program started.
    #[command(name = "__keeper", hide = true)]
    Keeper(crate::family::program::keeper::KeeperArgs),
    /// Internal: the allocator child `contend alloc` starts.
    #[command(name = "__alloc-child", hide = true)]
    AllocChild {
        /// The child's spec, as JSON.
        spec: String,
    },
    /// Internal: a lock point `contend lock` runs in a child (for
    /// --glibc-spin, which glibc reads at start-up).
    #[command(name = "__lock-child", hide = true)]
    LockChild {
        /// The point, as JSON.
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
    /// Print a manual page as roff (`contend man lock | man -l -`), or write
    /// every page to a directory (`contend man --dir /usr/local/share/man/man1`);
    /// generated from these definitions.
    Man(ManArgs),
}

const TUNE_EXAMPLES: &str = "\
Examples:
  contend tune --lock futex --threads 4 --hold 1us
  contend tune --lock adaptive --threads 2 --hold 2.5us --max-time 60s";

/// `contend man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// The command whose page to print (contend-COMMAND(1)) [default: the
    /// top page, contend(1)].
    #[arg(value_name = "COMMAND", conflicts_with = "dir")]
    pub command: Option<String>,
    /// Write every page (contend.1, contend-lock.1, ...) into this
    /// directory instead of printing one.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Whether a command measures: it takes `--export-json` (lock, wakeup,
/// alloc, run, tune). The manual's exit statuses and the help's grouping
/// rule follow from it, so a new measuring command needs no list kept.
pub fn measures(cmd: &clap::Command) -> bool {
    cmd.get_arguments().any(|a| a.get_long() == Some("export-json"))
}

#[cfg(test)]
mod tests {
    use super::{measures, Cli};
    use clap::CommandFactory;

    /// The commands a user sees (not the internal ones).
    fn public() -> Vec<clap::Command> {
        Cli::command().get_subcommands().filter(|c| !c.is_hide_set()).cloned().collect()
    }

    /// The arguments a user sees in one command.
    fn shown(c: &clap::Command) -> impl Iterator<Item = &clap::Arg> {
        c.get_arguments().filter(|a| !a.is_hide_set() && a.get_id() != "help" && a.get_id() != "version")
    }

    #[test]
    fn every_value_has_a_named_placeholder() {
        for c in public() {
            for a in shown(&c).filter(|a| a.get_action().takes_values() && a.get_long().is_some()) {
                assert!(
                    a.get_value_names().is_some() || !a.get_possible_values().is_empty(),
                    "contend {} --{}: no value name (clap would print <{}>)",
                    c.get_name(),
                    a.get_long().unwrap(),
                    a.get_id().as_str().to_uppercase()
                );
            }
        }
    }

    #[test]
    fn a_flag_means_one_kind_of_thing_everywhere() {
        // A long name that takes a value in one command takes one in all
        // (`--procs` was a list in lock and a switch in wakeup).
        let mut seen: std::collections::HashMap<String, (bool, String)> = Default::default();
        for c in public() {
            for a in shown(&c) {
                let Some(long) = a.get_long() else { continue };
                let takes = a.get_action().takes_values();
                let (was, first) = seen.entry(long.to_string()).or_insert((takes, c.get_name().to_string()));
                assert_eq!(
                    *was,
                    takes,
                    "--{long}: a value in one of {first} and {} but not the other",
                    c.get_name()
                );
            }
        }
    }

    #[test]
    fn run_lock_help_names_every_swappable_lock_and_no_other() {
        let run = Cli::command().find_subcommand("run").cloned().unwrap();
        let lock = run.get_arguments().find(|a| a.get_long() == Some("lock")).unwrap();
        let help = lock.get_long_help().or(lock.get_help()).unwrap().to_string();
        let words: Vec<&str> = help
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
            .filter(|w| !w.is_empty())
            .collect();
        for s in locks::in_mutex::Swap::all() {
            assert!(words.contains(&s.name()), "contend run --lock's help leaves out {}", s.name());
        }
        for name in ["noop", "clh", "seed", "futex"] {
            assert!(
                !words.contains(&name),
                "contend run --lock's help offers {name}, which cannot be swapped in"
            );
        }
    }

    #[test]
    fn measuring_commands_group_their_options_and_examples_never_wrap() {
        for c in public() {
            let name = c.get_name().to_string();
            if measures(&c) {
                for a in shown(&c) {
                    assert!(
                        a.get_help_heading().is_some(),
                        "contend {name} --{:?}: no heading",
                        a.get_long()
                    );
                }
            }
            // clap wraps help at 100 columns; an example line longer than
            // that would be broken mid-command.
            for line in c.get_after_help().map(|h| h.to_string()).unwrap_or_default().lines() {
                assert!(
                    line.chars().count() <= 100,
                    "contend {name}: {} columns: {line}",
                    line.chars().count()
                );
            }
        }
    }
}
