//! Repetition of one point: `--runs N` independent runs (each with its
//! own workers and warm-up), or with `--precision P%` as many as it takes
//! for the 95% confidence interval of the mean to shrink within P% of it,
//! bounded by `--max-time`. Every run is kept; the caller says which
//! number of a run the interval is about.

use super::point_outcome;
use crate::measure::stats::Stats;
use anyhow::Result;
use nix::sys::signal::Signal;
use serde::Serialize;
use std::time::{Duration, Instant};

/// How a point is repeated.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Repeat {
    /// Runs at least (with --precision) or exactly (without).
    pub runs: u32,
    /// Target half-width of the 95% interval, % of the mean.
    pub precision_pct: Option<f64>,
    /// With a precision target: stop adding runs once another would
    /// overrun this, ns per point.
    pub max_time_ns: u64,
}

impl Repeat {
    /// One run, as in a single measurement.
    pub const ONCE: Repeat = Repeat {
        runs: 1,
        precision_pct: None,
        max_time_ns: 0,
    };

    /// Checks the flags' values; `max_time` defaults to 60 s per point.
    pub fn new(runs: u32, precision_pct: Option<f64>, max_time: Option<Duration>) -> Result<Self, String> {
        if runs == 0 {
            return Err("--runs must be at least 1".into());
        }
        if let Some(p) = precision_pct {
            if !(p > 0.0 && p < 100.0) {
                return Err(format!("--precision {p}% must be between 0 and 100%"));
            }
        }
        if max_time.is_some() && precision_pct.is_none() {
            return Err("--max-time bounds --precision; give --precision too".into());
        }
        if max_time.is_some_and(|d| d.is_zero()) {
            return Err("--max-time must be longer than 0".into());
        }
        Ok(Repeat {
            runs,
            precision_pct,
            max_time_ns: max_time.unwrap_or(Duration::from_secs(60)).as_nanos() as u64,
        })
    }
}

/// Why a point stopped adding runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stopped {
    /// The --runs asked for were done.
    Runs,
    /// The interval reached --precision.
    Precision,
    /// --max-time would have been exceeded by another run first.
    MaxTime,
    /// SIGINT/SIGTERM.
    Interrupted,
}

impl Stopped {
    /// For notes: "precision reached", "max time spent".
    pub fn describe(self) -> &'static str {
        match self {
            Stopped::Runs => "runs done",
            Stopped::Precision => "precision reached",
            Stopped::MaxTime => "max time spent before the precision was reached",
            Stopped::Interrupted => "interrupted",
        }
    }
}

/// Every run of a point and the statistics of its metric.
#[derive(Debug, Clone)]
pub struct Repeated<S> {
    /// The runs, in order.
    pub runs: Vec<S>,
    /// The metric over the runs.
    pub stats: Stats,
    /// Why it stopped.
    pub stopped: Stopped,
}

impl<S> Repeated<S> {
    /// Index of the run whose metric is closest to the median: the one
    /// reports take their detail columns from.
    pub fn median_run(&self, metric: impl Fn(&S) -> f64) -> usize {
        (0..self.runs.len())
            .min_by(|&a, &b| {
                let d = |i: usize| (metric(&self.runs[i]) - self.stats.median).abs();
                d(a).total_cmp(&d(b))
            })
            .unwrap_or(0)
    }
}

/// Runs `run` as `plan` says. Returns the runs (None if the first was
/// interrupted before it measured anything) and the signal that should
/// end the sweep, if any.
pub fn repeat<S>(
    plan: &Repeat,
    mut run: impl FnMut() -> Result<S>,
    metric: impl Fn(&S) -> f64,
    cut_short: impl Fn(&S) -> Option<Signal>,
) -> Result<(Option<Repeated<S>>, Option<Signal>)> {
    let started = Instant::now();
    let budget = Duration::from_nanos(plan.max_time_ns);
    // An interval needs two runs.
    let least = if plan.precision_pct.is_some() {
        plan.runs.max(2)
    } else {
        plan.runs
    } as usize;
    let mut runs = Vec::new();
    let (stopped, signal) = loop {
        let (sample, signal) = point_outcome(run(), &cut_short)?;
        runs.extend(sample);
        if signal.is_some() {
            break (Stopped::Interrupted, signal);
        }
        if runs.len() < least {
            continue;
        }
        let Some(target) = plan.precision_pct else {
            break (Stopped::Runs, None);
        };
        let values: Vec<f64> = runs.iter().map(&metric).collect();
        if Stats::of(&values).ci95_pct.is_some_and(|p| p <= target) {
            break (Stopped::Precision, None);
        }
        let per_run = started.elapsed() / runs.len() as u32;
        if started.elapsed() + per_run > budget {
            break (Stopped::MaxTime, None);
        }
    };
    if runs.is_empty() {
        return Ok((None, signal));
    }
    let values: Vec<f64> = runs.iter().map(&metric).collect();
    Ok((
        Some(Repeated {
            stats: Stats::of(&values),
            runs,
            stopped,
        }),
        signal,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(values: &'static [f64]) -> impl FnMut() -> Result<f64> {
        let mut i = 0;
        move || {
            i += 1;
            Ok(values[(i - 1) % values.len()])
        }
    }

    #[test]
    fn a_fixed_number_of_runs() {
        let plan = Repeat::new(3, None, None).unwrap();
        let (r, sig) = repeat(&plan, fixed(&[1.0, 2.0, 3.0, 4.0]), |v| *v, |_| None).unwrap();
        let r = r.unwrap();
        assert_eq!((r.runs.len(), r.stopped, sig), (3, Stopped::Runs, None));
        assert_eq!(r.stats.mean, 2.0);
        assert_eq!(r.median_run(|v| *v), 1);
    }

    #[test]
    fn precision_adds_runs_until_the_interval_is_narrow() {
        // Noisy at first, then steady: the interval narrows as runs add up.
        let plan = Repeat::new(2, Some(2.0), Some(Duration::from_secs(60))).unwrap();
        let values: &[f64] = &[
            98.0, 102.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0,
        ];
        let (r, _) = repeat(&plan, fixed(values), |v| *v, |_| None).unwrap();
        let r = r.unwrap();
        assert_eq!(r.stopped, Stopped::Precision);
        assert!(r.stats.ci95_pct.unwrap() <= 2.0);
        assert!(r.runs.len() > 2 && r.runs.len() < values.len());
    }

    #[test]
    fn max_time_ends_a_hopeless_search() {
        let plan = Repeat::new(2, Some(0.001), Some(Duration::from_millis(30))).unwrap();
        let slow_noise = {
            let mut flip = false;
            move || {
                std::thread::sleep(Duration::from_millis(5));
                flip = !flip;
                Ok(if flip { 1.0 } else { 2.0 })
            }
        };
        let (r, _) = repeat(&plan, slow_noise, |v: &f64| *v, |_| None).unwrap();
        let r = r.unwrap();
        assert_eq!(r.stopped, Stopped::MaxTime);
        assert!(r.runs.len() >= 2);
    }

    #[test]
    fn an_interrupt_keeps_what_was_measured() {
        let plan = Repeat::new(5, None, None).unwrap();
        let mut n = 0;
        let run = || {
            n += 1;
            Ok(n)
        };
        let (r, sig) = repeat(&plan, run, |v| *v as f64, |v| (*v == 2).then_some(Signal::SIGINT)).unwrap();
        let r = r.unwrap();
        assert_eq!(
            (r.runs.len(), r.stopped, sig),
            (2, Stopped::Interrupted, Some(Signal::SIGINT))
        );
    }

    #[test]
    fn bad_plans_are_refused() {
        assert!(Repeat::new(0, None, None).is_err());
        assert!(Repeat::new(3, Some(0.0), None).is_err());
        assert!(Repeat::new(3, None, Some(Duration::from_secs(1))).is_err());
    }
}
