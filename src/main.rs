//! contend's entry point, read top to bottom: take over the ending signals,
//! parse, validate, run the sweep, report. User mistakes exit 2, failures
//! during a run exit 1, and a run ended by SIGINT, SIGTERM, SIGHUP or
//! SIGQUIT reports what it measured and exits 128 + the signal.

#![forbid(unsafe_code)]

use anyhow::{Context, Result};
use clap::{CommandFactory, Parser};
use contend::cli::{AllocArgs, Cli, Command, CompareArgs, Format, ListWhat, LockArgs, TuneArgs, WakeupArgs};
use contend::measure::env::Environment;
use contend::report;
use contend::report::json::{AllocExport, Header, LockExport, WakeupExport};
use contend::report::sink::{emit, ExportPaths, Exports};
use contend::runner::alloc_sweep::run_alloc_sweep;
use contend::runner::sweep::run_lock_sweep;
use contend::runner::tune::run_tune;
use contend::runner::wakeup_sweep::run_wakeup_sweep;
use contend::runner::{cleanup, signals, Interrupted};
use contend::spec::alloc::AllocSpec;
use contend::spec::tune::TuneSpec;
use contend::spec::wakeup::WakeupSpec;
use contend::spec::{LockSpec, SpecError};
use contend::workloads::alloc::{run_child, ChildSpec};
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::AllocChild { .. } = cli.command {
        // The allocator child inherited the parent's blocked mask across
        // exec; it should die of Ctrl-C, and the parent reports that.
        let _ = signals::restore_default();
    } else if let Err(e) = signals::install() {
        // Before any thread exists, so every thread and worker inherits it.
        eprintln!("warning: cannot take over SIGINT/SIGTERM/SIGHUP/SIGQUIT ({e}); Ctrl-C will not clean up");
    }
    quiet_panics_during_emergency_exit();
    let outcome = match cli.command {
        Command::Lock(args) => lock(&args),
        Command::Wakeup(args) => wakeup(&args),
        Command::Compare(args) => compare(&args),
        Command::Tune(args) => tune(&args),
        Command::Alloc(args) => alloc(&args),
        Command::AllocChild { spec } => alloc_child(&spec),
        Command::List(args) => match args.what {
            ListWhat::Locks => print(&report::list::locks()).map(|()| ExitCode::SUCCESS),
            ListWhat::Allocators => print(&report::list::allocators()).map(|()| ExitCode::SUCCESS),
            ListWhat::Primitives => print(&report::list::primitives()).map(|()| ExitCode::SUCCESS),
        },
        Command::Cleanup => print(&(cleanup::run().join("\n") + "\n")).map(|()| ExitCode::SUCCESS),
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut public_command(), "contend", &mut out);
            print(&String::from_utf8_lossy(&out)).map(|()| ExitCode::SUCCESS)
        }
        Command::Man => man().map(|()| ExitCode::SUCCESS),
    };
    match outcome {
        Ok(code) => code,
        Err(e) if e.is::<Interrupted>() => {
            let Some(Interrupted(sig)) = e.downcast_ref::<Interrupted>() else {
                unreachable!()
            };
            eprintln!("{e:#}");
            ExitCode::from(signals::exit_status(*sig))
        }
        Err(e) if e.is::<SpecError>() => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn lock(args: &LockArgs) -> Result<ExitCode> {
    let spec = LockSpec::from_args(args)?;
    let exports = Exports::open(ExportPaths {
        json: spec.export_json.as_deref(),
        csv: spec.export_csv.as_deref(),
        markdown: spec.export_markdown.as_deref(),
        gnuplot: spec.export_gnuplot.as_deref(),
        plot: spec.plot.as_deref(),
    })?;
    let environment = Environment::capture();
    let outcome = run_lock_sweep(&spec)?;
    for w in &outcome.warnings {
        eprintln!("warning: {w}");
    }
    if !exports.stdout_taken() {
        match spec.format {
            Format::Table => print(&report::table::lock::render(&outcome.results, &environment))?,
            Format::Seed => print(&report::seed::render(&outcome.results))?,
            Format::Gnuplot => print(&report::gnuplot::lock::render(&outcome.results))?,
        }
    }
    let results = &outcome.results;
    emit(exports.csv, || Ok(report::csv::lock::render(results)))?;
    emit(exports.markdown, || {
        Ok(report::markdown::lock(results, &environment))
    })?;
    emit(exports.gnuplot, || Ok(report::gnuplot::lock::render(results)))?;
    emit(exports.plot, || {
        report::plot::lock::render(results, &plot_title(&environment)).map_err(anyhow::Error::msg)
    })?;
    emit(exports.json, || {
        json_line(&LockExport {
            header: Header::new("lock", &environment, &outcome.warnings),
            spec: &spec,
            points: results,
        })
    })?;
    Ok(exit_code(outcome.interrupted))
}

fn wakeup(args: &WakeupArgs) -> Result<ExitCode> {
    let spec = WakeupSpec::from_args(args)?;
    let exports = Exports::open(ExportPaths {
        json: spec.export_json.as_deref(),
        csv: spec.export_csv.as_deref(),
        markdown: spec.export_markdown.as_deref(),
        gnuplot: spec.export_gnuplot.as_deref(),
        plot: spec.plot.as_deref(),
    })?;
    let environment = Environment::capture();
    let outcome = run_wakeup_sweep(&spec)?;
    for w in &outcome.warnings {
        eprintln!("warning: {w}");
    }
    let (results, trace) = (&outcome.results, outcome.trace.as_ref());
    if !exports.stdout_taken() {
        print(&report::table::wakeup::render(results, &outcome.clock, trace))?;
        if let Some(bucket) = spec.histogram_bucket_ns {
            print(&report::histogram::render(results, bucket))?;
        }
    }
    emit(exports.csv, || Ok(report::csv::wakeup::render(results)))?;
    emit(exports.markdown, || {
        Ok(report::markdown::wakeup(results, &outcome.clock, trace))
    })?;
    emit(exports.gnuplot, || Ok(report::gnuplot::wakeup::render(results)))?;
    emit(exports.plot, || {
        report::plot::wakeup::render(results, &plot_title(&environment)).map_err(anyhow::Error::msg)
    })?;
    emit(exports.json, || {
        json_line(&WakeupExport {
            header: Header::new("wakeup", &environment, &outcome.warnings),
            spec: &spec,
            clock: &outcome.clock,
            trace,
            points: results,
        })
    })?;
    Ok(exit_code(outcome.interrupted))
}

fn compare(args: &CompareArgs) -> Result<ExitCode> {
    let read = |path: &std::path::Path| -> Result<serde_json::Value> {
        let text = signals::interruptible(|| std::fs::read_to_string(path))
            .map_err(|e| SpecError(format!("reading {}: {e}", path.display())))?;
        serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!(SpecError(format!("{}: not JSON: {e}", path.display()))))
    };
    if let Some(text) = &args.baseline {
        let baseline = contend::compare::paired::Baseline::parse(text).map_err(SpecError)?;
        let report =
            contend::compare::paired::compare_paired(&read(&args.old)?, &baseline).map_err(SpecError)?;
        if args.json {
            print(&(serde_json::to_string_pretty(&report)? + "\n"))?;
        } else {
            print(&report::table::compare::render_paired(&report))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let new = args.new.as_deref().expect("clap requires NEW without --baseline");
    let (old, new) = (read(&args.old)?, read(new)?);
    let report = contend::compare::compare(&old, &new, args.threshold).map_err(SpecError)?;
    if args.json {
        print(&(serde_json::to_string_pretty(&report)? + "\n"))?;
    } else {
        print(&report::table::compare::render(&report, args.threshold))?;
    }
    Ok(if report.regressed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn tune(args: &TuneArgs) -> Result<ExitCode> {
    let spec = TuneSpec::from_args(args)?;
    let exports = Exports::open(ExportPaths {
        json: spec.export_json.as_deref(),
        ..ExportPaths::default()
    })?;
    let environment = Environment::capture();
    let started = std::time::Instant::now();
    let outcome = run_tune(&spec)?;
    for w in &outcome.warnings {
        eprintln!("warning: {w}");
    }
    if !exports.stdout_taken() {
        print(&report::table::lock::render(&outcome.results, &environment))?;
        print(&report::table::tune::summary(&outcome, started.elapsed()))?;
    }
    emit(exports.json, || {
        json_line(&report::json::TuneExport {
            header: Header::new("lock", &environment, &outcome.warnings),
            spec: &spec,
            best_spin: outcome.best.and_then(|b| outcome.results[b].point.spin),
            points: &outcome.results,
        })
    })?;
    Ok(exit_code(outcome.interrupted))
}

fn alloc(args: &AllocArgs) -> Result<ExitCode> {
    let spec = AllocSpec::from_args(args)?;
    let exports = Exports::open(ExportPaths {
        json: spec.export_json.as_deref(),
        csv: spec.export_csv.as_deref(),
        markdown: spec.export_markdown.as_deref(),
        gnuplot: spec.export_gnuplot.as_deref(),
        plot: None,
    })?;
    let environment = Environment::capture();
    let outcome = run_alloc_sweep(&spec)?;
    for w in &outcome.warnings {
        eprintln!("warning: {w}");
    }
    let results = &outcome.results;
    if !exports.stdout_taken() {
        print(&report::table::alloc::table(results))?;
    }
    emit(exports.csv, || Ok(report::csv::alloc::render(results)))?;
    emit(exports.markdown, || Ok(report::markdown::alloc(results)))?;
    emit(exports.gnuplot, || Ok(report::gnuplot::alloc::render(results)))?;
    emit(exports.json, || {
        json_line(&AllocExport {
            header: Header::new("alloc", &environment, &outcome.warnings),
            spec: &spec,
            results,
        })
    })?;
    Ok(exit_code(outcome.interrupted))
}

/// The allocator child: runs the workload, prints its result as JSON.
fn alloc_child(spec: &str) -> Result<ExitCode> {
    let spec: ChildSpec = serde_json::from_str(spec).context("the child's spec")?;
    let result = run_child(&spec).map_err(anyhow::Error::msg)?;
    print(&(serde_json::to_string(&result)? + "\n"))?;
    Ok(ExitCode::SUCCESS)
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

/// contend(1) and a page per command (contend-lock(1), ...) as one roff
/// stream: the top page, then each subcommand's, so `man -l -` shows all.
fn man() -> Result<()> {
    let cmd = public_command();
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut out)?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("contend-{}", sub.get_name());
        clap_mangen::Man::new(sub.clone()).title(name).render(&mut out)?;
    }
    print(&String::from_utf8_lossy(&out))
}

/// During the emergency exit, workers still in a lock panic when their
/// resources are removed under them: expected, and not news.
fn quiet_panics_during_emergency_exit() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !contend::runner::emergency::exiting() {
            default(info);
        }
    }));
}

/// A plot's title: the command that made it and the machine it ran on.
fn plot_title(env: &Environment) -> String {
    // The arguments that shape the measurement; where results go does not.
    let mut args = Vec::new();
    let mut skip = false;
    for a in env.command_line.iter().skip(1) {
        if std::mem::take(&mut skip) {
            continue;
        }
        if a == "--plot" || a.starts_with("--export") {
            skip = !a.contains('=');
            continue;
        }
        if a != "--no-progress" {
            args.push(a.as_str());
        }
    }
    let mut title = format!("contend {}", args.join(" "));
    if title.chars().count() > 110 {
        title = title.chars().take(107).collect::<String>() + "...";
    }
    format!("{title} ({} CPUs, Linux {})", env.cpus_online, env.kernel)
}

/// An export document as one line-terminated JSON text.
fn json_line(export: &impl serde::Serialize) -> Result<String> {
    Ok(report::json::render(export)? + "\n")
}

/// 0, or 128 + the signal that cut the run short.
fn exit_code(interrupted: Option<nix::sys::signal::Signal>) -> ExitCode {
    match interrupted {
        Some(sig) => ExitCode::from(signals::exit_status(sig)),
        None => ExitCode::SUCCESS,
    }
}

/// Writes to stdout; a closed pipe (`| head`) is not an error worth a trace.
fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("writing to stdout"),
    }
}
