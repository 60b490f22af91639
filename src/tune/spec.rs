//! `contend tune`'s validated spec.

use crate::engine::repeat::Repeat;
use crate::family::lock::args::GLIBC_SPIN_MAX;
use crate::family::lock::registry;
use crate::family::lock::spec::{Point, SpecError};
use crate::model::value::Work;
use crate::session::limits::Limits;
use crate::tune::args::TuneArgs;
use serde::Serialize;

/// What to tune, and how long it may take.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TuneSpec {
    /// The lock (it has a spin budget, or spins glibc's count).
    pub lock: &'static str,
    /// The knob searched.
    pub knob: Knob,
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
        if entry.caps.rw {
            // Its best spin depends on the read share, which tune has no
            // axis for; a search at 0% reads would tune another lock.
            return Err(SpecError(format!(
                "lock `{}` is a reader-writer lock, whose best spin depends on the read share; tune \
                 searches mutexes (sweep it with `contend lock --lock {} --read PCT --spin N,...`)",
                args.lock, args.lock
            )));
        }
        let knob = match (entry.caps.spin, entry.caps.glibc_spin) {
            (true, _) => Knob::Spin,
            (false, true) => Knob::GlibcSpin,
            (false, false) => {
                return Err(SpecError(format!(
                    "lock `{}` has no spin budget to tune (locks that have one: {}; glibc's spin count: {})",
                    args.lock,
                    registry::names_with(|c| c.spin),
                    registry::names_with(|c| c.glibc_spin)
                )))
            }
        };
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
            knob,
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

/// What `contend tune` searches: the spin budget of contend's own locks,
/// or glibc's mutex spin count (`--glibc-spin`, each run in a child).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Knob {
    /// `--spin`: attempts before sleeping.
    Spin,
    /// `--glibc-spin`: glibc.pthread.mutex_spin_count.
    GlibcSpin,
}

impl Knob {
    /// The knob's value at `p`.
    pub fn of(self, p: &Point) -> Option<u32> {
        match self {
            Knob::Spin => p.spin,
            Knob::GlibcSpin => p.glibc_spin,
        }
    }

    /// `p` with the knob at `value`.
    pub fn set(self, p: Point, value: u32) -> Point {
        match self {
            Knob::Spin => Point { spin: Some(value), ..p },
            Knob::GlibcSpin => Point { glibc_spin: Some(value), ..p },
        }
    }

    /// The coarse pass: decades, up to what the knob takes (glibc stops
    /// at 32767).
    pub fn coarse(self) -> [u32; 6] {
        match self {
            Knob::Spin => [1, 10, 100, 1_000, 10_000, 100_000],
            Knob::GlibcSpin => [1, 10, 100, 1_000, 10_000, GLIBC_SPIN_MAX],
        }
    }

    /// The largest value the refinement may try.
    pub fn max(self) -> u32 {
        match self {
            Knob::Spin => 10_000_000,
            Knob::GlibcSpin => GLIBC_SPIN_MAX,
        }
    }

    /// In words, for the summary: "spin", "glibc-spin".
    pub fn flag(self) -> &'static str {
        match self {
            Knob::Spin => "spin",
            Knob::GlibcSpin => "glibc-spin",
        }
    }
}
