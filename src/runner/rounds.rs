//! The rounds of a sweep: the one place that decides which point runs
//! next. With `--order interleaved` each round runs every unfinished point
//! once in a fresh random order (Abedi and Brecht's randomized multiple
//! interleaved trials), so a burst of steal on a noisy host lands on every
//! variant alike instead of on whichever point happened to run then, and
//! runs of the same round can be paired. Each run is screened for steal and
//! re-made when disturbed; with futex counting in separate runs, one more
//! run per point is made at the end with the tracepoints on.

use super::point_outcome;
use super::repeat::{Order, Repeat, Repeated, RunInfo, RunRecord, RunStatus, Stopped, MAX_RERUNS};
use anyhow::Result;
use nix::sys::signal::Signal;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What a run is made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// A run of the statistics: no syscall tracing.
    Measure,
    /// The counting run: open the futex counters for it.
    Count,
}

/// What the rounds measured.
#[derive(Debug)]
pub struct Rounds<S> {
    /// Per point, in the caller's order: its runs, or None if it never ran.
    pub points: Vec<Option<Repeated<S>>>,
    /// The signal that ended the sweep early, if one did.
    pub interrupted: Option<Signal>,
}

struct PointState<S> {
    runs: Vec<S>,
    spent: Duration,
    stopped: Option<Stopped>,
}

/// Runs `points` points as `plan` says. `run(i, purpose)` makes one run of
/// point i; `after(i, &sample)` sees every run as it ends (progress).
/// `counting` adds the counting run per point after the measured ones.
pub fn run_rounds<S: RunRecord>(
    points: usize,
    plan: &Repeat,
    counting: bool,
    run: impl FnMut(usize, Purpose) -> Result<S>,
    after: impl FnMut(usize, &S),
) -> Result<Rounds<S>> {
    let mut rounds = Engine {
        plan,
        counting,
        run,
        after,
        state: (0..points)
            .map(|_| PointState {
                runs: Vec::new(),
                spent: Duration::ZERO,
                stopped: None,
            })
            .collect(),
        rng: fastrand::Rng::with_seed(plan.seed),
    };
    let mut interrupted = match plan.order {
        Order::Sequential => rounds.sequential()?,
        Order::Interleaved => rounds.interleaved()?,
    };
    if counting && interrupted.is_none() {
        interrupted = rounds.count()?;
    }
    let points = rounds
        .state
        .into_iter()
        .map(|s| Repeated::new(s.runs, s.stopped.unwrap_or(Stopped::Interrupted)))
        .collect();
    Ok(Rounds { points, interrupted })
}

struct Engine<'p, R, A, S> {
    plan: &'p Repeat,
    /// A counting run follows: --max-time keeps room for it.
    counting: bool,
    run: R,
    after: A,
    state: Vec<PointState<S>>,
    rng: fastrand::Rng,
}

impl<R, A, S> Engine<'_, R, A, S>
where
    S: RunRecord,
    R: FnMut(usize, Purpose) -> Result<S>,
    A: FnMut(usize, &S),
{
    fn sequential(&mut self) -> Result<Option<Signal>> {
        for i in 0..self.state.len() {
            for round in 0.. {
                if let Some(sig) = self.measure(i, round)? {
                    return Ok(Some(sig));
                }
                if self.state[i].stopped.is_some() {
                    break;
                }
            }
        }
        Ok(None)
    }

    fn interleaved(&mut self) -> Result<Option<Signal>> {
        for round in 0.. {
            let mut active: Vec<usize> = (0..self.state.len())
                .filter(|&i| self.state[i].stopped.is_none())
                .collect();
            if active.is_empty() {
                break;
            }
            if self.pool_spent(&active) {
                for &i in &active {
                    self.state[i].stopped = Some(Stopped::MaxTime);
                }
                break;
            }
            self.rng.shuffle(&mut active);
            for i in active {
                if let Some(sig) = self.measure(i, round)? {
                    return Ok(Some(sig));
                }
            }
        }
        Ok(None)
    }

    /// One counting run per point that has a measured one, after them all.
    fn count(&mut self) -> Result<Option<Signal>> {
        let mut order: Vec<usize> = (0..self.state.len())
            .filter(|&i| !self.state[i].runs.is_empty())
            .collect();
        if self.plan.order == Order::Interleaved {
            self.rng.shuffle(&mut order);
        }
        for i in order {
            let round = self.state[i]
                .runs
                .iter()
                .map(|r| r.info().round + 1)
                .max()
                .unwrap_or(0);
            let (sample, sig) = self.attempt(i, round, Purpose::Count)?;
            if let Some(s) = sample {
                self.state[i].runs.push(s);
            }
            if sig.is_some() {
                return Ok(sig);
            }
        }
        Ok(None)
    }

    /// One measured run of point i, re-made while screening rejects it
    /// (at most MAX_RERUNS times); then whether the point is done.
    fn measure(&mut self, i: usize, round: u32) -> Result<Option<Signal>> {
        for attempt in 0..=MAX_RERUNS {
            let (sample, sig) = self.attempt(i, round, Purpose::Measure)?;
            let Some(mut s) = sample else {
                self.state[i].stopped = Some(Stopped::Interrupted);
                return Ok(sig);
            };
            let disturbed = self
                .plan
                .max_steal_pct
                .zip(s.disturbance_pct())
                .is_some_and(|(max, d)| d > max);
            let reject = sig.is_none() && disturbed && attempt < MAX_RERUNS;
            if reject {
                s.info_mut().status = RunStatus::Rejected;
            }
            if sig.is_some() {
                s.info_mut().status = RunStatus::CutShort;
            }
            self.state[i].runs.push(s);
            if sig.is_some() {
                self.state[i].stopped = Some(Stopped::Interrupted);
                return Ok(sig);
            }
            if !reject {
                break;
            }
        }
        self.state[i].stopped = self.done(i);
        Ok(None)
    }

    /// Makes one run and stamps it.
    fn attempt(&mut self, i: usize, round: u32, purpose: Purpose) -> Result<(Option<S>, Option<Signal>)> {
        let start_unix_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let started = Instant::now();
        let (sample, sig) = point_outcome((self.run)(i, purpose), |s: &S| s.cut_short())?;
        self.state[i].spent += started.elapsed();
        let sample = sample.map(|mut s| {
            *s.info_mut() = RunInfo {
                round,
                start_unix_ns,
                status: match purpose {
                    Purpose::Measure => RunStatus::Measured,
                    Purpose::Count => RunStatus::Counting,
                },
            };
            (self.after)(i, &s);
            s
        });
        Ok((sample, sig))
    }

    /// With --precision in interleaved rounds, --max-time is pooled: the
    /// sweep may spend max-time x points in all, and a point that reaches
    /// its precision early leaves its share to the noisier ones, which is
    /// where more runs pay. True when the next round of `active` (each at
    /// its mean run time so far), plus the counting runs still to come,
    /// would overrun the pool.
    fn pool_spent(&self, active: &[usize]) -> bool {
        if self.plan.precision_pct.is_none() {
            return false;
        }
        let per_run = |i: usize| {
            let s = &self.state[i];
            s.spent / s.runs.len().max(1) as u32
        };
        let spent: Duration = self.state.iter().map(|s| s.spent).sum();
        let next: Duration = active.iter().map(|&i| per_run(i)).sum();
        let counting: Duration = match self.counting {
            true => (0..self.state.len()).map(per_run).sum(),
            false => Duration::ZERO,
        };
        let pool = Duration::from_nanos(self.plan.max_time_ns) * self.state.len() as u32;
        spent + next + counting > pool
    }

    /// Whether point i needs no more runs, and why.
    fn done(&self, i: usize) -> Option<Stopped> {
        let state = &self.state[i];
        let values: Vec<f64> = super::repeat::measured(&state.runs)
            .map(RunRecord::metric)
            .collect();
        if values.len() < self.plan.least() {
            return None;
        }
        let Some(target) = self.plan.precision_pct else {
            return Some(Stopped::Runs);
        };
        if crate::measure::stats::Stats::of(&values)
            .ci95_pct
            .is_some_and(|p| p <= target)
        {
            return Some(Stopped::Precision);
        }
        if self.plan.order == Order::Interleaved {
            // The pool decides, between rounds (pool_spent).
            return None;
        }
        // Another run must fit in --max-time, and so must the counting run
        // still to come: the flag bounds the point's whole time.
        let per_run = state.spent / state.runs.len().max(1) as u32;
        let next = per_run * (1 + u32::from(self.counting));
        (state.spent + next > Duration::from_nanos(self.plan.max_time_ns)).then_some(Stopped::MaxTime)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::repeat::CountFutex;
    use std::cell::RefCell;

    /// A fake run: the point it belongs to, its value and steal.
    #[derive(Debug, Clone)]
    struct Fake {
        info: RunInfo,
        point: usize,
        value: f64,
        steal: f64,
        signal: Option<Signal>,
    }

    impl RunRecord for Fake {
        fn info(&self) -> &RunInfo {
            &self.info
        }
        fn info_mut(&mut self) -> &mut RunInfo {
            &mut self.info
        }
        fn metric(&self) -> f64 {
            self.value
        }
        fn cut_short(&self) -> Option<Signal> {
            self.signal
        }
        fn disturbance_pct(&self) -> Option<f64> {
            Some(self.steal)
        }
    }

    fn fake(point: usize, value: f64) -> Fake {
        Fake {
            info: RunInfo::default(),
            point,
            value,
            steal: 0.0,
            signal: None,
        }
    }

    fn plan(runs: u32, order: Order) -> Repeat {
        Repeat {
            order,
            seed: 7,
            count_futex: CountFutex::Off,
            ..Repeat::new(runs, None, None).unwrap()
        }
    }

    #[test]
    fn interleaved_rounds_run_every_point_once_each_in_changing_orders() {
        let log = RefCell::new(Vec::new());
        let r = run_rounds(
            4,
            &plan(6, Order::Interleaved),
            false,
            |i, _| {
                log.borrow_mut().push(i);
                Ok(fake(i, 1.0))
            },
            |_, _| {},
        )
        .unwrap();
        let log = log.into_inner();
        assert_eq!(log.len(), 24);
        let rounds: Vec<&[usize]> = log.chunks(4).collect();
        for round in &rounds {
            let mut sorted = round.to_vec();
            sorted.sort();
            assert_eq!(sorted, [0, 1, 2, 3], "a round runs each point once: {log:?}");
        }
        assert!(
            rounds.iter().any(|r| *r != rounds[0]),
            "the order is reshuffled: {log:?}"
        );
        for (i, p) in r.points.iter().enumerate() {
            let p = p.as_ref().unwrap();
            let rounds: Vec<u32> = p.runs.iter().map(|s| s.info.round).collect();
            assert_eq!(rounds, [0, 1, 2, 3, 4, 5]);
            assert!(p.runs.iter().all(|s| s.point == i && s.info.start_unix_ns > 0));
            assert_eq!(p.stopped, Stopped::Runs);
        }
    }

    #[test]
    fn sequential_order_finishes_a_point_before_the_next() {
        let log = RefCell::new(Vec::new());
        run_rounds(
            3,
            &plan(2, Order::Sequential),
            false,
            |i, _| {
                log.borrow_mut().push(i);
                Ok(fake(i, 1.0))
            },
            |_, _| {},
        )
        .unwrap();
        assert_eq!(log.into_inner(), [0, 0, 1, 1, 2, 2]);
    }

    #[test]
    fn the_same_seed_gives_the_same_order() {
        let order = |seed| {
            let log = RefCell::new(Vec::new());
            let p = Repeat {
                seed,
                ..plan(5, Order::Interleaved)
            };
            run_rounds(
                5,
                &p,
                false,
                |i, _| {
                    log.borrow_mut().push(i);
                    Ok(fake(i, 1.0))
                },
                |_, _| {},
            )
            .unwrap();
            log.into_inner()
        };
        assert_eq!(order(3), order(3));
        assert_ne!(order(3), order(4));
    }

    #[test]
    fn disturbed_runs_are_rejected_kept_and_remade_within_a_bound() {
        // Point 0's first two attempts are stolen from; point 1 always is.
        let attempts = RefCell::new([0u32; 2]);
        let r = run_rounds(
            2,
            &plan(1, Order::Interleaved),
            false,
            |i, _| {
                let n = {
                    let mut a = attempts.borrow_mut();
                    a[i] += 1;
                    a[i]
                };
                let steal = if i == 1 || n <= 2 { 40.0 } else { 1.0 };
                Ok(Fake {
                    steal,
                    ..fake(i, f64::from(n))
                })
            },
            |_, _| {},
        )
        .unwrap();
        let statuses = |p: usize| -> Vec<RunStatus> {
            r.points[p]
                .as_ref()
                .unwrap()
                .runs
                .iter()
                .map(|s| s.info.status)
                .collect()
        };
        use RunStatus::{Measured as M, Rejected as X};
        assert_eq!(statuses(0), [X, X, M]);
        // Never quiet: the last attempt is kept.
        assert_eq!(statuses(1), [X, X, X, M]);
        let p0 = r.points[0].as_ref().unwrap();
        assert_eq!(
            (
                p0.stats.n,
                p0.stats.mean,
                crate::runner::repeat::rejected(&p0.runs)
            ),
            (1, 3.0, 2)
        );
        assert_eq!(p0.median_run(), 2);
    }

    #[test]
    fn a_counting_run_per_point_comes_last_and_stays_out_of_the_stats() {
        let purposes = RefCell::new(Vec::new());
        let r = run_rounds(
            2,
            &plan(3, Order::Interleaved),
            true,
            |i, purpose| {
                purposes.borrow_mut().push(purpose);
                Ok(fake(i, if purpose == Purpose::Count { 1000.0 } else { 10.0 }))
            },
            |_, _| {},
        )
        .unwrap();
        let purposes = purposes.into_inner();
        assert_eq!(purposes.len(), 8);
        assert!(purposes[..6].iter().all(|p| *p == Purpose::Measure));
        assert!(purposes[6..].iter().all(|p| *p == Purpose::Count));
        for p in r.points.iter().map(|p| p.as_ref().unwrap()) {
            assert_eq!((p.stats.n, p.stats.mean), (3, 10.0));
            let c = crate::runner::repeat::counting_run(&p.runs).unwrap();
            assert_eq!((c.info.status, c.info.round), (RunStatus::Counting, 3));
        }
    }

    #[test]
    fn precision_adds_runs_until_the_interval_is_narrow() {
        let values = [
            98.0, 102.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0,
        ];
        let mut n = 0;
        let p = Repeat {
            seed: 1,
            ..Repeat::new(2, Some(2.0), Some(Duration::from_secs(60))).unwrap()
        };
        let r = run_rounds(
            1,
            &p,
            false,
            |i, _| {
                n += 1;
                Ok(fake(i, values[(n - 1) % values.len()]))
            },
            |_, _| {},
        )
        .unwrap();
        let r = r.points[0].as_ref().unwrap();
        assert_eq!(r.stopped, Stopped::Precision);
        assert!(r.stats.ci95_pct.unwrap() <= 2.0);
        assert!(r.runs.len() > 2 && r.runs.len() < values.len());
    }

    #[test]
    fn max_time_ends_a_hopeless_search_per_point() {
        let p = Repeat {
            order: Order::Sequential,
            ..Repeat::new(2, Some(0.001), Some(Duration::from_millis(30))).unwrap()
        };
        let mut flip = false;
        let r = run_rounds(
            2,
            &p,
            false,
            |i, _| {
                std::thread::sleep(Duration::from_millis(5));
                flip = !flip;
                Ok(fake(i, if flip { 1.0 } else { 2.0 }))
            },
            |_, _| {},
        )
        .unwrap();
        for p in r.points.iter().map(|p| p.as_ref().unwrap()) {
            assert_eq!(p.stopped, Stopped::MaxTime);
            assert!(p.runs.len() >= 2 && p.runs.len() <= 7, "{}", p.runs.len());
        }
    }

    #[test]
    fn interleaved_precision_pools_the_time_of_points_done_early() {
        // Point 0 is steady (done after 2 runs); point 1 never settles.
        // Pooled, point 1 gets point 0's unused share: about 2 x 60 ms
        // of 5 ms runs, not 60 ms.
        let p = Repeat::new(2, Some(1.0), Some(Duration::from_millis(60))).unwrap();
        let mut flip = false;
        let r = run_rounds(
            2,
            &p,
            false,
            |i, _| {
                std::thread::sleep(Duration::from_millis(5));
                // Point 0 always 1.0; point 1 alternates 1.0 and 2.0.
                if i == 1 {
                    flip = !flip;
                }
                let value = if i == 1 && flip { 2.0 } else { 1.0 };
                Ok(fake(i, value))
            },
            |_, _| {},
        )
        .unwrap();
        let steady = r.points[0].as_ref().unwrap();
        let noisy = r.points[1].as_ref().unwrap();
        assert_eq!((steady.stopped, steady.runs.len()), (Stopped::Precision, 2));
        assert_eq!(noisy.stopped, Stopped::MaxTime);
        // Its runs span more than its own 60 ms share (by their start
        // stamps, so a slow sleep cannot fool the check).
        let span = noisy.runs.last().unwrap().info.start_unix_ns - noisy.runs[0].info.start_unix_ns;
        assert!(span > 60_000_000, "the noisy point got the pool: {span} ns");
    }

    #[test]
    fn an_interrupt_keeps_what_was_measured() {
        let mut n = 0;
        let r = run_rounds(
            3,
            &plan(5, Order::Sequential),
            true,
            |i, _| {
                n += 1;
                Ok(Fake {
                    signal: (n == 7).then_some(Signal::SIGINT),
                    ..fake(i, 1.0)
                })
            },
            |_, _| {},
        )
        .unwrap();
        assert_eq!(r.interrupted, Some(Signal::SIGINT));
        assert_eq!(r.points[0].as_ref().unwrap().stopped, Stopped::Runs);
        let cut = r.points[1].as_ref().unwrap();
        assert_eq!((cut.runs.len(), cut.stopped), (2, Stopped::Interrupted));
        assert!(r.points[2].is_none());
        assert!(
            crate::runner::repeat::counting_run(&cut.runs).is_none(),
            "no counting after an interrupt"
        );
    }
}
