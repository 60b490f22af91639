//! What one wake-up point measured, as reported and exported: per pair and
//! over all pairs, the round-trip and one-way distributions with their
//! full histograms, plus the window's CPU, context-switch and futex
//! counts.

use crate::measure::cpu::CpuSplit;
use crate::measure::futex::FutexCounts;
pub use crate::measure::latency::Distribution;
use crate::measure::latency::LatencySummary;
use crate::measure::rusage::ProcessUsage;
use crate::model::run::{RunInfo, RunRecord};
use serde::Serialize;

/// One pair.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PairSample {
    /// Index.
    pub pair: usize,
    /// Where its threads were allowed to run ("0→1").
    pub placement: String,
    /// CPUs A was seen on.
    pub cpus_a: String,
    /// CPUs B was seen on.
    pub cpus_b: String,
    /// Share of rounds with A and B on the same CPU, %.
    pub same_cpu_pct: f64,
    /// Round trip, as A measured it.
    pub round_trip: Distribution,
    /// One way, both directions pooled.
    pub one_way: Distribution,
    /// A's post to B's wake-up.
    pub a_to_b: Option<LatencySummary>,
    /// B's post to A's wake-up.
    pub b_to_a: Option<LatencySummary>,
    /// One-way times below 0 (clock skew), recorded as 0.
    pub negative_one_way: u64,
    /// Rounds that started a whole interval late.
    pub late_starts: u64,
    /// Round trips tagged in the trace buffer.
    pub tagged: u64,
}

/// One run of a point, or several merged.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct WakeupSample {
    /// Its round, start time and status (measured, rejected, counting);
    /// a merged sample takes the first run's.
    #[serde(flatten)]
    pub run: RunInfo,
    /// Measured window, s.
    pub window_s: f64,
    /// Recorded round trips of all pairs per second of window.
    pub round_trips_per_s: f64,
    /// System-wide CPU split.
    pub cpu: CpuSplit,
    /// The workers' CPU time and context switches.
    pub process: ProcessUsage,
    /// Futex syscalls during the window, `None` when not counted in this
    /// run (measured runs under `--count-futex separate`, or counting off).
    pub futex: Option<FutexCounts>,
    /// The harness's own cost: CPU time the coordinator thread used inside
    /// the window (its polls and the probes' end reads), s.
    pub coordinator_cpu_s: f64,
    /// Every pair.
    pub pairs: Vec<PairSample>,
    /// All pairs' round trips together.
    pub round_trip: Distribution,
    /// All pairs' one-way times together.
    pub one_way: Distribution,
    /// Whether tracing was stopped at an outlier during this point.
    pub stopped_trace: bool,
    /// The signal that cut the point short, if one did.
    pub interrupted: Option<String>,
}

fn weighted(runs: &[WakeupSample], f: impl Fn(&WakeupSample) -> f64) -> f64 {
    let total: f64 = runs.iter().map(|r| r.window_s).sum();
    runs.iter().map(|r| f(r) * r.window_s).sum::<f64>() / total
}

impl RunRecord for WakeupSample {
    fn info(&self) -> &RunInfo {
        &self.run
    }
    fn info_mut(&mut self) -> &mut RunInfo {
        &mut self.run
    }
    /// A run's median round trip, ns: what repetition and `contend
    /// compare` look at.
    fn metric(&self) -> f64 {
        self.round_trip.summary.map_or(f64::NAN, |x| x.p50_ns as f64)
    }
    fn cut_short(&self) -> Option<nix::sys::signal::Signal> {
        self.interrupted.as_deref().and_then(|s| s.parse().ok())
    }
    fn disturbance_pct(&self) -> Option<f64> {
        self.cpu.disturbance_pct(self.window_s, self.process.cpu_s)
    }
}

impl WakeupSample {
    /// Several runs of one point as one sample: distributions merged
    /// (every round trip of every run), counts summed, the CPU split
    /// averaged over the runs' windows.
    pub fn merge(runs: &[WakeupSample]) -> WakeupSample {
        let first = &runs[0];
        let window_s: f64 = runs.iter().map(|r| r.window_s).sum();
        let pairs = (0..first.pairs.len())
            .map(|i| {
                let of_runs: Vec<&PairSample> = runs.iter().map(|r| &r.pairs[i]).collect();
                let rounds: u64 = of_runs.iter().map(|p| p.round_trip.summary.map_or(0, |s| s.samples)).sum();
                let same: f64 = of_runs
                    .iter()
                    .map(|p| p.same_cpu_pct * p.round_trip.summary.map_or(0, |s| s.samples) as f64)
                    .sum();
                let cpus = |f: fn(&PairSample) -> &String| {
                    let mut all: Vec<usize> = of_runs
                        .iter()
                        .flat_map(|p| crate::model::value::parse_cpu_list(f(p)).unwrap_or_default())
                        .collect();
                    all.sort_unstable();
                    all.dedup();
                    crate::model::value::format_cpu_list(&all)
                };
                let a_to_b: Vec<LatencySummary> = of_runs.iter().filter_map(|p| p.a_to_b).collect();
                let b_to_a: Vec<LatencySummary> = of_runs.iter().filter_map(|p| p.b_to_a).collect();
                PairSample {
                    pair: i,
                    placement: first.pairs[i].placement.clone(),
                    cpus_a: cpus(|p| &p.cpus_a),
                    cpus_b: cpus(|p| &p.cpus_b),
                    same_cpu_pct: if rounds == 0 { 0.0 } else { same / rounds as f64 },
                    round_trip: Distribution::merged(of_runs.iter().map(|p| &p.round_trip)),
                    one_way: Distribution::merged(of_runs.iter().map(|p| &p.one_way)),
                    // The directions keep only summaries (no buckets), which
                    // cannot be merged: report the middle run's, and the
                    // pooled one-way distribution above covers every run.
                    a_to_b: a_to_b.get(a_to_b.len() / 2).copied(),
                    b_to_a: b_to_a.get(b_to_a.len() / 2).copied(),
                    negative_one_way: of_runs.iter().map(|p| p.negative_one_way).sum(),
                    late_starts: of_runs.iter().map(|p| p.late_starts).sum(),
                    tagged: of_runs.iter().map(|p| p.tagged).sum(),
                }
            })
            .collect();
        let round_trip = Distribution::merged(runs.iter().map(|r| &r.round_trip));
        let samples = round_trip.summary.map_or(0, |s| s.samples);
        WakeupSample {
            run: first.run,
            window_s,
            round_trips_per_s: samples as f64 / window_s,
            cpu: CpuSplit {
                usr_pct: weighted(runs, |r| r.cpu.usr_pct),
                sys_pct: weighted(runs, |r| r.cpu.sys_pct),
                idle_pct: weighted(runs, |r| r.cpu.idle_pct),
                steal_pct: weighted(runs, |r| r.cpu.steal_pct),
                system_context_switches: runs.iter().map(|r| r.cpu.system_context_switches).sum(),
            },
            process: ProcessUsage {
                cpu_s: runs.iter().map(|r| r.process.cpu_s).sum(),
                user_s: runs.iter().map(|r| r.process.user_s).sum(),
                sys_s: runs.iter().map(|r| r.process.sys_s).sum(),
                voluntary_context_switches: runs.iter().map(|r| r.process.voluntary_context_switches).sum(),
                involuntary_context_switches: runs
                    .iter()
                    .map(|r| r.process.involuntary_context_switches)
                    .sum(),
            },
            futex: runs.iter().try_fold(FutexCounts::default(), |acc, r| {
                r.futex.map(|f| FutexCounts { calls: acc.calls + f.calls, errors: acc.errors + f.errors })
            }),
            coordinator_cpu_s: runs.iter().map(|r| r.coordinator_cpu_s).sum(),
            pairs,
            round_trip,
            one_way: Distribution::merged(runs.iter().map(|r| &r.one_way)),
            stopped_trace: runs.iter().any(|r| r.stopped_trace),
            interrupted: runs.iter().find_map(|r| r.interrupted.clone()),
        }
    }
}
