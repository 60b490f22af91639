//! `contend tune`'s validated spec.

use crate::engine::repeat::Repeat;
use crate::family::lock::registry;
use crate::family::lock::spec::SpecError;
use crate::model::value::Work;
use crate::session::limits::Limits;
use crate::tune::args::TuneArgs;
use serde::Serialize;

/// What to tune, and how long it may take.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TuneSpec {
    /// The lock (it has a spin budget).
    pub lock: &'static str,
    /// Worker threads.
    pub threads: u32,
    /// Hold.
    pub hold: Work,
    /// Idle.
    pub idle: Work,
    /// Window per run, ns.
    pub duration_ns: u64,
    /// Warm-up per run, ns.
    pub warmup_ns: u64,
    /// Runs per spin budget.
    pub repeat: Repeat,
    /// Refinement stops once this is spent, ns.
    pub max_time_ns: u64,
    /// Where results go (the export flags).
    #[serde(flatten)]
    pub output: crate::output::args::OutputArgs,
}

impl TuneSpec {
    /// Validates the arguments of `contend tune`.
    pub fn from_args(args: &TuneArgs) -> Result<Self, SpecError> {
        let entry = registry::find(args.lock).expect("parsed names are registered");
        if !entry.caps.spin {
            return Err(SpecError(format!(
                "lock `{}` has no spin budget to tune (locks that have one: {})",
                args.lock,
                registry::names_with(|c| c.spin)
            )));
        }
        (entry.available)()
            .map_err(|why| SpecError(format!("lock `{}` cannot run here: {why}", args.lock)))?;
        Limits::read().check_threads(u64::from(args.threads)).map_err(SpecError)?;
        if args.duration.is_zero() {
            return Err(SpecError("--duration must be longer than 0".into()));
        }
        if args.max_time.is_zero() {
            return Err(SpecError("--max-time must be longer than 0".into()));
        }
        Ok(TuneSpec {
            lock: args.lock,
            threads: args.threads,
            hold: args.hold,
            idle: args.idle,
            duration_ns: args.duration.as_nanos() as u64,
            warmup_ns: args.warmup.as_nanos() as u64,
            // The search reads only cs/s: no counting runs to pay for.
            repeat: Repeat {
                count_futex: crate::engine::repeat::CountFutex::Off,
                seed: u64::from(fastrand::u32(..)),
                ..Repeat::new(args.runs, None, None).map_err(SpecError)?
            },
            max_time_ns: args.max_time.as_nanos() as u64,
            output: args.output.clone(),
        })
    }
}
