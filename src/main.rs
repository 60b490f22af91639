//! contend's entry point, read top to bottom: take over the ending signals,
//! parse, validate, run the sweep, report. User mistakes exit 2, failures
//! during a run exit 1, and a run ended by SIGINT, SIGTERM, SIGHUP or
//! SIGQUIT reports what it measured and exits 128 + the signal.

#![forbid(unsafe_code)]

use contend::cli::Command;
use contend::engine::Interrupted;
use contend::experiment;
use contend::family::alloc::Alloc;
use contend::family::lock::Lock;
use contend::family::wakeup::Wakeup;
use contend::model::SpecError;
use contend::output::sink::print;
use contend::session::{cleanup, signals};
use contend::tune::Tune;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = contend::cli::parse::parse();
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
        Command::Compare(args) => contend::exports::compare::command::run(&args),
        Command::Plot(args) => contend::exports::plot::run(&args).map(|()| ExitCode::SUCCESS),
        Command::Report(args) => contend::exports::html::run(&args).map(|()| ExitCode::SUCCESS),
        Command::Tune(args) => experiment::run::<Tune>(&args),
        Command::Alloc(args) => experiment::run::<Alloc>(&args),
        Command::Run(args) => experiment::run::<contend::family::program::Program>(&args),
        Command::Attach(args) => experiment::run::<contend::family::program::attach::Attach>(&args),
        Command::AllocChild { spec } => contend::family::alloc::workload::child_command(&spec),
        Command::LockChild { spec } => contend::family::lock::child::child_command(&spec),
        Command::Keeper(_) => unreachable!("the keeper returned above"),
        Command::InterposeCheck { what, threads } => {
            Ok(contend::family::lock::interpose_check::command(&what, threads))
        }
        Command::List(args) => contend::list::run(&args),
        Command::Cleanup => print(&(cleanup::run().join("\n") + "\n")).map(|()| ExitCode::SUCCESS),
        Command::Completions { shell } => contend::cli::tree::completions(shell),
        Command::Man(args) => contend::cli::manual::run(&args),
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
