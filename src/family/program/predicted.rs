//! One round's prediction of a `--what-if` (`speedup.rs`): a point and
//! the range the round allows (T − G alone, what the CPU allows, reached
//! out to the kernel time a convoy costs), and the rounds' predictions as
//! one estimate with its interval (a geometric mean with its t interval
//! on the log scale, which `speedup.rs` uses for the accounts' cost too).

use crate::model::advice::Estimate;

/// The geometric mean of `ratios` (all > 0) with its t interval on the
/// log scale.
pub fn geometric(ratios: &[f64]) -> Estimate {
    let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
    let e = crate::family::program::whatif::estimate(&logs);
    Estimate { value: e.value.exp(), ci95: e.ci95.map(|(lo, hi)| (lo.exp(), hi.exp())) }
}

/// One round's prediction of a sped-up execution over its baseline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Predicted {
    /// The metric's ratio to the baseline's (the middle of `low..high`).
    pub ratio: f64,
    /// The low end of the range the round allows: T − G alone (`low ==
    /// high`), or what the CPU allows
    /// ([`cpu_range`](crate::family::program::cpu_range::cpu_range)), or
    /// either reached out to the time with a convoy's kernel time saved.
    pub low: f64,
    /// Its high end.
    pub high: f64,
    /// Whether the CPU bound it rather than T − G.
    pub cpu_bound: bool,
    /// Whether the kernel time of the mutex's sleeps widened it
    /// ([`convoy`](crate::family::program::convoy)).
    pub kernel: bool,
}

impl Predicted {
    /// A point with no range around it.
    pub fn at(ratio: f64) -> Self {
        Predicted { ratio, low: ratio, high: ratio, cpu_bound: false, kernel: false }
    }

    /// Reaches out to `end` (a ratio of the metric) where it lies beyond
    /// the range on the side of a gain; the point is the range's
    /// geometric middle.
    pub fn reaching(mut self, end: f64, higher_is_better: bool) -> Self {
        if higher_is_better && end > self.high {
            self.high = end;
        } else if !higher_is_better && end < self.low {
            self.low = end;
        } else {
            return self;
        }
        self.ratio = (self.low * self.high).sqrt();
        self.kernel = true;
        self
    }
}

/// The rounds' predictions `v` as one estimate: the geometric mean of
/// their points, its interval from the lows' lower end to the highs'
/// upper end (the same as the points' where no round was bound by the
/// CPU). None when no round predicts.
pub fn estimate(v: &[(u32, Option<Predicted>)]) -> Option<Estimate> {
    let v: Vec<Predicted> = v.iter().filter_map(|(_, r)| *r).collect();
    if v.is_empty() {
        return None;
    }
    let of = |f: fn(&Predicted) -> f64| geometric(&v.iter().map(f).collect::<Vec<_>>());
    let (low, high) = (of(|p| p.low).ci95, of(|p| p.high).ci95);
    let ci95 = low.zip(high).map(|((lo, _), (_, hi))| (lo, hi));
    Some(Estimate { value: of(|p| p.ratio).value, ci95 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_geometric_interval_stays_above_zero() {
        let e = geometric(&[0.05, 0.9, 1.4]);
        let (lo, hi) = e.ci95.unwrap();
        assert!(lo > 0.0 && lo < e.value && e.value < hi);
    }

    #[test]
    fn rounds_bound_by_the_cpu_widen_the_interval_to_their_range() {
        let free = |r: f64| Some(Predicted::at(r));
        let only = estimate(&[(0, free(0.80)), (1, free(0.82)), (2, free(0.81))]).unwrap();
        let bound = |r: f64| {
            Some(Predicted { ratio: r, low: r * 0.95, high: r / 0.95, cpu_bound: true, kernel: false })
        };
        let some = estimate(&[(0, bound(0.80)), (1, free(0.82)), (2, bound(0.81))]).unwrap();
        let ((lo, hi), (slo, shi)) = (only.ci95.unwrap(), some.ci95.unwrap());
        assert!((only.value - some.value).abs() < 1e-12, "the points are the same");
        assert!(slo < lo && shi > hi && slo < some.value && some.value < shi, "{only:?} {some:?}");
        assert!(estimate(&[(0, None)]).is_none());
    }

    #[test]
    fn a_range_reaches_out_only_on_the_side_of_a_gain() {
        // A time: a lower end reaches down, and the point is the middle.
        let p = Predicted::at(0.9).reaching(0.4, false);
        assert!(p.kernel && p.low == 0.4 && p.high == 0.9 && (p.ratio - 0.6).abs() < 1e-12, "{p:?}");
        // An end inside the range, or on the side of a loss, changes nothing.
        assert_eq!(Predicted::at(0.9).reaching(0.95, false), Predicted::at(0.9));
        // A rate: a higher end reaches up.
        let r = Predicted::at(1.1).reaching(1.5, true);
        assert!(r.kernel && r.low == 1.1 && r.high == 1.5, "{r:?}");
        assert_eq!(Predicted::at(1.1).reaching(1.0, true), Predicted::at(1.1));
    }
}
