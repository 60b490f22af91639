//! `contend lock`: N threads or processes contend for one lock.

pub mod args;
pub mod child;
pub mod interpose_check;
pub mod registry;
pub mod report;
pub mod spec;
pub mod sweep;
pub mod warnings;
pub mod workload;

use crate::experiment::Experiment;
use crate::family::lock::args::LockArgs;
use crate::measure::env::Environment;
use crate::model::warning::Warning;
use crate::output::args::OutputArgs;
use crate::output::columns::Group;
use crate::output::document::Report;
use nix::sys::signal::Signal;
use spec::LockSpec;
use sweep::SweepOutcome;

/// `contend lock` as an [`Experiment`].
pub struct Lock;

impl Experiment for Lock {
    type Args = LockArgs;
    type Spec = LockSpec;
    type Outcome = SweepOutcome;
    const PLOTS: bool = true;
    const COLUMNS: &'static [Group] = report::table::GROUPS;

    fn plan(args: &LockArgs) -> anyhow::Result<LockSpec> {
        Ok(LockSpec::from_args(args)?)
    }
    fn output(spec: &LockSpec) -> &OutputArgs {
        &spec.output
    }
    fn measure(spec: &LockSpec) -> anyhow::Result<SweepOutcome> {
        sweep::run_lock_sweep(spec)
    }
    fn ending(o: &SweepOutcome) -> (&[Warning], Option<Signal>) {
        (&o.warnings, o.interrupted)
    }
    fn report<'a>(spec: &'a LockSpec, env: &'a Environment, outcome: &'a SweepOutcome) -> impl Report + 'a {
        report::LockReport { spec, environment: env, outcome }
    }
}
