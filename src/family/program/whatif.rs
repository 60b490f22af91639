//! `contend run --what-if MUTEX`: what shortening one mutex's critical
//! sections would buy the program, predicted from what lengthening them
//! costs.
//!
//! 1. One profiled execution under glibc's mutex finds the mutex (an
//!    address, or a name as `--lock LOCK@MUTEX` takes: `choice.rs`), its
//!    acquisitions and its mean hold.
//! 2. The program runs with every critical section of that mutex
//!    lengthened by each delay d (busy waiting right after the
//!    acquisition: crates/interpose `delay.rs`), interleaved in rounds with
//!    d = 0, everything else glibc's and unprofiled.
//! 3. In each round, the ratios r(d) of the metric to the round's d = 0
//!    give a slope through (0, 1) by least squares; the slope's mean over
//!    the rounds has a Student's t interval. d is the delay the interposer
//!    measured, not the one asked: a busy wait is longer than asked by a
//!    clock read or two (tens of ns here), which matters for the short
//!    critical sections of a fast mutex.
//! 4. The slope predicts r(−s) = 1 − slope·s for critical sections
//!    shorter by s: half as long (s = mean hold / 2) and gone (s = mean
//!    hold). Both are extrapolations: nothing shorter than the program's
//!    own critical section can be run. The slope over the first delay and
//!    over the last step are given apart: when they differ beyond their
//!    intervals, the line does not hold (the mutex's cost per µs changes
//!    with its length, as when a first small delay turns an uncontended
//!    mutex into a contended one), and the table says that the
//!    predictions may not hold.
//!
//! The slope also reads as a share: wall time added per nanosecond of
//! delay, over the mutex's acquisitions. 1 means every acquisition's hold
//! lies on the program's critical path (the mutex serializes it); 0 that
//! none does.

use crate::engine::futex_plan::FutexPlan;
use crate::family::program::choice::{self, Target};
use crate::family::program::execution::Setting;
use crate::family::program::sweep::{finish, measure, profile_once, ProgramOutcome};
use crate::measure::futex::FutexCounters;
use crate::model::advice::{DelayPoint, Estimate, WhatIf};
use crate::model::program::{MutexProfile, ProgramPoint, ProgramResult, GLIBC};
use crate::model::warning::Warning;
use anyhow::{anyhow, Result};

/// The mean of `v` with its Student's t 95% interval.
pub(crate) fn estimate(v: &[f64]) -> Estimate {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n.max(1.0);
    if v.len() < 2 {
        return Estimate { value: mean, ci95: None };
    }
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let half = crate::measure::stats::t95(n - 1.0) * (var / n).sqrt();
    Estimate { value: mean, ci95: Some((mean - half, mean + half)) }
}

/// `1 - slope·s` over the rounds' slopes.
fn predict(slopes: &[f64], s: f64) -> Estimate {
    let v: Vec<f64> = slopes.iter().map(|b| 1.0 - b * s).collect();
    estimate(&v)
}

/// The least-squares slope through (0, 1) of `ratios` against `delays`.
pub fn slope(delays: &[f64], ratios: &[f64]) -> f64 {
    let num: f64 = delays.iter().zip(ratios).map(|(d, r)| d * (r - 1.0)).sum();
    let den: f64 = delays.iter().map(|d| d * d).sum();
    num / den
}

fn overlap(a: &Estimate, b: &Estimate) -> bool {
    match (a.ci95, b.ci95) {
        (Some((a0, a1)), Some((b0, b1))) => a0 <= b1 && b0 <= a1,
        _ => true,
    }
}

/// The rounds' metrics of one point, by round, with the delay each run
/// really added per critical section (the interposer's measurement).
fn by_round(r: &ProgramResult) -> Vec<(u32, f64, Option<f64>)> {
    crate::engine::repeat::measured(&r.runs)
        .map(|s| (s.run.round, crate::model::run::RunRecord::metric(s), s.delayed.and_then(|d| d.mean_ns())))
        .collect()
}

/// The mutex the what-if is about, in the profile: when a name matches
/// several, the most waited-on (the profile is sorted so).
fn find<'a>(target: &Target, profile: &'a [MutexProfile]) -> Result<&'a MutexProfile> {
    let addresses = choice::addresses(target, Some(profile)).map_err(|e| anyhow!("--what-if {e}"))?;
    profile.iter().find(|m| addresses.contains(&m.address)).ok_or_else(|| {
        anyhow!("--what-if: the mutex at 0x{:x} was not taken in the profiled execution", addresses[0])
    })
}

/// Runs the what-if (see the module's documentation).
pub(crate) fn run(
    cx: &mut Setting<'_>,
    what: &str,
    delays: &[u64],
    futex: &FutexPlan,
    inline: Option<&FutexCounters>,
    mut warnings: Vec<Warning>,
) -> Result<ProgramOutcome> {
    let spec = cx.spec;
    let target = choice::target(what).map_err(|e| anyhow!("--what-if {e}"))?;
    let profiled =
        profile_once(cx, &format!("--what-if: one profiled execution under pthread, to find {what}"))?;
    let m = find(&target, &profiled.mutexes)?.clone();
    let mut points = vec![ProgramPoint::new(GLIBC, false)];
    for &d in delays {
        let label = format!("+{}@0x{:x}", crate::model::value::format_nanos(d), m.address);
        let mut p = ProgramPoint::new(&label, false);
        p.delay = Some(locks::in_mutex::input::write_at(m.address, d));
        points.push(p);
    }
    if spec.progress {
        crate::session::terminal::status(&format!(
            "contend run --what-if: {} in {} ({} acquisitions, mean hold {}): delays {} in {} rounds",
            format_args!("0x{:x}", m.address),
            m.waits_at,
            m.counts.acquisitions,
            crate::model::value::format_nanos(m.mean_hold_ns as u64),
            delays.iter().map(|&d| crate::model::value::format_nanos(d)).collect::<Vec<_>>().join(", "),
            spec.repeat.runs
        ));
    }
    let measured = measure(cx, &points, futex, inline, &mut warnings)?;
    // The delay reached the mutex in some run, or nothing can be said.
    let delayed =
        measured.results.iter().flat_map(|r| &r.runs).filter_map(|s| s.delayed).any(|d| d.count > 0);
    if !delayed {
        warnings.push(Warning::sweep(
            crate::model::warning::WarningKind::Unexercised,
            format!(
                "--what-if: the mutex at 0x{:x} was never taken in the delayed executions (its address moved \
                 since the profile: allocated by racing threads, say), so nothing was lengthened and no \
                 prediction is given",
                m.address
            ),
        ));
    }
    let base = measured.results.iter().find(|r| r.point.lock == GLIBC).filter(|_| delayed);
    let analysis = base.and_then(|base| analyse(&m, delays, base, &measured.results, spec.metric.is_some()));
    let vs = crate::family::program::pairing::vs_glibc(&measured.results);
    let kernel_waits_failed = cx.kernel_waits_failed.take();
    let mut outcome = finish(spec, measured, vs, None, kernel_waits_failed, warnings);
    outcome.what_if = analysis;
    Ok(outcome)
}

/// The slope, its pieces and the predictions from the measured points.
fn analyse(
    m: &MutexProfile,
    delays: &[u64],
    base: &ProgramResult,
    results: &[ProgramResult],
    higher_is_better: bool,
) -> Option<WhatIf> {
    let base_rounds = by_round(base);
    // Per round: each delay's ratio, and the delay it really added (the
    // asked one when the interposer measured none).
    let mut rounds: Vec<(Vec<f64>, Vec<f64>)> = Vec::new();
    for &(round, b, _) in &base_rounds {
        let (mut ratios, mut added) = (Vec::new(), Vec::new());
        for &d in delays {
            let r = results.iter().find(|r| {
                r.point.delay.as_deref() == Some(&locks::in_mutex::input::write_at(m.address, d))
            })?;
            let (_, v, real) = by_round(r).into_iter().find(|(x, _, _)| *x == round)?;
            ratios.push(v / b);
            added.push(real.unwrap_or(d as f64));
        }
        rounds.push((ratios, added));
    }
    if rounds.is_empty() {
        return None;
    }
    let slopes: Vec<f64> = rounds.iter().map(|(r, d)| slope(d, r)).collect();
    let first: Vec<f64> = rounds.iter().map(|(r, d)| (r[0] - 1.0) / d[0]).collect();
    let n = delays.len();
    let last: Vec<f64> = if n > 1 {
        rounds.iter().map(|(r, d)| (r[n - 1] - r[n - 2]) / (d[n - 1] - d[n - 2])).collect()
    } else {
        first.clone()
    };
    let points = (0..n)
        .map(|k| DelayPoint {
            delay_ns: delays[k],
            added_ns: rounds.iter().map(|(_, d)| d[k]).sum::<f64>() / rounds.len() as f64,
            ratio: estimate(&rounds.iter().map(|(r, _)| r[k]).collect::<Vec<_>>()),
        })
        .collect();
    let (first_est, last_est) = (estimate(&first), estimate(&last));
    let linear = overlap(&first_est, &last_est);
    // The predictions rest on the slope over every delay even when the
    // first and last differ: the first alone, over the smallest delay, is
    // the noisiest estimate (on hold_param at 20 µs it predicted 0.436 for
    // half as long where the program ran 0.560 and the slope over every
    // delay gave 0.561), so the table warns instead of switching.
    let used = &slopes;
    let baseline = base.stats.median;
    let share = (!higher_is_better && m.counts.acquisitions > 0).then(|| {
        let per: Vec<f64> =
            slopes.iter().map(|b| b * baseline * 1e9 / m.counts.acquisitions as f64).collect();
        estimate(&per)
    });
    Some(WhatIf {
        address: m.address,
        waits_at: m.waits_at.clone(),
        acquisitions: m.counts.acquisitions,
        mean_hold_ns: m.mean_hold_ns,
        baseline,
        higher_is_better,
        delays: points,
        slope_per_ns: estimate(&slopes),
        linear,
        first_slope_per_ns: first_est,
        last_slope_per_ns: last_est,
        critical_path_share: share,
        half: predict(used, m.mean_hold_ns / 2.0),
        none: predict(used, m.mean_hold_ns),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slope_goes_through_one_at_no_delay() {
        let d = [100.0, 200.0, 400.0];
        assert!((slope(&d, &[1.1, 1.2, 1.4]) - 0.001).abs() < 1e-12);
        assert!(slope(&d, &[1.0, 1.0, 1.0]).abs() < 1e-12);
        assert!((predict(&[0.001, 0.001], 500.0).value - 0.5).abs() < 1e-12);
    }
}
