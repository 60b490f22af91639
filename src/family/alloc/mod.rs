//! `contend alloc`: threads doing malloc/free (or producer/consumer pairs
//! freeing each other's blocks) in a child process per allocator, loaded
//! with LD_PRELOAD.

pub mod args;
pub mod registry;
pub mod report;
pub mod spec;
pub mod sweep;
pub mod workload;

use crate::experiment::Experiment;
use crate::family::alloc::args::AllocArgs;
use crate::measure::env::Environment;
use crate::model::warning::Warning;
use crate::output::args::OutputArgs;
use crate::output::columns::Group;
use crate::output::document::Report;
use nix::sys::signal::Signal;
use spec::AllocSpec;
use sweep::AllocOutcome;

/// `contend alloc` as an [`Experiment`].
pub struct Alloc;

impl Experiment for Alloc {
    type Args = AllocArgs;
    type Spec = AllocSpec;
    type Outcome = AllocOutcome;
    const PLOTS: bool = false;
    const COLUMNS: &'static [Group] = report::table::GROUPS;

    fn plan(args: &AllocArgs) -> anyhow::Result<AllocSpec> {
        Ok(AllocSpec::from_args(args)?)
    }
    fn output(spec: &AllocSpec) -> &OutputArgs {
        &spec.output
    }
    fn measure(spec: &AllocSpec) -> anyhow::Result<AllocOutcome> {
        sweep::run_alloc_sweep(spec)
    }
    fn ending(o: &AllocOutcome) -> (&[Warning], Option<Signal>) {
        (&o.warnings, o.interrupted)
    }
    fn report<'a>(spec: &'a AllocSpec, env: &'a Environment, outcome: &'a AllocOutcome) -> impl Report + 'a {
        report::AllocReport { spec, environment: env, outcome }
    }
}
