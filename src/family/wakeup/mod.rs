//! `contend wakeup`: pairs of threads or processes ping-pong through a
//! wake primitive; side A records the latencies.

pub mod args;
pub mod placement;
pub mod point;
pub mod registry;
pub mod report;
pub mod sched;
pub mod spec;
pub mod sweep;
pub mod workload;

use crate::experiment::Experiment;
use crate::measure::env::Environment;
use crate::model::warning::Warning;
use crate::output::args::OutputArgs;
use crate::output::columns::Group;
use crate::output::document::Report;
use args::WakeupArgs;
use nix::sys::signal::Signal;
use spec::WakeupSpec;
use sweep::WakeupOutcome;

/// `contend wakeup` as an [`Experiment`].
pub struct Wakeup;

impl Experiment for Wakeup {
    type Args = WakeupArgs;
    type Spec = WakeupSpec;
    type Outcome = WakeupOutcome;
    const PLOTS: bool = true;
    const COLUMNS: &'static [Group] = report::table::GROUPS;

    fn plan(args: &WakeupArgs) -> anyhow::Result<WakeupSpec> {
        Ok(WakeupSpec::from_args(args)?)
    }
    fn output(spec: &WakeupSpec) -> &OutputArgs {
        &spec.output
    }
    fn measure(spec: &WakeupSpec) -> anyhow::Result<WakeupOutcome> {
        sweep::run_wakeup_sweep(spec)
    }
    fn ending(o: &WakeupOutcome) -> (&[Warning], Option<Signal>) {
        (&o.warnings, o.interrupted)
    }
    fn report<'a>(
        spec: &'a WakeupSpec,
        env: &'a Environment,
        outcome: &'a WakeupOutcome,
    ) -> impl Report + 'a {
        report::WakeupReport { spec, environment: env, outcome }
    }
}
