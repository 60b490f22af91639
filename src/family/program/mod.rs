//! `contend run`: an unmodified program with contend's interposer
//! preloaded (crates/interpose), to profile its mutexes (`--profile`) and
//! to run it with another lock in place of glibc's mutex (`--lock`),
//! interleaved over `--runs`, with each lock's wall time (or the rate the
//! program prints, `--metric`) against glibc's.

pub mod args;
pub mod attach;
pub mod choice;
pub mod convoy;
pub mod cpu_range;
pub mod data_names;
pub mod embedded;
pub mod execution;
pub mod family;
pub mod futex_stacks;
pub mod futex_words;
pub mod hooks;
pub mod interposer;
pub mod keeper;
pub mod launch;
pub mod pairing;
pub mod parameter;
pub mod predicted;
pub mod recommend;
pub mod report;
pub mod run_mode;
pub mod run_warnings;
pub mod scratch;
pub mod spec;
pub mod speedup;
pub mod streams;
pub mod sweep;
pub mod symbols;
pub mod whatif;

use crate::experiment::Experiment;
use crate::measure::env::Environment;
use crate::model::warning::Warning;
use crate::output::args::OutputArgs;
use crate::output::columns::Group;
use crate::output::document::Report;
pub use args::ProgramArgs;
use nix::sys::signal::Signal;
use run_mode::RunMode;
use spec::ProgramSpec;
use sweep::ProgramOutcome;

/// `contend run` as an [`Experiment`].
pub struct Program;

impl Experiment for Program {
    type Args = ProgramArgs;
    type Spec = ProgramSpec;
    type Outcome = ProgramOutcome;
    const PLOTS: bool = true;
    const COLUMNS: &'static [Group] = report::table::GROUPS;
    const TABLE_ON_STDERR: bool = true;

    fn plan(args: &ProgramArgs) -> anyhow::Result<ProgramSpec> {
        ProgramSpec::from_args(args)
    }
    fn output(spec: &ProgramSpec) -> &OutputArgs {
        &spec.output
    }
    fn measure(spec: &ProgramSpec) -> anyhow::Result<ProgramOutcome> {
        sweep::with_setting(spec, |cx, futex, inline, warnings| match &spec.mode {
            RunMode::Recommend { mutexes, threshold_pct } => {
                recommend::run(cx, (*mutexes, *threshold_pct), futex, inline, warnings)
            }
            RunMode::WhatIf { asked, delays_ns: Some(d) } => {
                whatif::run(cx, asked, d, futex, inline, warnings)
            }
            RunMode::WhatIf { asked, delays_ns: None } => speedup::run(cx, asked, futex, inline, warnings),
            RunMode::Locks => sweep::run_locks(cx, futex, inline, warnings),
            RunMode::Attach { .. } => unreachable!("contend attach measures through attach::Attach"),
        })
    }
    fn ending(o: &ProgramOutcome) -> (&[Warning], Option<Signal>) {
        (&o.warnings, o.interrupted)
    }
    fn failed(o: &ProgramOutcome) -> bool {
        !o.failed.is_empty()
    }
    fn report<'a>(
        spec: &'a ProgramSpec,
        env: &'a Environment,
        outcome: &'a ProgramOutcome,
    ) -> impl Report + 'a {
        report::ProgramReport { spec, environment: env, outcome }
    }
}
