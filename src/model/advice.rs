//! What `contend run --recommend` and `--what-if` found
//! (src/family/program/recommend.rs and whatif.rs measure it; the run
//! family's report and exports show it).

use crate::model::program::VsGlibc;
use serde::Serialize;

/// What `--recommend` found.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Recommendation {
    /// The mutexes tried, the most waited-on first.
    pub mutexes: Vec<MutexAdvice>,
    /// The winners together, when two or more mutexes had one.
    pub combination: Option<Combination>,
    /// The profiled execution's wall time, s (what the plan was timed by).
    pub profile_wall_s: f64,
    /// Executions planned after the profile (rounds × points, both phases).
    pub executions: usize,
    /// Whether a higher metric is better (`--metric`: a rate) or a lower
    /// one (wall time).
    pub higher_is_better: bool,
    /// The smallest gain worth a change, percent (`--threshold`).
    pub threshold_pct: f64,
    /// The median half-width of the intervals of phase 2, in percent of
    /// the ratio.
    pub median_half_width_pct: Option<f64>,
}

/// One mutex and the locks tried on it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct MutexAdvice {
    /// Its process in the profile.
    pub pid: u32,
    /// Its address.
    pub address: u64,
    /// Where it waits (the profile's name).
    pub waits_at: String,
    /// Its wait in the profiled execution, ns.
    pub wait_ns: u64,
    /// Of the wait on every mutex of the program.
    pub wait_share: f64,
    /// Each lock tried on it alone, against pthread.
    pub tried: Vec<Tried>,
    /// The best lock beyond its interval; None: keep glibc's mutex, or
    /// cannot tell.
    pub best: Option<String>,
    /// The other locks beyond their interval that the best cannot be
    /// told from: each one's metric over the best's, paired by round,
    /// has a 95% interval holding 1.
    pub tied: Vec<String>,
    /// With no best lock: the closest one's interval reaches a gain of
    /// the threshold or more, so the data cannot tell a win from none:
    /// about how many rounds in all would (None: glibc's mutex is kept
    /// for a reason: no lock can gain the threshold).
    pub undecided_rounds: Option<usize>,
}

/// One lock on one mutex.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Tried {
    /// The lock.
    pub lock: String,
    /// The point's name (`LOCK@0xADDR`).
    pub point: String,
    /// Against pthread, paired by round (None: it never ran).
    pub vs: Option<VsGlibc>,
    /// Why it has no ratio, when the program failed under it: its first
    /// execution ran past the limit (`--max-slowdown` times the profiled
    /// one) and was ended, or the program failed (an exit status, a
    /// signal, the interposer's fault).
    pub failed: Option<String>,
}

/// The winners together.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Combination {
    /// The point (`LOCK@0xADDR+...`).
    pub point: String,
    /// Against pthread in its own rounds.
    pub vs: Option<VsGlibc>,
}

/// An estimate with its 95% interval.
#[derive(Debug, Clone, Copy, Serialize, schemars::JsonSchema)]
pub struct Estimate {
    /// The value.
    pub value: f64,
    /// Its 95% interval (None with fewer than two rounds).
    pub ci95: Option<(f64, f64)>,
}

/// One delay's ratio to no delay.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DelayPoint {
    /// Asked to be added to every critical section, ns.
    pub delay_ns: u64,
    /// Added, as the interposer's clock measured it (mean over the
    /// rounds): more than asked by a clock read or two, or a preemption;
    /// the slope is fitted on this.
    pub added_ns: f64,
    /// The metric over the same round's metric with no delay.
    pub ratio: Estimate,
}

/// What `--what-if` found.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct WhatIf {
    /// The mutex's address.
    pub address: u64,
    /// Where it waits (the profile's name).
    pub waits_at: String,
    /// Its acquisitions in the profiled execution.
    pub acquisitions: u64,
    /// Its mean hold there, ns (the profile's own cost included).
    pub mean_hold_ns: f64,
    /// The unprofiled program's metric with no delay (median run).
    pub baseline: f64,
    /// Whether a higher metric is better (`--metric`).
    pub higher_is_better: bool,
    /// Each delay's ratio.
    pub delays: Vec<DelayPoint>,
    /// Change of the ratio per ns added to each critical section.
    pub slope_per_ns: Estimate,
    /// The slope over the first delay alone.
    pub first_slope_per_ns: Estimate,
    /// The slope over the last step alone (between the two largest).
    pub last_slope_per_ns: Estimate,
    /// Whether the first and last slopes' intervals overlap (the line
    /// holds as far as the delays can tell). When they do not, the table
    /// warns that the predictions may not hold.
    pub linear: bool,
    /// Wall time added per ns of delay over the acquisitions (wall time
    /// only): the share of acquisitions on the critical path.
    pub critical_path_share: Option<Estimate>,
    /// Predicted ratio with critical sections half as long.
    pub half: Estimate,
    /// Predicted ratio with no critical section (the contention gone).
    pub none: Estimate,
}

/// What `--what-if` found by virtual speedup (src/family/program/
/// speedup.rs): each mutex's critical sections virtually shortened, the
/// mutexes ranked by what that would buy.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SpeedupWhatIf {
    /// Whether a higher metric is better (`--metric`: a rate) or a lower
    /// one (wall time).
    pub higher_is_better: bool,
    /// The metric with the accounts kept and nothing sped up (median).
    pub baseline: f64,
    /// That over glibc's mutex with no accounts, paired by round: what
    /// keeping the accounts costs the program (a probe measured on and
    /// off).
    pub accounts_cost: Option<Estimate>,
    /// The mutexes, ranked: the one whose shorter sections buy the most
    /// first.
    pub mutexes: Vec<SpedMutex>,
}

/// One mutex sped up.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SpedMutex {
    /// Its address.
    pub address: u64,
    /// Where it waits (the profile's name).
    pub waits_at: String,
    /// Its acquisitions in the profiled execution.
    pub acquisitions: u64,
    /// Its mean hold there, ns (the profile's own cost included).
    pub mean_hold_ns: f64,
    /// Its wait in the profiled execution, ns.
    pub wait_ns: u64,
    /// Critical sections ended per execution under the speedup (mean):
    /// 0 means the speedup never reached the mutex.
    pub sections: f64,
    /// Predicted metric ratio with its critical sections half as long
    /// (geometric mean over the rounds, t interval on the log scale, so
    /// always above 0).
    pub half: Option<Estimate>,
    /// Predicted ratio with the sections gone (measured when one mutex
    /// alone is sped up).
    pub none: Option<Estimate>,
    /// Why there is no prediction, and what would give one.
    pub cannot_tell: Option<String>,
    /// Rounds whose half-as-long prediction the CPU bound rather than
    /// the critical path: the program kept the CPUs busy, and a shorter
    /// section saves only its CPU time, shared among them (the CPU's
    /// floor, `speedup::cpu_range`, above T − G); such a round predicts
    /// the range from that floor to the CPU share the program had.
    pub cpu_bound_rounds: u32,
    /// The share of the profiled execution's sleeps (voluntary context
    /// switches) that were on this mutex, 0..=1: the share of the kernel
    /// time its convoy is taken to cost (`program::convoy`).
    pub sleep_share: f64,
    /// Rounds whose range the kernel time of the mutex's sleeps widened:
    /// a shorter section also makes them rarer, which a virtual speedup
    /// cannot show, so the range reaches to the time with that share of
    /// the execution's system time saved in proportion to the section.
    pub kernel_rounds: u32,
    /// Rounds with a half-as-long prediction.
    pub rounds: u32,
    /// Against the next mutex in the ranking, paired by round: whether
    /// their predictions differ beyond their interval (None: the last, or
    /// no prediction).
    pub apart_from_next: Option<bool>,
}
