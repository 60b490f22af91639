//! contend's entry point, read top to bottom: take over the ending signals,
//! parse, validate, run the sweep, report. User mistakes exit 2, failures
//! during a run exit 1, and a run ended by SIGINT, SIGTERM, SIGHUP or
//! SIGQUIT reports what it measured and exits 128 + the signal.

#![forbid(unsafe_code)]

use anyhow::{Context, Result};
use clap::CommandFactory;
use contend::cli::{Cli, Command, CompareArgs, ListWhat};
use contend::engine::Interrupted;
use contend::experiment;
use contend::family::alloc::workload::{run_child, ChildSpec};
use contend::family::alloc::Alloc;
use contend::family::lock::Lock;
use contend::family::wakeup::Wakeup;
use contend::model::SpecError;
use contend::output::sink::print;
use contend::session::{cleanup, signals};
use contend::tune::Tune;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = parse();
    if let Command::AllocChild { .. } | Command::LockChild { .. } = cli.command {
        // A child (allocator, lock point) inherited the parent's blocked
        // mask across exec; it should die of Ctrl-C, and the parent
        // reports that.
        let _ = signals::restore_default();
    } else if let Command::Keeper(args) = &cli.command {
        // It keeps contend's blocked mask: the terminal's Ctrl-C is
        // contend's to act on, and reaches the keeper as a byte.
        return contend::family::program::keeper::run(args);
    } else if let Err(e) = signals::install() {
        // Before any thread exists, so every thread and worker inherits it.
        eprintln!("warning: cannot take over SIGINT/SIGTERM/SIGHUP/SIGQUIT ({e}); Ctrl-C will not clean up");
    }
    quiet_panics_during_emergency_exit();
    let outcome = match cli.command {
        Command::Lock(args) => experiment::run::<Lock>(&args),
        Command::Wakeup(args) => experiment::run::<Wakeup>(&args),
        Command::Compare(args) => compare(&args),
        Command::Plot(args) => contend::exports::plot::run(&args).map(|()| ExitCode::SUCCESS),
        Command::Report(args) => contend::exports::html::run(&args).map(|()| ExitCode::SUCCESS),
        Command::Tune(args) => experiment::run::<Tune>(&args),
        Command::Alloc(args) => experiment::run::<Alloc>(&args),
        Command::Run(args) => experiment::run::<contend::family::program::Program>(&args),
        Command::AllocChild { spec } => alloc_child(&spec),
        Command::LockChild { spec } => lock_child(&spec),
        Command::Keeper(_) => unreachable!("the keeper returned above"),
        Command::InterposeCheck { what, threads } => {
            match contend::family::lock::interpose_check::run_check(&what, threads) {
                Ok(()) => Ok(ExitCode::SUCCESS),
                Err(e) => {
                    eprintln!("__interpose-check {what}: {e}");
                    Ok(ExitCode::FAILURE)
                }
            }
        }
        Command::List(args) => match args.what {
            ListWhat::Locks => print(&contend::list::locks()).map(|()| ExitCode::SUCCESS),
            ListWhat::Allocators => print(&contend::list::allocators()).map(|()| ExitCode::SUCCESS),
            ListWhat::Primitives => print(&contend::list::primitives()).map(|()| ExitCode::SUCCESS),
        },
        Command::Cleanup => print(&(cleanup::run().join("\n") + "\n")).map(|()| ExitCode::SUCCESS),
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut completing_names(public_command()), "contend", &mut out);
            print(&String::from_utf8_lossy(&out)).map(|()| ExitCode::SUCCESS)
        }
        Command::Man(args) => man(&args),
    };
    // An error may quote what a program named (its path, a function):
    // shown escaped.
    let say = |text: String| eprintln!("{}", contend::session::visible::text(&text));
    match outcome {
        Ok(code) => code,
        Err(e) if e.is::<Interrupted>() => {
            let Some(Interrupted(sig)) = e.downcast_ref::<Interrupted>() else { unreachable!() };
            say(format!("{e:#}"));
            ExitCode::from(signals::exit_status(*sig))
        }
        Err(e) if e.is::<SpecError>() => {
            say(format!("error: {e}"));
            ExitCode::from(2)
        }
        Err(e) => {
            say(format!("error: {e:#}"));
            ExitCode::FAILURE
        }
    }
}

fn compare(args: &CompareArgs) -> Result<ExitCode> {
    let read = |path: &std::path::Path| -> Result<serde_json::Value> {
        Ok(contend::exports::reader::read_export(path)?)
    };
    let (old, new) = args.sides().map_err(SpecError)?;
    if let Some(text) = &args.baseline {
        let baseline = contend::exports::compare::paired::Baseline::parse(text).map_err(SpecError)?;
        let report = contend::exports::compare::paired::compare_paired(&read(&old[0])?, &baseline)
            .map_err(SpecError)?;
        if args.json {
            print(&(serde_json::to_string_pretty(&report)? + "\n"))?;
        } else {
            print(&contend::exports::compare::table::render_paired(&report))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let all = |paths: &[std::path::PathBuf]| paths.iter().map(|p| read(p)).collect::<Result<Vec<_>>>();
    let report =
        contend::exports::compare::compare(&all(old)?, &all(new)?, args.threshold).map_err(SpecError)?;
    if args.json {
        print(&(serde_json::to_string_pretty(&report)? + "\n"))?;
    } else {
        print(&contend::exports::compare::table::render(&report))?;
    }
    Ok(if report.regressed() { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// The allocator child: runs the workload, prints its result as JSON.
fn alloc_child(spec: &str) -> Result<ExitCode> {
    let spec: ChildSpec = serde_json::from_str(spec).context("the child's spec")?;
    let result = run_child(&spec).map_err(anyhow::Error::msg)?;
    print(&(serde_json::to_string(&result)? + "\n"))?;
    Ok(ExitCode::SUCCESS)
}

/// The lock-point child: runs the point, prints its sample as JSON.
fn lock_child(spec: &str) -> Result<ExitCode> {
    let sample = contend::family::lock::child::child_main(spec)?;
    print(&(serde_json::to_string(&sample)? + "\n"))?;
    Ok(ExitCode::SUCCESS)
}

/// The command line, parsed. A number, a duration or a percentage may
/// start with a minus sign: `--top -1` or `--precision -5%` then reaches
/// the flag's own parser, whose error names the flag ("invalid value '-1'
/// for '--top <N>'"), instead of clap's "unexpected argument '-1'", which
/// names none. Names and paths do not, so `--export-json --runs` stays an
/// error rather than a file called `--runs`.
fn parse() -> Cli {
    use clap::FromArgMatches;
    fn numeric(a: &clap::Arg) -> bool {
        // A switch takes no value (its derived value name, NO_PROGRESS,
        // would pass the test below; clap's debug build then panics).
        if !a.get_action().takes_values() {
            return false;
        }
        let names = a.get_value_names().unwrap_or_default();
        names.iter().any(|n| ["N", "DURATION", "PERCENT", "WORK"].iter().any(|k| n.as_str().starts_with(k)))
    }
    fn negatives(c: clap::Command) -> clap::Command {
        // mut_args keeps the arguments' order (mut_arg moves each to the
        // end, which reorders --help's headings).
        let c = c.allow_negative_numbers(true).mut_subcommands(negatives);
        c.mut_args(|a| if numeric(&a) { a.allow_hyphen_values(true) } else { a })
    }
    let matches = negatives(Cli::command()).get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// The command tree without hidden commands (the allocator child), which
/// clap_complete would otherwise offer to complete.
fn public_command() -> clap::Command {
    let full = Cli::command();
    let public = full.get_subcommands().filter(|s| !s.is_hide_set()).cloned();
    clap::Command::new("contend")
        .version(env!("CARGO_PKG_VERSION"))
        .about(full.get_about().cloned().unwrap_or_default())
        .propagate_version(true)
        .subcommand_required(true)
        .subcommands(public)
}

/// The command tree for completion scripts: the flags that take names of
/// locks, primitives or allocators (comma lists, parsed by contend) offer
/// those names, so `--lock <TAB>` completes `futex`, not file names. One
/// name per completion: the shells complete the first item of a list.
fn completing_names(cmd: clap::Command) -> clap::Command {
    use clap::builder::PossibleValuesParser;
    let locks: Vec<&str> = contend::family::lock::registry::offered().collect();
    let swaps: Vec<&str> = locks::in_mutex::Swap::all().map(|s| s.name()).collect();
    let primitives: Vec<&str> =
        contend::family::wakeup::registry::PRIMITIVES.iter().map(|p| p.name).collect();
    let names = |arg: &'static str, names: Vec<&'static str>| {
        move |c: clap::Command| c.mut_arg(arg, |a| a.value_parser(PossibleValuesParser::new(names)))
    };
    cmd.mut_subcommand("lock", names("lock", locks.clone()))
        .mut_subcommand("tune", names("lock", locks))
        .mut_subcommand("run", names("lock", swaps))
        .mut_subcommand("wakeup", names("primitive", primitives))
        .mut_subcommand("alloc", names("allocator", contend::family::alloc::registry::NAMES.to_vec()))
}

/// `contend man`: one page printed, or every page written to --dir.
fn man(args: &contend::cli::ManArgs) -> Result<ExitCode> {
    let pages = contend::cli::manual::pages(&public_command())?;
    if let Some(dir) = &args.dir {
        // Every page checked before any is written; each through the
        // exports' sink (another user's link or FIFO is refused).
        let sinks = pages
            .iter()
            .map(|(name, _)| contend::output::sink::Sink::open("--dir", &dir.join(format!("{name}.1"))))
            .collect::<Result<Vec<_>, _>>()?;
        for (sink, (_, roff)) in sinks.into_iter().zip(&pages) {
            sink.write_bytes(roff)?;
        }
        println!("{} pages written to {}", pages.len(), dir.display());
        return Ok(ExitCode::SUCCESS);
    }
    let want = args.command.as_deref().map_or("contend".to_string(), |c| format!("contend-{c}"));
    match pages.iter().find(|(name, _)| *name == want) {
        Some((_, roff)) => print(&String::from_utf8_lossy(roff)).map(|()| ExitCode::SUCCESS),
        None => {
            let names: Vec<&str> = pages.iter().skip(1).map(|(n, _)| &n["contend-".len()..]).collect();
            eprintln!(
                "error: no manual page for `{}`{}; the commands: {}",
                args.command.as_deref().unwrap_or_default(),
                contend::model::value::suggest::did_you_mean(
                    args.command.as_deref().unwrap_or_default(),
                    names.iter().copied()
                ),
                names.join(", ")
            );
            Ok(ExitCode::from(2))
        }
    }
}

/// During the emergency exit, workers still in a lock panic when their
/// resources are removed under them: expected, and not news.
fn quiet_panics_during_emergency_exit() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !contend::session::emergency::exiting() {
            default(info);
        }
    }));
}
