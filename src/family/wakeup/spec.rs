//! `contend wakeup`'s validated spec and its points (primitive × placement).

use crate::engine::repeat::Repeat;
use crate::family::wakeup::args::WakeupArgs;
use crate::family::wakeup::placement::{allowed_cpus, plan, Affinity};
pub use crate::family::wakeup::point::{Length, WakeupPoint};
use crate::family::wakeup::registry as primitives;
use crate::family::wakeup::sched::Sched;
use crate::measure::tracefs::TraceSpec;
use crate::model::{Mode, SpecError};
use crate::session::limits::Limits;
use serde::Serialize;

/// Round trips per pair and run when neither --iterations nor --duration is
/// given (three runs by default make 9000).
pub const DEFAULT_ITERATIONS: u64 = 3_000;

/// The validated `contend wakeup` experiment.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct WakeupSpec {
    /// Primitives in the order given.
    pub primitives: Vec<&'static str>,
    /// Placements in the order given.
    pub affinities: Vec<Affinity>,
    /// Pairs per point.
    pub pairs: u32,
    /// Threads or processes.
    pub mode: Mode,
    /// The CPUs placements draw from.
    pub cpus: Vec<usize>,
    /// How each point ends.
    pub length: Length,
    /// Warm-up, ns.
    pub warmup_ns: u64,
    /// Interval between rounds, ns.
    pub interval_ns: u64,
    /// Scheduling.
    pub sched: Sched,
    /// mlockall.
    pub mlock: bool,
    /// Outlier tagging in ftrace.
    pub trace: Option<TraceSpec>,
    /// Bucket width of the printed histogram, ns.
    pub histogram_bucket_ns: Option<u64>,
    /// Stall watchdog, ns.
    pub stall_timeout_ns: u64,
    /// Where results go (the export flags).
    #[serde(flatten)]
    pub output: crate::output::args::OutputArgs,
    /// Whether a progress bar may be shown.
    pub progress: bool,
    /// Runs per point.
    pub repeat: Repeat,
}

fn err(msg: impl Into<String>) -> SpecError {
    SpecError(msg.into())
}

impl WakeupSpec {
    /// Validates the arguments of `contend wakeup`.
    pub fn from_args(args: &WakeupArgs) -> Result<Self, SpecError> {
        let mut names = args.primitive.0.clone();
        names.dedup();
        let mut affinities = args.affinity.0.clone();
        affinities.dedup();
        let (pairs, procs) = args.pairs();
        let mode = if procs { Mode::Processes } else { Mode::Threads };
        for name in &names {
            let entry = primitives::find(name).expect("parsed names are registered");
            (entry.available)().map_err(|why| err(format!("primitive `{name}` cannot run here: {why}")))?;
            if mode == Mode::Processes && entry.run_procs.is_none() {
                return Err(err(format!(
                    "--proc-pairs: `{name}` {} (primitives that work between processes: {})",
                    entry.why_not_procs,
                    primitives::names_with_procs()
                )));
            }
        }
        let threads = u64::from(pairs) * 2;
        let noun = if procs { "processes" } else { "threads" };
        Limits::read().check_tasks(threads, noun).map_err(err)?;

        let mut cpus = match &args.cpus {
            Some(list) => {
                let allowed = allowed_cpus();
                if let Some(c) = list.0.iter().find(|c| !allowed.contains(c)) {
                    return Err(err(format!(
                        "--cpus: CPU {c} is not one this process may run on ({})",
                        crate::model::value::format_cpu_list(&allowed)
                    )));
                }
                list.0.clone()
            }
            None => allowed_cpus(),
        };
        if let Some(excluded) = &args.exclude_cpus {
            cpus.retain(|c| !excluded.0.contains(c));
        }
        for &affinity in &affinities {
            plan(affinity, &cpus, pairs as usize).map_err(err)?;
        }

        let length = match (args.iterations, args.duration) {
            (Some(0), _) => return Err(err("--iterations must be at least 1")),
            (Some(n), _) => Length::Iterations(n),
            (None, Some(d)) if d.is_zero() => return Err(err("--duration must be longer than 0")),
            (None, Some(d)) => Length::Duration(d.as_nanos() as u64),
            (None, None) => Length::Iterations(DEFAULT_ITERATIONS),
        };
        let sched =
            Sched::new(&args.policy, args.priority.map(|(a, _)| a), args.priority.and_then(|(_, b)| b))
                .map_err(err)?;
        sched.probe().map_err(err)?;
        if args.mlock {
            crate::family::wakeup::sched::can_lock_memory().map_err(err)?;
        }
        if args.stall_timeout.is_some_and(|d| d.is_zero()) {
            return Err(err("--stall-timeout must be longer than 0"));
        }
        if args.histogram == Some(0) {
            return Err(err("--histogram's bucket width must be above 0 (e.g. --histogram 1us)"));
        }
        let stall_timeout_ns = args.stall_timeout.map_or_else(
            || 10_000_000_000u64.max(args.interval.saturating_mul(100)),
            |d| d.as_nanos() as u64,
        );
        Ok(WakeupSpec {
            primitives: names,
            affinities,
            pairs,
            mode,
            cpus,
            length,
            warmup_ns: args.warmup.as_nanos() as u64,
            interval_ns: args.interval,
            sched,
            mlock: args.mlock,
            trace: args.trace_threshold.map(|threshold_ns| TraceSpec {
                threshold_ns,
                stop: args.trace_stop,
                sched_events: args.trace_sched,
            }),
            histogram_bucket_ns: args.histogram,
            stall_timeout_ns,
            output: args.output.clone(),
            progress: !args.output.no_progress,
            repeat: args.repeat.plan().map_err(err)?,
        })
    }

    /// The points, primitive-major.
    pub fn points(&self) -> Vec<WakeupPoint> {
        let mut points = Vec::new();
        for &primitive in &self.primitives {
            for &affinity in &self.affinities {
                points.push(WakeupPoint {
                    primitive,
                    mode: self.mode,
                    affinity,
                    placements: plan(affinity, &self.cpus, self.pairs as usize)
                        .expect("validated in from_args"),
                    length: self.length,
                    warmup_ns: self.warmup_ns,
                    interval_ns: self.interval_ns,
                    sched: self.sched,
                    mlock: self.mlock,
                    stall_timeout_ns: self.stall_timeout_ns,
                });
            }
        }
        points
    }
}

#[cfg(test)]
mod family_tests {
    use clap::Parser;

    #[derive(Parser)]
    struct Wakeup {
        #[command(flatten)]
        args: crate::family::wakeup::args::WakeupArgs,
    }

    #[test]
    fn every_field_of_a_wakeup_point_is_identity_or_setting() {
        let parsed = Wakeup::try_parse_from(["wakeup", "--primitive", "futex", "--pairs", "1"]).unwrap();
        let spec = super::WakeupSpec::from_args(&parsed.args).unwrap();
        let point = serde_json::to_value(&spec.points()[0]).unwrap();
        crate::model::family::check::classifies_every_field(&crate::family::wakeup::point::FAMILY, &point);
    }
}
