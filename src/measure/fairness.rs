//! How evenly the lock was shared among workers.

use serde::Serialize;

/// Fairness of one run's per-worker acquisition counts.
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Fairness {
    /// Smallest worker's share of all acquisitions, in percent.
    pub min_share_pct: f64,
    /// Largest worker's share of all acquisitions, in percent.
    pub max_share_pct: f64,
    /// Jain's fairness index, (Σx)² / (n·Σx²): 1 when all workers got the
    /// same, 1/n when one worker got everything.
    pub jain: f64,
}

impl Fairness {
    /// Computes fairness from per-worker counts. With no acquisitions at all
    /// there is nothing to be unfair about: shares are 0 and the index is 1
    /// only if there is a single worker, else 0 (reported, not hidden).
    pub fn of(counts: &[u64]) -> Self {
        let n = counts.len() as f64;
        let total: f64 = counts.iter().map(|&c| c as f64).sum();
        if counts.is_empty() || total == 0.0 {
            return Fairness { jain: if counts.len() == 1 { 1.0 } else { 0.0 }, ..Fairness::default() };
        }
        let squares: f64 = counts.iter().map(|&c| (c as f64) * (c as f64)).sum();
        let min = counts.iter().copied().min().unwrap_or(0) as f64;
        let max = counts.iter().copied().max().unwrap_or(0) as f64;
        Fairness {
            min_share_pct: 100.0 * min / total,
            max_share_pct: 100.0 * max / total,
            jain: total * total / (n * squares),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn equal_shares_are_perfectly_fair() {
        let f = Fairness::of(&[250, 250, 250, 250]);
        assert!(close(f.jain, 1.0));
        assert!(close(f.min_share_pct, 25.0));
        assert!(close(f.max_share_pct, 25.0));
    }

    #[test]
    fn one_winner_takes_all() {
        let f = Fairness::of(&[1000, 0, 0, 0]);
        assert!(close(f.jain, 0.25));
        assert!(close(f.min_share_pct, 0.0));
        assert!(close(f.max_share_pct, 100.0));
    }

    #[test]
    fn uneven_shares() {
        // (1+3)^2 / (2 * (1 + 9)) = 16/20
        let f = Fairness::of(&[1, 3]);
        assert!(close(f.jain, 0.8));
        assert!(close(f.min_share_pct, 25.0));
        assert!(close(f.max_share_pct, 75.0));
        // the seed's published run: 4468570 4468145 4533874 4561064
        let f = Fairness::of(&[4_468_570, 4_468_145, 4_533_874, 4_561_064]);
        assert!(f.jain > 0.9997 && f.jain < 1.0);
    }

    #[test]
    fn no_acquisitions() {
        assert!(close(Fairness::of(&[0, 0]).jain, 0.0));
        assert!(close(Fairness::of(&[0]).jain, 1.0));
        assert!(close(Fairness::of(&[]).jain, 0.0));
    }
}
