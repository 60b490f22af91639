//! `contend run --recommend`: which lock each of a program's most
//! waited-on mutexes should have, with an interval, and what the winners
//! give together.
//!
//! 1. One profiled execution under glibc's mutex names the mutexes and
//!    their waits (the program runs without address randomization, so an
//!    address holds in the next executions; `choice.rs`).
//! 2. The `--mutexes` most waited-on mutexes of a kind a lock can replace
//!    (normal or adaptive, not robust, PI, PP or shared) each get every
//!    candidate lock alone (`LOCK@0xADDR`, the rest glibc's). Each such
//!    point runs once first, ended if it takes more than `--max-slowdown`
//!    times the profiled execution: such a lock, or one under which the
//!    program fails, is reported as failed, not measured. The others run
//!    interleaved in rounds with pthread and are paired with it round by
//!    round, as any `contend run --lock` is.
//! 3. A mutex's best lock is the one with the best ratio among those whose
//!    95% interval lies wholly on the better side of 1; with none, "keep
//!    glibc".
//! 4. With winners on two or more mutexes, they run together against
//!    pthread in rounds of their own (a combination is not the product of
//!    its parts: two mutexes' waits may hide each other).
//!
//! The time it takes is said before it starts: executions × the profiled
//! execution's wall time; the precision it gave is said after: the median
//! half-width of the intervals, and that halving it takes about four times
//! the rounds (the interval narrows with the square root of the rounds).

use crate::engine::futex_plan::FutexPlan;
use crate::family::program::execution::{run_point, Setting};
use crate::family::program::pairing;
use crate::family::program::sweep::{self, finish, measure, profile_once, ProgramOutcome};
use crate::measure::futex::FutexCounters;
use crate::model::advice::{Combination, MutexAdvice, Recommendation, Tried};
use crate::model::program::{FailedPoint, MutexProfile, ProgramPoint, VsGlibc, GLIBC};
use crate::model::warning::{Warning, WarningKind};
use anyhow::Result;

/// Whether `vs` is better than glibc's mutex beyond its interval.
pub fn better(vs: &VsGlibc, higher_is_better: bool) -> bool {
    match vs.ci95 {
        Some((lo, hi)) => {
            if higher_is_better {
                lo > 1.0
            } else {
                hi < 1.0
            }
        }
        None => false,
    }
}

/// How a tried lock ranks, lower better (None: it has no ratio).
pub fn score(t: &Tried, higher_is_better: bool) -> Option<f64> {
    t.vs.as_ref().map(|v| if higher_is_better { -v.ratio } else { v.ratio })
}

/// The best lock of `tried` beyond its interval.
pub fn best(tried: &[Tried], higher_is_better: bool) -> Option<&Tried> {
    let score = |t: &Tried| score(t, higher_is_better).unwrap_or(f64::NAN);
    tried
        .iter()
        .filter(|t| t.vs.as_ref().is_some_and(|v| better(v, higher_is_better)))
        .min_by(|a, b| score(a).total_cmp(&score(b)))
}

/// The other winners (beyond their own interval) that the best one
/// cannot be told from: `against(t, best)`, t's metric over the best's
/// paired by round, is beyond 1 on neither side ([`better`] either way:
/// its 95% interval holds 1, or there is none, one round). Said beside the best, so that a developer who would rather
/// compile one of them into the source knows it does as well here.
pub fn tied_with(
    best: &Tried,
    tried: &[Tried],
    higher_is_better: bool,
    against: impl Fn(&Tried, &Tried) -> Option<VsGlibc>,
) -> Vec<String> {
    tried
        .iter()
        .filter(|t| t.lock != best.lock && t.vs.as_ref().is_some_and(|v| better(v, higher_is_better)))
        .filter(|t| against(t, best).is_some_and(|v| !better(&v, true) && !better(&v, false)))
        .map(|t| t.lock.clone())
        .collect()
}

/// The tried lock nearest to winning (the best ratio).
pub fn closest(tried: &[Tried], higher_is_better: bool) -> Option<&Tried> {
    let key = |t: &Tried| score(t, higher_is_better);
    tried.iter().filter(|t| key(t).is_some()).min_by(|a, b| key(a).unwrap().total_cmp(&key(b).unwrap()))
}

/// With no lock beyond its interval: whether the closest lock's interval
/// still reaches a gain of `threshold_pct` or more (the data cannot tell
/// a win from none), and if so about how many rounds in all would decide
/// it, either way: the interval narrows with the square root of the
/// rounds, until it clears 1 (a win) or the threshold (no gain worth a
/// change). None: no lock can gain the threshold, glibc's mutex stays.
pub fn undecided(tried: &[Tried], higher_is_better: bool, threshold_pct: f64) -> Option<usize> {
    let v = closest(tried, higher_is_better)?.vs.as_ref()?;
    let (lo, hi) = v.ci95?;
    // On the winning side, as a gain: the ratio r and its interval's far
    // end, in the direction of "better".
    let (r, far) = if higher_is_better { (v.ratio, hi) } else { (v.ratio, lo) };
    let thr = threshold_pct / 100.0;
    let reaches = if higher_is_better { far > 1.0 + thr } else { far < 1.0 - thr };
    if !reaches {
        return None;
    }
    let half = (hi - lo) / 2.0;
    // The half-width that decides: to clear 1 (r on the winning side) or
    // to clear the threshold (r short of it), whichever is wider.
    let to_one = if higher_is_better { r - 1.0 } else { 1.0 - r };
    let to_thr = thr - to_one;
    let needed = to_one.max(to_thr).max(1e-4);
    let n = v.rounds.max(2) as f64;
    Some(((n * (half / needed).powi(2)).ceil() as usize).clamp(v.rounds + 1, 100_000))
}

/// The mutexes worth trying: waited on, of a kind a lock replaces, most
/// waited-on first, and not parking ([`MutexProfile::parking`]: a lock
/// cannot give threads with nothing to do more to do); the parking ones
/// that would have been tried, apart.
fn candidates(profile: &[MutexProfile], n: usize) -> (Vec<&MutexProfile>, Vec<&MutexProfile>) {
    let mut v: Vec<&MutexProfile> = profile
        .iter()
        .filter(|m| m.address != 0 && m.counts.wait_ns > 0 && locks::in_mutex::swappable_kind(m.kind))
        .collect();
    v.sort_by_key(|m| std::cmp::Reverse(m.counts.wait_ns));
    crate::model::mutex_profile::first_not_parking(v, n)
}

/// Runs each candidate once, ended past its limit (`--max-slowdown`
/// times the profiled execution): those under which the program failed,
/// with why (their first execution is not kept: it also warms the
/// program's files and the caches, as a warm-up run would).
fn first_executions(cx: &mut Setting<'_>, candidates: &[ProgramPoint]) -> Result<Vec<FailedPoint>> {
    let progress = cx.spec.progress;
    let mut failed = Vec::new();
    for p in candidates {
        if progress {
            let limit = cx.swapped_limit().map_or(String::new(), |l| {
                format!(" (ended after {:.1} s: --max-slowdown times the profiled one)", l.as_secs_f64())
            });
            crate::session::terminal::status(&format!(
                "contend run --recommend: first execution of {}{limit}",
                p.lock
            ));
        }
        let mut sample = run_point(cx, p, None).map_err(|e| e.context(format!("lock {}", p.lock)))?;
        if let Some(why) = sample.failure.clone() {
            sample.run.status = crate::model::run::RunStatus::Failed;
            failed.push(FailedPoint { point: p.clone(), reason: why, round: 0, runs: vec![sample] });
        }
    }
    Ok(failed)
}

/// Runs the recommendation (see the module's documentation).
pub(crate) fn run(
    cx: &mut Setting<'_>,
    (mutexes, threshold_pct): (usize, f64),
    futex: &FutexPlan,
    inline: Option<&FutexCounters>,
    mut warnings: Vec<Warning>,
) -> Result<ProgramOutcome> {
    let spec = cx.spec;
    let higher_is_better = spec.metric.is_some();
    let profiled =
        profile_once(cx, "--recommend: one profiled execution under pthread, to find the mutexes")?;
    let all_wait: u64 = profiled.mutexes.iter().map(|m| m.counts.wait_ns).sum();
    let (chosen, parking) = candidates(&profiled.mutexes, mutexes);
    warnings.extend(crate::family::program::run_warnings::parking_left_out("--recommend", &parking));
    let locks: Vec<&String> = spec.locks.iter().filter(|l| *l != GLIBC).collect();
    let mut points = vec![ProgramPoint::new(GLIBC, false)];
    for m in &chosen {
        for lock in &locks {
            let name = format!("{lock}@0x{:x}", m.address);
            let mut p = ProgramPoint::new(&name, false);
            p.chosen = Some(name);
            points.push(p);
        }
    }
    let rounds = spec.repeat.runs.max(1) as usize;
    let combination_runs = if chosen.len() > 1 { 2 * rounds } else { 0 };
    // Each candidate's first execution, then the rounds.
    // With futex counting in separate runs, one more per point (and per
    // point of the combination).
    let counting = if futex.separate() { points.len() + if chosen.len() > 1 { 2 } else { 0 } } else { 0 };
    let executions = (points.len() - 1) + points.len() * rounds + combination_runs + counting;
    let wall = profiled.wall_s;
    if chosen.is_empty() {
        let parked = if parking.is_empty() { "" } else { " but parking ones" };
        warnings.push(Warning::sweep(
            WarningKind::Unexercised,
            format!(
                "{} waited on no mutex a lock can replace{parked} in the profiled execution ({} mutexes \
                 seen): nothing to recommend",
                spec.program[0],
                profiled.mutexes.len()
            ),
        ));
    } else {
        // The plan, with or without a progress bar (--quiet silences it).
        let counted =
            if counting > 0 { format!(", {counting} of them counting futex calls") } else { String::new() };
        crate::session::terminal::status(&format!(
            "contend run --recommend: {} mutex(es) × {} lock(s), then the winners together: up to {executions} \
             executions{counted} of about {wall:.2} s (~{:.0} s); the intervals narrow with the square root of --runs ({rounds})",
            chosen.len(),
            locks.len(),
            executions as f64 * wall
        ));
    }
    if chosen.is_empty() {
        points.truncate(1);
    }
    let mut failed = first_executions(cx, &points[1..])?;
    points.retain(|p| !failed.iter().any(|f| f.point.lock == p.lock));
    let m = measure(cx, &points, futex, inline, &mut warnings)?;
    failed.extend(m.failed);
    let vs = pairing::vs_glibc(&m.results);
    let vs_of =
        |point: &str| m.results.iter().zip(&vs).find(|(r, _)| r.point.lock == point).and_then(|(_, v)| *v);
    let mut advice: Vec<MutexAdvice> = chosen
        .iter()
        .map(|mp| {
            let tried: Vec<Tried> = locks
                .iter()
                .map(|lock| {
                    let point = format!("{lock}@0x{:x}", mp.address);
                    Tried {
                        lock: lock.to_string(),
                        vs: vs_of(&point),
                        failed: failed.iter().find(|f| f.point.lock == point).map(|f| f.reason.clone()),
                        point,
                    }
                })
                .collect();
            let result = |point: &str| m.results.iter().find(|r| r.point.lock == point);
            let winner = best(&tried, higher_is_better);
            let tied = winner.map_or_else(Vec::new, |b| {
                tied_with(b, &tried, higher_is_better, |t, b| {
                    pairing::paired(result(&t.point)?, result(&b.point)?)
                })
            });
            let best = winner.map(|t| t.lock.clone());
            let undecided_rounds =
                if best.is_none() { undecided(&tried, higher_is_better, threshold_pct) } else { None };
            MutexAdvice {
                undecided_rounds,
                pid: mp.pid,
                address: mp.address,
                waits_at: mp.waits_at.clone(),
                wait_ns: mp.counts.wait_ns,
                wait_share: if all_wait > 0 { mp.counts.wait_ns as f64 / all_wait as f64 } else { 0.0 },
                tried,
                best,
                tied,
            }
        })
        .collect();
    let winners: Vec<String> =
        advice.iter().filter_map(|a| a.best.as_ref().map(|l| format!("{l}@0x{:x}", a.address))).collect();
    let mut results = m.results;
    let mut vs_all = vs;
    let mut interrupted = m.interrupted;
    let combination = if winners.len() > 1 && interrupted.is_none() {
        let name = winners.join("+");
        let env = winners.join(";");
        let pair = [
            ProgramPoint::new(GLIBC, false),
            ProgramPoint { chosen: Some(env), ..ProgramPoint::new(&name, false) },
        ];
        let both = measure(cx, &pair, futex, inline, &mut warnings)?;
        interrupted = both.interrupted;
        failed.extend(both.failed);
        let vs = match (both.results.iter().find(|r| r.point.lock == name), both.results.first()) {
            (Some(r), Some(base)) if base.point.lock == GLIBC => pairing::paired(r, base),
            _ => None,
        };
        if let Some(r) = both.results.into_iter().find(|r| r.point.lock == name) {
            results.push(r);
            vs_all.push(vs);
        }
        Some(Combination { point: name, vs })
    } else {
        None
    };
    let mut widths: Vec<f64> = advice
        .iter_mut()
        .flat_map(|a| a.tried.iter())
        .filter_map(|t| t.vs.as_ref().and_then(|v| v.ci95.map(|(lo, hi)| 50.0 * (hi - lo) / v.ratio)))
        .collect();
    widths.sort_by(f64::total_cmp);
    let median_half_width_pct = (!widths.is_empty()).then(|| widths[widths.len() / 2]);
    let planned = points.len() + usize::from(combination.is_some());
    let measured = sweep::Measured { results, interrupted, planned, failed };
    let kernel_waits_failed = cx.kernel_waits_failed.take();
    let recommendation = Recommendation {
        mutexes: advice,
        combination,
        profile_wall_s: wall,
        executions,
        higher_is_better,
        threshold_pct,
        median_half_width_pct,
    };
    let mut outcome = finish(spec, measured, vs_all, None, kernel_waits_failed, warnings);
    outcome.recommendation = Some(recommendation);
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tried(lock: &str, ratio: f64, lo: f64, hi: f64) -> Tried {
        Tried {
            failed: None,
            lock: lock.into(),
            point: format!("{lock}@0x10"),
            vs: Some(VsGlibc { ratio, ci95: Some((lo, hi)), rounds: 5 }),
        }
    }

    #[test]
    fn the_best_lock_is_better_beyond_its_interval_or_none() {
        let t = [
            tried("tas", 0.80, 0.70, 0.95),
            tried("mcs", 0.75, 0.50, 1.05),
            tried("ticket", 0.9, 0.85, 0.95),
        ];
        assert_eq!(best(&t, false).unwrap().lock, "tas", "mcs is faster but its interval holds 1");
        assert!(best(&t[1..2], false).is_none());
        let rates = [tried("tas", 1.2, 1.1, 1.3), tried("mcs", 1.3, 1.25, 1.35)];
        assert_eq!(best(&rates, true).unwrap().lock, "mcs", "a rate: higher is better");
    }

    #[test]
    fn winners_the_best_cannot_be_told_from_are_named_beside_it() {
        let t = [
            tried("adaptive", 0.55, 0.52, 0.58),
            tried("tas", 0.56, 0.53, 0.59),
            tried("ttas", 0.70, 0.66, 0.74),
            tried("mcs", 0.57, 0.40, 1.10),
        ];
        let b = best(&t, false).unwrap();
        assert_eq!(b.lock, "adaptive");
        // Paired with the best: tas's interval holds 1, ttas's does not;
        // mcs is no winner (its own interval holds 1), whatever its pair.
        let against = |t: &Tried, _: &Tried| {
            let (lo, hi) = match t.lock.as_str() {
                "tas" => (0.97, 1.05),
                "ttas" => (1.20, 1.32),
                _ => (0.9, 1.1),
            };
            Some(VsGlibc { ratio: (lo + hi) / 2.0, ci95: Some((lo, hi)), rounds: 5 })
        };
        assert_eq!(tied_with(b, &t, false, against), vec!["tas".to_string()]);
        // No pairing (a lock whose rounds did not meet the best's): not tied.
        assert!(tied_with(b, &t, false, |_, _| None).is_empty());
    }

    #[test]
    fn an_interval_wider_than_the_threshold_cannot_tell_and_says_what_would() {
        // ±51%: a 16% win or a 30% loss alike; 5 rounds cannot tell.
        let wide = [tried("tas", 0.97, 0.47, 1.47)];
        let n = undecided(&wide, false, 5.0).expect("cannot tell");
        assert!(n > 5 && n < 100_000, "{n}");
        // Within the threshold on the winning side: glibc is kept for a
        // reason.
        assert_eq!(undecided(&[tried("tas", 1.01, 0.97, 1.05)], false, 5.0), None);
        // A rate: the winning side is above 1.
        assert!(undecided(&[tried("tas", 1.02, 0.90, 1.14)], true, 5.0).is_some());
        assert_eq!(undecided(&[tried("tas", 0.99, 0.95, 1.03)], true, 5.0), None);
        // Narrower intervals need fewer rounds.
        let narrower = undecided(&[tried("tas", 0.97, 0.90, 1.04)], false, 5.0).unwrap();
        assert!(narrower < n, "{narrower} vs {n}");
    }
}
