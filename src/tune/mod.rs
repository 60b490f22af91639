//! `contend tune`: searches the lock family's spin budget for the one that
//! maximizes throughput at a given hold time.

pub mod args;
pub mod report;
pub mod run;
pub mod spec;
pub mod table;

use crate::experiment::Experiment;
use crate::measure::env::Environment;
use crate::model::warning::Warning;
use crate::output::args::OutputArgs;
use crate::output::columns::Group;
use crate::output::document::Report;
use crate::tune::args::TuneArgs;
use nix::sys::signal::Signal;
use run::TuneOutcome;
use spec::TuneSpec;

/// `contend tune` as an [`Experiment`].
pub struct Tune;

impl Experiment for Tune {
    type Args = TuneArgs;
    type Spec = TuneSpec;
    type Outcome = TuneOutcome;
    const PLOTS: bool = true;
    const COLUMNS: &'static [Group] = crate::family::lock::report::table::GROUPS;

    fn plan(args: &TuneArgs) -> anyhow::Result<TuneSpec> {
        Ok(TuneSpec::from_args(args)?)
    }
    fn output(spec: &TuneSpec) -> &OutputArgs {
        &spec.output
    }
    fn measure(spec: &TuneSpec) -> anyhow::Result<TuneOutcome> {
        run::run_tune(spec)
    }
    fn ending(o: &TuneOutcome) -> (&[Warning], Option<Signal>) {
        (&o.warnings, o.interrupted)
    }
    fn report<'a>(spec: &'a TuneSpec, env: &'a Environment, outcome: &'a TuneOutcome) -> impl Report + 'a {
        report::TuneReport { spec, environment: env, outcome }
    }
}
