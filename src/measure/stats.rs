//! Statistics over repeated runs of one point: mean, standard deviation,
//! a 95% confidence interval for the mean (Student's t, from the statrs
//! crate), min/median/max, outliers by median absolute deviation, and
//! Welch's t-test for comparing two sets of runs.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// A run is an outlier when its modified z-score (Iglewicz and Hoaglin:
/// 0.6745 (x - median) / MAD) exceeds this.
const OUTLIER_Z: f64 = 3.5;
/// Fewer runs than this say nothing about outliers: with three, the MAD
/// is one of the two deviations and the other is "an outlier" by chance.
const OUTLIER_MIN_RUNS: usize = 5;

/// Summary of one metric over the runs of a point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Stats {
    /// Number of runs.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n - 1); 0 with one run.
    pub stdev: f64,
    /// Half-width of the 95% confidence interval for the mean; None with
    /// one run (no interval can be given).
    pub ci95: Option<f64>,
    /// ci95 relative to the mean, %.
    pub ci95_pct: Option<f64>,
    /// Smallest run.
    pub min: f64,
    /// Median run.
    pub median: f64,
    /// Largest run.
    pub max: f64,
    /// Indices of runs whose modified z-score exceeds 3.5 (judged from 5
    /// runs up).
    pub outliers: Vec<usize>,
}

/// The ratio of paired runs `(value, baseline)`: the geometric mean of
/// their ratios, and its 95% interval (Student's t over the log ratios)
/// from two pairs up; None without a pair of positive values.
pub fn paired_ratio(pairs: &[(f64, f64)]) -> Option<(f64, Option<(f64, f64)>)> {
    let logs: Vec<f64> =
        pairs.iter().filter(|(v, b)| *v > 0.0 && *b > 0.0).map(|(v, b)| (v / b).ln()).collect();
    let n = logs.len();
    if n == 0 {
        return None;
    }
    let centre = logs.iter().sum::<f64>() / n as f64;
    let ci = (n >= 2).then(|| {
        let sd = (logs.iter().map(|x| (x - centre).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
        let h = t95((n - 1) as f64) * sd / (n as f64).sqrt();
        ((centre - h).exp(), (centre + h).exp())
    });
    Some((centre.exp(), ci))
}

/// The two-sided 95% quantile of Student's t with `df` degrees of freedom.
pub fn t95(df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df).map(|t| t.inverse_cdf(0.975)).unwrap_or(f64::NAN)
}

fn median_of(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

impl Stats {
    /// Summarizes `values` (at least one).
    pub fn of(values: &[f64]) -> Self {
        assert!(!values.is_empty(), "statistics of no runs");
        let n = values.len();
        let mean = values.iter().sum::<f64>() / n as f64;
        let stdev = if n > 1 {
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let ci95 = (n > 1).then(|| t95((n - 1) as f64) * stdev / (n as f64).sqrt());
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let median = median_of(&sorted);
        let mut deviations: Vec<f64> = values.iter().map(|v| (v - median).abs()).collect();
        deviations.sort_by(f64::total_cmp);
        let mad = median_of(&deviations);
        let outliers = if mad > 0.0 && n >= OUTLIER_MIN_RUNS {
            (0..n).filter(|&i| 0.6745 * (values[i] - median).abs() / mad > OUTLIER_Z).collect()
        } else {
            Vec::new()
        };
        Stats {
            n,
            mean,
            stdev,
            ci95,
            ci95_pct: ci95.filter(|_| mean != 0.0).map(|h| 100.0 * h / mean.abs()),
            min: sorted[0],
            median,
            max: sorted[n - 1],
            outliers,
        }
    }
}

/// Welch's unequal-variance t-test of two sets of runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Welch {
    /// The t statistic of mean(b) - mean(a).
    pub t: f64,
    /// Welch-Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// Welch's test of `b` against `a`; None unless both have two runs or more.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (sa, sb) = (Stats::of(a), Stats::of(b));
    let (va, vb) = (sa.stdev.powi(2) / a.len() as f64, sb.stdev.powi(2) / b.len() as f64);
    let se = (va + vb).sqrt();
    if se == 0.0 {
        // Identical, noiseless runs: different means are certainly
        // different, equal ones certainly not.
        let p = if sa.mean == sb.mean { 1.0 } else { 0.0 };
        return Some(Welch { t: 0.0, df: f64::INFINITY, p });
    }
    let t = (sb.mean - sa.mean) / se;
    let df = (va + vb).powi(2) / (va.powi(2) / (a.len() - 1) as f64 + vb.powi(2) / (b.len() - 1) as f64);
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some(Welch { t, df, p: 2.0 * (1.0 - dist.cdf(t.abs())) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn t_quantiles_match_the_tables() {
        // Published two-sided 95% values.
        assert!(close(t95(1.0), 12.706, 0.001));
        assert!(close(t95(2.0), 4.303, 0.001));
        assert!(close(t95(10.0), 2.228, 0.001));
        assert!(close(t95(1000.0), 1.962, 0.001));
    }

    #[test]
    fn summary_of_known_values() {
        let s = Stats::of(&[10.0, 12.0, 14.0]);
        assert_eq!((s.n, s.mean, s.stdev), (3, 12.0, 2.0));
        // 4.303 * 2 / sqrt(3)
        assert!(close(s.ci95.unwrap(), 4.969, 0.001));
        assert!(close(s.ci95_pct.unwrap(), 41.41, 0.01));
        assert_eq!((s.min, s.median, s.max), (10.0, 12.0, 14.0));
        let one = Stats::of(&[5.0]);
        assert_eq!((one.stdev, one.ci95), (0.0, None));
        assert_eq!(Stats::of(&[1.0, 3.0]).median, 2.0);
    }

    #[test]
    fn mad_flags_the_run_that_stands_out() {
        let s = Stats::of(&[100.0, 101.0, 99.0, 100.5, 60.0]);
        assert_eq!(s.outliers, vec![4]);
        assert!(Stats::of(&[100.0, 101.0, 99.0, 100.5, 100.2]).outliers.is_empty());
        // Three runs are too few to call one an outlier.
        assert!(Stats::of(&[100.0, 101.0, 60.0]).outliers.is_empty());
        // All equal: no spread, no outliers.
        assert!(Stats::of(&[7.0; 4]).outliers.is_empty());
    }

    #[test]
    fn welch_separates_shifted_runs_only() {
        let a = [100.0, 101.0, 99.0, 100.0, 100.5];
        let b = [110.0, 111.0, 109.0, 110.0, 110.5];
        let w = welch(&a, &b).unwrap();
        assert!(w.t > 0.0 && w.p < 0.001, "{w:?}");
        let same = welch(&a, &[100.2, 99.8, 100.9, 99.1, 100.0]).unwrap();
        assert!(same.p > 0.5, "{same:?}");
        assert!(welch(&a, &[1.0]).is_none());
        assert_eq!(welch(&[2.0, 2.0], &[2.0, 2.0]).unwrap().p, 1.0);
    }
}
