//! `contend run --what-if MUTEX[,MUTEX...]` and `--what-if top:N`: what
//! shortening a mutex's critical sections would buy, by virtual speedup
//! (Coz's method, applied to a mutex's sections: crates/interpose
//! `speedup.rs` keeps the accounts in the program).
//!
//! 1. One profiled execution under glibc's mutex finds the mutexes (by
//!    address or name, or the N most waited-on).
//! 2. In each round, interleaved: the program under glibc's mutex with
//!    no accounts; with the accounts kept and nothing sped up (the
//!    baseline, so that the accounts' own cost cancels, and is shown);
//!    and once per mutex with its sections virtually half as long (and,
//!    for one mutex, gone).
//! 3. A sped-up execution's predicted metric is its measured one with the
//!    pauses every thread owed taken out: wall time T − G, or a rate
//!    M·T/(T − G) (the rate over the whole execution); but never below
//!    the CPU's floor, the baseline's CPU time less G over the CPU the
//!    program could have had ([`cpu_range`](crate::family::program::cpu_range::cpu_range): a program that keeps every
//!    CPU busy gains only the CPU time a shorter section saves). Where
//!    T − G is below that floor, the round predicts a range instead: from
//!    the floor (the program uses all the CPU it could have) to the
//!    ceiling (it keeps the share of the CPUs it had), and its point is
//!    their geometric middle. Its ratio to the same round's baseline,
//!    over the rounds: a geometric mean with a Student's t interval on
//!    the log scale (from the floors' lower end to the ceilings' upper
//!    end where the CPU bound a round), so no prediction leaves (0, ∞).
//!    A round in which the pauses owed reached the execution's length
//!    (threads that block outside the calls contend sees cannot pay)
//!    gives no prediction: "cannot tell".
//! 4. The mutexes are ranked by the half-as-long prediction, and each is
//!    compared with the next, paired by round, to say whether the two
//!    can be told apart.
//!
//! Nothing is extrapolated: a virtual speedup measures the shorter
//! sections' effect directly, where the delay method (`whatif.rs`, with
//! `--delays`) fits a line through longer ones, which fails for sections
//! of tens of ns (a small delay turns a quiet mutex into a contended one).

use crate::engine::futex_plan::FutexPlan;
use crate::family::program::choice::{self, Target};
use crate::family::program::convoy::{self, Convoy};
use crate::family::program::cpu_range::{cpu_range, Cpus};
use crate::family::program::execution::Setting;
use crate::family::program::predicted::{estimate, geometric, Predicted};
use crate::family::program::run_warnings;
use crate::family::program::sweep::{finish, measure, profile_once, ProgramOutcome};
use crate::measure::futex::FutexCounters;
use crate::model::advice::{SpedMutex, SpeedupWhatIf};
use crate::model::program::{MutexProfile, ProgramPoint, ProgramResult, ProgramSample, GLIBC};
use crate::model::warning::{Warning, WarningKind};
use anyhow::{anyhow, bail, Result};
use locks::in_mutex::input;

/// The mutexes `--what-if` names: `top:N` or a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    /// The N most waited-on mutexes of the profile.
    Top(usize),
    /// These, by address or name.
    These(Vec<Target>),
}

/// The most mutexes one what-if ranks (each is a point in every round).
pub const MAX: usize = 8;

/// Parses `--what-if`'s value.
pub fn asked(what: &str) -> Result<Asked, String> {
    if let Some(n) = what.strip_prefix("top:") {
        let n: usize = n.trim().parse().map_err(|_| format!("{what}: top:N takes a number of mutexes"))?;
        if n == 0 || n > MAX {
            return Err(format!("{what}: top:N ranks 1 to {MAX} mutexes"));
        }
        return Ok(Asked::Top(n));
    }
    let targets =
        choice::split_list(what).iter().map(|t| choice::target(t.trim())).collect::<Result<Vec<_>, _>>()?;
    if targets.len() > MAX {
        return Err(format!("{what}: at most {MAX} mutexes"));
    }
    if let Some(i) = (1..targets.len()).find(|&i| targets[..i].contains(&targets[i])) {
        return Err(format!("{what}: {:?} is named twice", targets[i]));
    }
    Ok(Asked::These(targets))
}

/// The mutexes to speed up, from the profile (sorted by wait); `top:N`
/// passes over parking mutexes ([`MutexProfile::parking`]), which are
/// said in `warnings`, as is a named one that is parking.
fn pick(asked: &Asked, profile: &[MutexProfile], warnings: &mut Vec<Warning>) -> Result<Vec<MutexProfile>> {
    match asked {
        Asked::Top(n) => {
            let (top, parking) =
                crate::model::mutex_profile::first_not_parking(profile.iter().filter(|m| m.address != 0), *n);
            warnings.extend(run_warnings::parking_left_out(&format!("--what-if top:{n}"), &parking));
            if top.is_empty() && parking.is_empty() {
                bail!("--what-if top:{n}: the profiled execution took no pthread mutex");
            }
            if top.is_empty() {
                bail!(
                    "--what-if top:{n}: every mutex of the profiled execution that was waited on was parking \
                     (its waiters let it go, or waited on a condition, with nothing in between): no section \
                     of it holds anyone up; name one (--what-if NAME) to speed it up anyway"
                );
            }
            Ok(top.into_iter().cloned().collect())
        }
        Asked::These(targets) => {
            let named: Vec<MutexProfile> = targets
                .iter()
                .map(|t| {
                    let addresses =
                        choice::addresses(t, Some(profile)).map_err(|e| anyhow!("--what-if {e}"))?;
                    profile.iter().find(|m| addresses.contains(&m.address)).cloned().ok_or_else(|| {
                        anyhow!(
                            "--what-if: the mutex at 0x{:x} was not taken in the profiled execution",
                            addresses[0]
                        )
                    })
                })
                .collect::<Result<_>>()?;
            for m in named.iter().filter(|m| m.parking()) {
                warnings.push(Warning::sweep(
                    WarningKind::Parking,
                    format!(
                        "{} is parking (its waiters let it go, or waited on a condition, right after getting \
                         it): expect its what-if to buy little",
                        run_warnings::parked_share(m)
                    ),
                ));
            }
            Ok(named)
        }
    }
}

fn label(percent: u64, address: u64) -> String {
    format!("-{percent}%@{}", input::write_address(address))
}

fn point(percent: u64, address: u64) -> ProgramPoint {
    let mut p = ProgramPoint::new(&label(percent, address), false);
    p.speedup = Some(input::write_at(address, percent));
    p
}

/// The name of the point that keeps the accounts and speeds up nothing.
const BASE: &str = "accounts, no speedup";

/// Runs the what-if (see the module's documentation).
pub(crate) fn run(
    cx: &mut Setting<'_>,
    what: &str,
    futex: &FutexPlan,
    inline: Option<&FutexCounters>,
    mut warnings: Vec<Warning>,
) -> Result<ProgramOutcome> {
    let spec = cx.spec;
    let asked = asked(what).map_err(|e| anyhow!("--what-if {e}"))?;
    let profiled =
        profile_once(cx, &format!("--what-if: one profiled execution under pthread, to find {what}"))?;
    let chosen = pick(&asked, &profiled.mutexes, &mut warnings)?;
    let mut points = vec![ProgramPoint::new(GLIBC, false)];
    let mut base = point(0, chosen[0].address);
    base.lock = BASE.into();
    points.push(base);
    for m in &chosen {
        points.push(point(50, m.address));
        if chosen.len() == 1 {
            points.push(point(100, m.address));
        }
    }
    // The plan, said with or without a progress bar (--quiet silences it):
    // its executions (with futex counting in separate runs, one more per
    // point) and about how long they take, at the profiled execution's
    // length, as --recommend says its own.
    {
        let names: Vec<String> =
            chosen.iter().map(|m| format!("0x{:x} ({})", m.address, m.waits_at)).collect();
        let rounds = spec.repeat.runs.max(1) as usize;
        let counting = if futex.separate() { points.len() } else { 0 };
        let executions = points.len() * rounds + counting;
        let counted =
            if counting > 0 { format!(", {counting} of them counting futex calls") } else { String::new() };
        crate::session::terminal::status(&format!(
            "contend run --what-if: {} virtually sped up; {} points ({}) in {rounds} rounds: {executions} \
             executions of about {:.2} s (~{:.0} s){counted}",
            names.join(", "),
            points.len(),
            points.iter().map(|p| p.lock.as_str()).collect::<Vec<_>>().join(", "),
            profiled.wall_s,
            executions as f64 * profiled.wall_s
        ));
    }
    let measured = measure(cx, &points, futex, inline, &mut warnings)?;
    let higher_is_better = spec.metric.is_some();
    let analysis = analyse(&chosen, &profiled, &measured.results, higher_is_better, Cpus::here());
    let vs = crate::family::program::pairing::vs_glibc(&measured.results);
    let kernel_waits_failed = cx.kernel_waits_failed.take();
    let mut outcome = finish(spec, measured, vs, None, kernel_waits_failed, warnings);
    outcome.speedup = analysis;
    Ok(outcome)
}

/// Per round, the measured runs of `name`.
fn rounds<'a>(results: &'a [ProgramResult], name: &str) -> Vec<&'a ProgramSample> {
    results
        .iter()
        .find(|r| r.point.lock == name)
        .map(|r| crate::engine::repeat::measured(&r.runs).collect())
        .unwrap_or_default()
}

fn metric(s: &ProgramSample) -> f64 {
    crate::model::run::RunRecord::metric(s)
}

/// The metric `s` predicts for the program with the speedup: its
/// measured metric with the pauses owed taken out, and `saved_s` of wall
/// time beside them (the convoy's end, `convoy.rs`; 0 for T − G alone).
/// None: they reached its length.
///
/// Coz's rule, T − G: each thread's timeline is G longer than in the
/// sped-up program (its own sections ran whole, and it paused for the
/// rest), which holds when each thread has a CPU of its own. With more
/// runnable threads than CPUs it is not exact; taking out the CPU time
/// the accounting added over the CPUs kept busy instead, (G + P) / U,
/// was tried and measured worse where the answer is clearest (one global
/// mutex halved: 0.910 against the real change's 0.742, where T − G read
/// 0.739 against 0.762), so T − G stays.
pub fn predicted(s: &ProgramSample, higher_is_better: bool, saved_s: f64) -> Option<f64> {
    let owed_s = s.sped.map_or(0.0, |sp| sp.owed_s());
    taken_out(metric(s), s.wall_s, owed_s + saved_s, higher_is_better)
}

/// A metric measured over `wall_s` with `out_s` of that time taken out:
/// the time left, or the rate over it.
fn taken_out(metric: f64, wall_s: f64, out_s: f64, higher_is_better: bool) -> Option<f64> {
    let left = wall_s - out_s;
    if left <= 0.0 {
        return None;
    }
    Some(if higher_is_better { metric * wall_s / left } else { left })
}

/// `s`'s predicted ratio to its baseline `b`: T − G, or where that is
/// beyond what the CPU's floor allows (a time below it, a rate above its
/// inverse), the range the CPU allows; either reaching out to the time
/// with the convoy's kernel time saved too, where that is a bigger gain.
fn predict(
    s: &ProgramSample,
    b: &ProgramSample,
    higher_is_better: bool,
    cpus: Cpus,
    convoy: Convoy,
) -> Option<Predicted> {
    let coz = predicted(s, higher_is_better, 0.0)? / metric(b);
    let p = match cpu_range(s, b, cpus) {
        None => Predicted::at(coz),
        Some((floor, ceiling)) => {
            // As a ratio of the metric: of the time, or of a rate (its
            // inverse).
            let (low, high) = if higher_is_better { (1.0 / ceiling, 1.0 / floor) } else { (floor, ceiling) };
            let beyond = if higher_is_better { coz > high } else { coz < low };
            if beyond {
                Predicted { ratio: (low * high).sqrt(), low, high, cpu_bound: true, kernel: false }
            } else {
                Predicted::at(coz)
            }
        }
    };
    let end = convoy.saved_s(s).and_then(|saved| predicted(s, higher_is_better, saved));
    Some(match end {
        Some(e) => p.reaching(e / metric(b), higher_is_better),
        None => p,
    })
}

/// Per round, the predicted ratio of `name` to the baseline (None for a
/// round where it cannot be predicted), by round number.
fn ratios(
    results: &[ProgramResult],
    name: &str,
    higher_is_better: bool,
    cpus: Cpus,
    convoy: Convoy,
) -> Vec<(u32, Option<Predicted>)> {
    let base = rounds(results, BASE);
    rounds(results, name)
        .into_iter()
        .filter_map(|s| {
            let b = base.iter().find(|b| b.run.round == s.run.round)?;
            Some((s.run.round, predict(s, b, higher_is_better, cpus, convoy)))
        })
        .collect()
}

/// The predictions, the ranking and the accounts' cost.
fn analyse(
    chosen: &[MutexProfile],
    profiled: &ProgramSample,
    results: &[ProgramResult],
    higher_is_better: bool,
    cpus: Cpus,
) -> Option<SpeedupWhatIf> {
    let base = rounds(results, BASE);
    if base.is_empty() {
        return None;
    }
    let plain = rounds(results, GLIBC);
    let cost: Vec<f64> = base
        .iter()
        .filter_map(|b| plain.iter().find(|p| p.run.round == b.run.round).map(|p| metric(b) / metric(p)))
        .collect();
    let mut by_round: Vec<Vec<(u32, f64)>> = Vec::new();
    let mut mutexes: Vec<SpedMutex> = chosen
        .iter()
        .map(|m| {
            let share = convoy::sleep_share(m, profiled);
            let half = ratios(results, &label(50, m.address), higher_is_better, cpus, Convoy { share, fraction: 0.5 });
            let runs = rounds(results, &label(50, m.address));
            let sections = runs.iter().map(|s| s.sped.map_or(0, |sp| sp.sections) as f64).sum::<f64>()
                / runs.len().max(1) as f64;
            let cannot_tell = if runs.is_empty() {
                Some("it never ran (interrupted)".to_string())
            } else if sections == 0.0 {
                Some(format!(
                    "the mutex at 0x{:x} was never released in the sped-up executions (its address moved since \
                     the profile: allocated by racing threads, say)",
                    m.address
                ))
            } else if half.iter().any(|(_, r)| r.is_none()) {
                Some(
                    "in some round the pauses owed reached the execution's length: its threads block where \
                     contend cannot see (pipes, semaphores, joins) and could not pay them"
                        .to_string(),
                )
            } else if half.len() < 2 {
                Some("one round gives no interval: raise --runs".to_string())
            } else {
                None
            };
            let ok: Vec<(u32, f64)> = half.iter().filter_map(|(k, r)| r.map(|r| (*k, r.ratio))).collect();
            let predicted_rounds = ok.len() as u32;
            let cpu_bound_rounds = half.iter().filter(|(_, r)| r.is_some_and(|r| r.cpu_bound)).count() as u32;
            let kernel_rounds = half.iter().filter(|(_, r)| r.is_some_and(|r| r.kernel)).count() as u32;
            let gone = Convoy { share, fraction: 1.0 };
            let none =
                (chosen.len() == 1).then(|| ratios(results, &label(100, m.address), higher_is_better, cpus, gone));
            let none_ok = none.as_ref().filter(|v| !v.is_empty() && v.iter().all(|(_, r)| r.is_some()));
            by_round.push(ok);
            SpedMutex {
                address: m.address,
                waits_at: m.waits_at.clone(),
                acquisitions: m.counts.acquisitions,
                mean_hold_ns: m.mean_hold_ns,
                wait_ns: m.counts.wait_ns,
                sections,
                half: if cannot_tell.is_none() { estimate(&half) } else { None },
                none: if cannot_tell.is_none() { none_ok.and_then(|v| estimate(v)) } else { None },
                cannot_tell,
                cpu_bound_rounds,
                sleep_share: share,
                kernel_rounds,
                rounds: predicted_rounds,
                apart_from_next: None,
            }
        })
        .collect();
    // Ranked: the biggest gain first; mutexes with no prediction last.
    let gain = |m: &SpedMutex| {
        m.half.map_or(f64::INFINITY, |h| if higher_is_better { -h.value.ln() } else { h.value.ln() })
    };
    let mut order: Vec<usize> = (0..mutexes.len()).collect();
    order.sort_by(|&a, &b| gain(&mutexes[a]).total_cmp(&gain(&mutexes[b])));
    for w in order.windows(2) {
        if mutexes[w[0]].half.is_some() && mutexes[w[1]].half.is_some() {
            mutexes[w[0]].apart_from_next = Some(apart(&by_round[w[0]], &by_round[w[1]]));
        }
    }
    let ranked: Vec<SpedMutex> = order.iter().map(|&i| mutexes[i].clone()).collect();
    Some(SpeedupWhatIf {
        higher_is_better,
        baseline: median(base.iter().map(|s| metric(s)).collect()),
        accounts_cost: (!cost.is_empty()).then(|| geometric(&cost)),
        mutexes: ranked,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Whether two mutexes' per-round predictions differ: the paired log
/// ratio's t interval excludes 0.
fn apart(a: &[(u32, f64)], b: &[(u32, f64)]) -> bool {
    let d: Vec<f64> =
        a.iter().filter_map(|(k, x)| b.iter().find(|(j, _)| j == k).map(|(_, y)| x.ln() - y.ln())).collect();
    match crate::family::program::whatif::estimate(&d).ci95 {
        Some((lo, hi)) => lo > 0.0 || hi < 0.0,
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_if_takes_top_n_or_a_list_and_refuses_the_rest() {
        assert_eq!(asked("top:3"), Ok(Asked::Top(3)));
        assert!(asked("top:0").is_err() && asked("top:x").is_err() && asked("top:99").is_err());
        assert_eq!(
            asked("0x10,0x20").unwrap(),
            Asked::These(vec![Target::Address(0x10), Target::Address(0x20)])
        );
        assert!(asked("0x10,0x10").unwrap_err().contains("twice"));
    }

    #[test]
    fn the_convoys_end_is_t_minus_g_less_its_kernel_time_over_the_baseline() {
        // 1 s measured, 0.1 s of pauses owed, 0.1 s of the convoy's
        // kernel time saved (convoy.rs's test): 0.8 of a 1 s baseline.
        let close = |a: Option<f64>, b: f64| assert!((a.unwrap() - b).abs() < 1e-9, "{a:?} {b}");
        close(taken_out(1.0, 1.0, 0.1 + 0.1, false), 0.8);
        close(taken_out(1.0, 1.0, 0.1 + 0.1, false).map(|t| t / 0.9), 0.8 / 0.9);
        // A rate over the same time grows as the time shrinks.
        close(taken_out(100.0, 1.0, 0.2, true), 125.0);
        assert_eq!(taken_out(1.0, 1.0, 0.9 + 0.95, false), None, "nothing left");
    }

    #[test]
    fn two_mutexes_whose_predictions_overlap_cannot_be_told_apart() {
        let a = [(0, 0.80), (1, 0.82), (2, 0.81)];
        assert!(apart(&a, &[(0, 0.95), (1, 0.96), (2, 0.94)]));
        assert!(!apart(&a, &[(0, 0.79), (1, 0.84), (2, 0.80)]));
    }
}
