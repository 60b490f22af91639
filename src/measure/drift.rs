//! Host drift: how much of the run-to-run spread of an interleaved sweep
//! is shared by every point of a round. Each round runs every point within
//! seconds, so a change of the host's speed between rounds (another tenant,
//! the hypervisor moving a vCPU, frequency) moves all of that round's runs
//! together, while noise of the points' own moves them apart. Steal does
//! not always show it: on this host whole rounds ran 15% slower with 0%
//! steal. Split as in a two-way layout without interaction: each run's log
//! deviation from its point's mean is a round effect (the mean deviation of
//! its round over the points) plus a residual, and an F test says whether
//! the round effects are larger than chance would make them.

use statrs::distribution::{ContinuousCDF, FisherSnedecor};

/// What the rounds of a sweep shared.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Drift {
    /// Share of the runs' variance (log scale) explained by the round they
    /// ran in, 0..=1.
    pub shared: f64,
    /// The spread of the round effects: the fastest round over the slowest,
    /// minus one (0.15: the host ran 15% faster in its best round).
    pub spread: f64,
    /// Rounds used (those in which every point has a measured run).
    pub rounds: usize,
    /// The F test's p-value for "the rounds share nothing".
    pub p: f64,
}

/// The drift of `points`' measured runs, each as (round, value); None with
/// fewer than 2 points or 3 complete rounds, or a constant metric.
pub fn drift(points: &[Vec<(u32, f64)>]) -> Option<Drift> {
    if points.len() < 2 {
        return None;
    }
    // Rounds in which every point has exactly one positive value.
    let value = |p: &[(u32, f64)], round: u32| -> Option<f64> {
        let mut it = p.iter().filter(|(r, _)| *r == round);
        match (it.next(), it.next()) {
            (Some(&(_, v)), None) if v > 0.0 => Some(v),
            _ => None,
        }
    };
    let last = points.iter().flatten().map(|&(r, _)| r).max()?;
    let table: Vec<Vec<f64>> = (0..=last)
        .filter_map(|round| points.iter().map(|p| value(p, round).map(f64::ln)).collect())
        .collect();
    if table.len() < 3 {
        return None;
    }
    let (rounds, n) = (table.len(), points.len());
    let point_mean: Vec<f64> =
        (0..n).map(|j| table.iter().map(|row| row[j]).sum::<f64>() / rounds as f64).collect();
    let deviation = |row: &[f64], j: usize| row[j] - point_mean[j];
    let effect: Vec<f64> =
        table.iter().map(|row| (0..n).map(|j| deviation(row, j)).sum::<f64>() / n as f64).collect();
    let total: f64 = table.iter().map(|row| (0..n).map(|j| deviation(row, j).powi(2)).sum::<f64>()).sum();
    if total <= 0.0 {
        return None;
    }
    let between: f64 = effect.iter().map(|e| n as f64 * e * e).sum();
    let (lo, hi) =
        effect.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &e| (lo.min(e), hi.max(e)));
    // Rounds x points with one run per cell: and (R-1)(P-1) degrees
    // of freedom for the round effect and the residual.
    let (df1, df2) = ((rounds - 1) as f64, ((rounds - 1) * (n - 1)) as f64);
    let residual = total - between;
    let p = if residual <= 0.0 {
        0.0
    } else {
        let f = (between / df1) / (residual / df2);
        FisherSnedecor::new(df1, df2).map_or(1.0, |d| 1.0 - d.cdf(f))
    };
    Some(Drift { shared: between / total, spread: (hi - lo).exp() - 1.0, rounds, p })
}

/// A round effect worth a note: significant at the 5% level, above half
/// the variance, and more than 3% between rounds.
pub fn note(d: &Drift) -> Option<String> {
    (d.p < 0.05 && d.shared > 0.5 && d.spread > 0.03).then(|| {
        format!(
            "the host drifted: {:.0}% of the run-to-run spread was shared by every point of a round \
             (its fastest round was {:.0}% faster than its slowest, over {} rounds); ratios between \
             points cancel that (contend compare FILE --baseline POINT), absolute rates and their \
             intervals carry it",
            100.0 * d.shared,
            100.0 * d.spread,
            d.rounds
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(values: &[f64]) -> Vec<(u32, f64)> {
        values.iter().enumerate().map(|(i, &v)| (i as u32, v)).collect()
    }

    #[test]
    fn rounds_that_move_together_are_host_drift() {
        // Two points, the host 15% slower in the first three rounds.
        let host = [0.85, 0.85, 0.85, 1.0, 1.0, 1.0];
        let a: Vec<f64> =
            host.iter().zip([1.0, 1.01, 0.99, 1.0, 0.99, 1.01]).map(|(h, n)| 100.0 * h * n).collect();
        let b: Vec<f64> =
            host.iter().zip([0.99, 1.0, 1.01, 1.01, 1.0, 0.99]).map(|(h, n)| 500.0 * h * n).collect();
        let d = drift(&[runs(&a), runs(&b)]).unwrap();
        assert!(d.shared > 0.9 && d.p < 0.001, "{d:?}");
        assert!((d.spread - 0.176).abs() < 0.02, "{d:?}");
        assert_eq!(d.rounds, 6);
        assert!(note(&d).unwrap().contains("shared by every point"));
    }

    #[test]
    fn independent_noise_is_not_drift() {
        let a = runs(&[100.0, 104.0, 96.0, 101.0, 99.0, 100.0]);
        let b = runs(&[50.0, 48.0, 52.0, 49.5, 50.5, 50.0]);
        let d = drift(&[a, b]).unwrap();
        assert!(d.shared < 0.2 && d.p > 0.05, "{d:?}");
        assert_eq!(note(&d), None);
    }

    #[test]
    fn too_little_to_judge() {
        assert_eq!(drift(&[runs(&[1.0, 2.0, 3.0])]), None);
        assert_eq!(drift(&[runs(&[1.0, 2.0]), runs(&[1.0, 2.0])]), None);
        // Rounds missing a point do not count.
        let a = vec![(0, 1.0), (1, 1.1), (2, 0.9), (3, 1.0)];
        let b = vec![(0, 2.0), (2, 1.8)];
        assert_eq!(drift(&[a, b]), None);
        // A constant metric has no spread to share.
        assert_eq!(drift(&[runs(&[1.0; 4]), runs(&[2.0; 4])]), None);
    }
}
