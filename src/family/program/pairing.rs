//! Each point of `contend run` against glibc's mutex, round by round:
//! the geometric mean of the same round's ratios with its interval, and
//! what the profile itself costs (the profiled pthread against the
//! unprofiled one). A lock that never ran gets no ratio.

use crate::model::program::{ProgramResult, VsGlibc, GLIBC};

/// Whether the lock of `r` ran at all: some measured run made an
/// acquisition by it (pthread always "runs": it is glibc's, and so do
/// the what-if's delayed points).
pub(crate) fn exercised(r: &ProgramResult) -> bool {
    r.point.lock == GLIBC
        || r.point.delay.is_some()
        || r.point.speedup.is_some()
        || crate::engine::repeat::measured(&r.runs).any(|s| s.swapped > 0)
}

/// Each lock's metric against pthread's of the same round (and, in a
/// parameter scan, at the same value); none for a lock that never ran.
pub(crate) fn vs_glibc(results: &[ProgramResult]) -> Vec<Option<VsGlibc>> {
    // The baseline runs as the locks do (profiled or not); the unprofiled
    // pthread of `--profile` measures the profile, not a lock.
    let profiled = results.first().is_some_and(|r| r.point.profiled);
    let base = |r: &ProgramResult| {
        results.iter().find(|b| {
            b.point.lock == GLIBC && b.point.profiled == profiled && b.point.parameter == r.point.parameter
        })
    };
    results
        .iter()
        .map(|r| {
            if r.point.lock == GLIBC || !exercised(r) {
                return None;
            }
            paired(r, base(r)?)
        })
        .collect()
}

/// `r` against `base`, round by round: the geometric mean of the ratios
/// of their metrics, with its interval.
pub(crate) fn paired(r: &ProgramResult, base: &ProgramResult) -> Option<VsGlibc> {
    ratio_of(&pairs(r, base))
}

/// The metrics of `r` and `base` in the rounds both ran.
fn pairs(r: &ProgramResult, base: &ProgramResult) -> Vec<(f64, f64)> {
    let rounds = |r: &ProgramResult| -> Vec<(u32, f64)> {
        crate::engine::repeat::measured(&r.runs)
            .map(|s| (s.run.round, crate::model::run::RunRecord::metric(s)))
            .collect()
    };
    let b = rounds(base);
    rounds(r)
        .into_iter()
        .filter_map(|(round, v)| b.iter().find(|(x, _)| *x == round).map(|&(_, base)| (v, base)))
        .collect()
}

/// The geometric mean of the pairs' ratios, with its interval.
fn ratio_of(pairs: &[(f64, f64)]) -> Option<VsGlibc> {
    let (ratio, ci95) = crate::measure::stats::paired_ratio(pairs)?;
    Some(VsGlibc { ratio, ci95, rounds: pairs.len() })
}

/// The profiled pthread against the unprofiled one (None without both):
/// in a parameter scan, every value's rounds together (what the profile
/// costs this program over the scan).
pub(crate) fn profile_cost(results: &[ProgramResult]) -> Option<VsGlibc> {
    let mut all = Vec::new();
    for profiled in results.iter().filter(|r| r.point.lock == GLIBC && r.point.profiled) {
        let unprofiled = results.iter().find(|r| {
            r.point.lock == GLIBC && !r.point.profiled && r.point.parameter == profiled.point.parameter
        });
        all.extend(unprofiled.map_or_else(Vec::new, |u| pairs(profiled, u)));
    }
    ratio_of(&all)
}
