//! The one pipeline every measuring command runs: validate the arguments
//! into a spec, check the export paths before anything is measured, note
//! the environment, run, print the warnings, emit every requested form of
//! the report, and exit 128 + the signal when one cut the run short. A
//! family (or `tune`) plugs in by implementing [`Experiment`]; `main.rs`
//! names one type per command.

use crate::measure::env::Environment;
use crate::model::warning::Warning;
use crate::output::args::OutputArgs;
use crate::output::columns::{Group, Shown};
use crate::output::document::{emit, Report};
use crate::output::sink::Exports;
use crate::session::signals;
use anyhow::Result;
use nix::sys::signal::Signal;
use std::process::ExitCode;

/// What a measuring command supplies to [`run`].
pub trait Experiment {
    /// Its command-line arguments.
    type Args;
    /// The validated spec.
    type Spec;
    /// What its run produced.
    type Outcome;
    /// Whether its report draws plots (`--plot` is refused otherwise).
    const PLOTS: bool;
    /// Its table's optional column groups (`--columns`).
    const COLUMNS: &'static [Group];
    /// Whether the terminal table goes to stderr: for `contend run`, whose
    /// stdout belongs to the program it runs (as time(1) and perf stat do).
    const TABLE_ON_STDERR: bool = false;

    /// Validates the arguments; a mistake names the flag that fixes it
    /// (a [`crate::model::SpecError`]: exit 2). Anything else that fails here (a full
    /// disk where a file must be written) fails the run: exit 1.
    fn plan(args: &Self::Args) -> Result<Self::Spec>;
    /// Where the spec sends its results.
    fn output(spec: &Self::Spec) -> &OutputArgs;
    /// Runs every point.
    fn measure(spec: &Self::Spec) -> Result<Self::Outcome>;
    /// The outcome's warnings, and the signal that ended it early.
    fn ending(outcome: &Self::Outcome) -> (&[Warning], Option<Signal>);
    /// Whether some point failed (reported, then exit status 1).
    fn failed(_outcome: &Self::Outcome) -> bool {
        false
    }
    /// The report over it all.
    fn report<'a>(spec: &'a Self::Spec, env: &'a Environment, outcome: &'a Self::Outcome)
        -> impl Report + 'a;
}

/// Runs experiment `E` with `args`, start to exit status.
pub fn run<E: Experiment>(args: &E::Args) -> Result<ExitCode> {
    let spec = E::plan(args)?;
    crate::session::terminal::set_quiet(E::output(&spec).quiet);
    Shown::of(E::COLUMNS, E::output(&spec))?;
    let exports = Exports::open(E::output(&spec), E::PLOTS)?;
    let environment = Environment::capture();
    let outcome = E::measure(&spec)?;
    let (warnings, interrupted) = E::ending(&outcome);
    if !crate::session::terminal::quiet() {
        for line in crate::model::warning::terminal_lines(warnings) {
            let line = crate::session::visible::text(&line).into_owned();
            eprint!("{}", crate::output::table::fit(&format!("warning: {line}")));
        }
    }
    emit(exports, &E::report(&spec, &environment, &outcome), E::TABLE_ON_STDERR)?;
    Ok(match interrupted {
        Some(sig) => ExitCode::from(signals::exit_status(sig)),
        None if E::failed(&outcome) => ExitCode::FAILURE,
        None => ExitCode::SUCCESS,
    })
}
