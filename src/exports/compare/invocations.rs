//! The verdict across invocations: with several exports per side, each
//! export's mean of a point is one observation, and the test is over
//! those, not over the runs. The runs of one invocation share its
//! conditions (host drift, where the linker and the loader put the code,
//! the CPU frequency, what else ran that minute), so their spread
//! understates the spread between invocations, and a test over pooled
//! runs reads identical commands as "faster" far more often than 5% of
//! the time. Over invocation means the false-positive rate is what the
//! level says, as long as invocations are independent.
//!
//! The test is Student's t over the log means with the two sides' variance
//! pooled (df = n_old + n_new - 2): the sides are the same command, so
//! they share a spread, and pooling lets one side have a single export.

use crate::measure::stats::t95;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Power the "invocations to resolve" estimate is for.
const POWER: f64 = 0.8;
/// Beyond this many invocations per side the estimate says "more".
const MOST: usize = 1000;

/// The comparison of one point over invocation means.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct AcrossInvocations {
    /// new / old: the ratio of the sides' geometric means.
    pub ratio: f64,
    /// Its 95% interval.
    pub ci95: (f64, f64),
    /// Two-sided p-value.
    pub p: f64,
    /// The spread between invocations: the pooled standard deviation of
    /// the log means, as % of the mean.
    pub spread_pct: f64,
}

/// Compares `new` with `old`, each one mean per invocation (all positive);
/// None without three means in all and one on each side.
pub fn across(old: &[f64], new: &[f64]) -> Option<AcrossInvocations> {
    let (n1, n2) = (old.len(), new.len());
    if n1 == 0 || n2 == 0 || n1 + n2 < 3 || old.iter().chain(new).any(|v| *v <= 0.0) {
        return None;
    }
    let logs = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<f64>>();
    let (a, b) = (logs(old), logs(new));
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (ma, mb) = (mean(&a), mean(&b));
    let squares = |v: &[f64], m: f64| v.iter().map(|x| (x - m).powi(2)).sum::<f64>();
    let df = (n1 + n2 - 2) as f64;
    let sd = ((squares(&a, ma) + squares(&b, mb)) / df).sqrt();
    let se = sd * (1.0 / n1 as f64 + 1.0 / n2 as f64).sqrt();
    let d = mb - ma;
    let p = if se == 0.0 {
        if d == 0.0 {
            1.0
        } else {
            0.0
        }
    } else {
        let dist = StudentsT::new(0.0, 1.0, df).ok()?;
        2.0 * (1.0 - dist.cdf((d / se).abs()))
    };
    let h = t95(df) * se;
    Some(AcrossInvocations {
        ratio: d.exp(),
        ci95: ((d - h).exp(), (d + h).exp()),
        p,
        spread_pct: 100.0 * sd,
    })
}

/// How many invocations per side resolve a difference of `difference`
/// (0.05: 5%) at the 5% level with 80% power, when invocations spread by
/// `spread_pct`: the smallest n with (t(0.975) + t(0.8)) * sd * sqrt(2/n)
/// within the difference, df = 2n - 2; None past [`MOST`].
pub fn to_resolve(spread_pct: f64, difference: f64) -> Option<usize> {
    let (sd, d) = (spread_pct / 100.0, (1.0 + difference.abs()).ln());
    if sd == 0.0 {
        return Some(2);
    }
    (2..=MOST).find(|&n| {
        let df = (2 * n - 2) as f64;
        let power = StudentsT::new(0.0, 1.0, df).map_or(f64::NAN, |t| t.inverse_cdf(POWER));
        (t95(df) + power) * sd * (2.0 / n as f64).sqrt() <= d
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_sides_hold_one_and_a_shift_beyond_the_spread_does_not() {
        let old = [100.0, 102.0, 98.0];
        let same = across(&old, &[101.0, 99.0, 100.0]).unwrap();
        assert!(same.ci95.0 < 1.0 && same.ci95.1 > 1.0 && same.p > 0.5, "{same:?}");
        let up = across(&old, &[110.0, 112.0, 108.0]).unwrap();
        assert!(up.ci95.0 > 1.05 && up.p < 0.01 && (up.ratio - 1.1).abs() < 0.001, "{up:?}");
        // The spread is the pooled sd of the logs, about 2% here.
        assert!((up.spread_pct - 2.0).abs() < 0.1, "{up:?}");
        // One export on one side: the other side's spread stands in.
        assert!(across(&[100.0], &[110.0, 112.0, 108.0]).is_some());
        assert!(across(&[100.0], &[110.0]).is_none());
        assert!(across(&[], &[1.0, 2.0, 3.0]).is_none());
    }

    #[test]
    fn the_invocations_needed_grow_with_the_square_of_the_spread() {
        // sd 2%, 5% difference: z-approximation 2 * (1.96 + 0.84)^2 *
        // (0.02 / 0.0488)^2 = 2.6, and t's heavier tails make it 4.
        let n = to_resolve(2.0, 0.05).unwrap();
        assert_eq!(n, 4);
        // Twice the spread, about four times the invocations.
        let double = to_resolve(4.0, 0.05).unwrap();
        assert!((10..=14).contains(&double), "{double}");
        assert_eq!(to_resolve(0.0, 0.05), Some(2));
        assert_eq!(to_resolve(50.0, 0.01), None);
    }
}
