//! contend's entry point, read top to bottom: take over SIGINT/SIGTERM,
//! parse, validate, run the sweep, report. User mistakes exit 2, failures
//! during a run exit 1, and a run ended by SIGINT/SIGTERM reports what it
//! measured and exits 130/143.

#![forbid(unsafe_code)]

use anyhow::{Context, Result};
use clap::Parser;
use contend::cli::{AllocArgs, Cli, Command, Format, ListWhat, LockArgs, WakeupArgs};
use contend::measure::env::Environment;
use contend::report::{self, json::AllocExport, json::LockExport, json::WakeupExport};
use contend::runner::alloc_sweep::run_alloc_sweep;
use contend::runner::sweep::run_lock_sweep;
use contend::runner::wakeup_sweep::run_wakeup_sweep;
use contend::runner::{cleanup, signals, Interrupted};
use contend::spec::alloc::AllocSpec;
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
        eprintln!("warning: cannot take over SIGINT/SIGTERM ({e}); Ctrl-C will not clean up");
    }
    let outcome = match cli.command {
        Command::Lock(args) => lock(&args),
        Command::Wakeup(args) => wakeup(&args),
        Command::Alloc(args) => alloc(&args),
        Command::AllocChild { spec } => alloc_child(&spec),
        Command::List(args) => match args.what {
            ListWhat::Locks => print(&report::list::locks()).map(|()| ExitCode::SUCCESS),
            ListWhat::Allocators => print(&report::alloc::list()).map(|()| ExitCode::SUCCESS),
            ListWhat::Primitives => print(&report::list::primitives()).map(|()| ExitCode::SUCCESS),
        },
        Command::Cleanup => print(&(cleanup::run().join("\n") + "\n")).map(|()| ExitCode::SUCCESS),
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
    let environment = Environment::capture();
    let outcome = run_lock_sweep(&spec)?;
    for w in &outcome.warnings {
        eprintln!("warning: {w}");
    }
    let json_to_stdout = spec.export_json.as_deref().is_some_and(|p| p.as_os_str() == "-");
    if !json_to_stdout {
        match spec.format {
            Format::Table => print(&report::table::render(&outcome.results, environment.cpus_online))?,
            Format::Seed => print(&report::seed::render(&outcome.results))?,
            Format::Gnuplot => print(&report::gnuplot::render(&outcome.results))?,
        }
    }
    if let Some(path) = &spec.export_csv {
        write(path, report::lock_csv::render(&outcome.results))?;
    }
    if let Some(path) = &spec.export_markdown {
        write(
            path,
            report::table::markdown(&outcome.results, environment.cpus_online),
        )?;
    }
    if let Some(path) = &spec.export_gnuplot {
        write(path, report::gnuplot::render(&outcome.results))?;
    }
    if let Some(path) = &spec.export_json {
        let text = report::json::render(&LockExport {
            schema_version: report::json::SCHEMA_VERSION,
            tool: "contend",
            family: "lock",
            environment: &environment,
            spec: &spec,
            warnings: &outcome.warnings,
            points: &outcome.results,
        })?;
        emit_json(path, text)?;
    }
    Ok(exit_code(outcome.interrupted))
}

fn wakeup(args: &WakeupArgs) -> Result<ExitCode> {
    let spec = WakeupSpec::from_args(args)?;
    let environment = Environment::capture();
    let outcome = run_wakeup_sweep(&spec)?;
    for w in &outcome.warnings {
        eprintln!("warning: {w}");
    }
    let trace = outcome.trace.as_ref();
    let json_to_stdout = spec.export_json.as_deref().is_some_and(|p| p.as_os_str() == "-");
    if !json_to_stdout {
        print(&report::wakeup::render(&outcome.results, &outcome.clock, trace))?;
        if let Some(bucket) = spec.histogram_bucket_ns {
            print(&report::histogram::render(&outcome.results, bucket))?;
        }
    }
    if let Some(path) = &spec.export_csv {
        write(path, report::wakeup::csv(&outcome.results))?;
    }
    if let Some(path) = &spec.export_markdown {
        write(
            path,
            report::wakeup::markdown(&outcome.results, &outcome.clock, trace),
        )?;
    }
    if let Some(path) = &spec.export_json {
        let text = serde_json::to_string_pretty(&WakeupExport {
            schema_version: report::json::SCHEMA_VERSION,
            tool: "contend",
            family: "wakeup",
            environment: &environment,
            spec: &spec,
            clock: &outcome.clock,
            trace,
            warnings: &outcome.warnings,
            points: &outcome.results,
        })?;
        emit_json(path, text)?;
    }
    Ok(exit_code(outcome.interrupted))
}

fn alloc(args: &AllocArgs) -> Result<ExitCode> {
    let spec = AllocSpec::from_args(args)?;
    let environment = Environment::capture();
    let outcome = run_alloc_sweep(&spec)?;
    for w in &outcome.warnings {
        eprintln!("warning: {w}");
    }
    print(&report::alloc::table(&outcome.samples))?;
    if let Some(path) = &spec.export_csv {
        write(path, report::alloc::csv(&outcome.samples))?;
    }
    if let Some(path) = &spec.export_json {
        let text = serde_json::to_string_pretty(&AllocExport {
            schema_version: report::json::SCHEMA_VERSION,
            tool: "contend",
            family: "alloc",
            environment: &environment,
            spec: &spec,
            warnings: &outcome.warnings,
            samples: &outcome.samples,
        })?;
        write(path, text + "\n")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The allocator child: runs the workload, prints its result as JSON.
fn alloc_child(spec: &str) -> Result<ExitCode> {
    let spec: ChildSpec = serde_json::from_str(spec).context("the child's spec")?;
    let result = run_child(&spec).map_err(anyhow::Error::msg)?;
    print(&(serde_json::to_string(&result)? + "\n"))?;
    Ok(ExitCode::SUCCESS)
}

/// Writes the JSON export to its file, or to stdout for `-`.
fn emit_json(path: &std::path::Path, text: String) -> Result<()> {
    if path.as_os_str() == "-" {
        print(&format!("{text}\n"))
    } else {
        write(path, text + "\n")
    }
}

/// 0, or 128 + the signal that cut the run short.
fn exit_code(interrupted: Option<nix::sys::signal::Signal>) -> ExitCode {
    match interrupted {
        Some(sig) => ExitCode::from(signals::exit_status(sig)),
        None => ExitCode::SUCCESS,
    }
}

/// Writes an export file, naming it if that fails.
fn write(path: &std::path::Path, text: String) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// Writes to stdout; a closed pipe (`| head`) is not an error worth a trace.
fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("writing to stdout"),
    }
}
