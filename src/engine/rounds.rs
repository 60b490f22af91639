//! The rounds of a sweep: the one place that decides which point runs
//! next. With `--order interleaved` each round runs every unfinished point
//! once in a fresh random order (Abedi and Brecht's randomized multiple
//! interleaved trials), so a burst of steal on a noisy host lands on every
//! variant alike instead of on whichever point happened to run then, and
//! runs of the same round can be paired. Each run is screened for steal and
//! re-made when disturbed; with futex counting in separate runs, one more
//! run per point is made at the end with the tracepoints on.

use crate::engine::point_outcome;
use crate::engine::repeat::{Order, Repeat, Repeated, RunInfo, RunRecord, RunStatus, Stopped, MAX_RERUNS};
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
/// point i; `after(i, &sample)` sees every run as it ends, its status set
/// (progress counts a rejected run as one more to make).
/// `counting` adds the counting run per point after the measured ones.
pub fn run_rounds<S: RunRecord>(
    points: usize,
    plan: &Repeat,
    counting: bool,
    run: impl FnMut(usize, Purpose) -> Result<S>,
    after: impl FnMut(usize, &S),
) -> Result<Rounds<S>> {
    run_rounds_from(points, plan, counting, None, run, after)
}

/// As [`run_rounds`], with point `first` (if any) run first in the first
/// round, before the shuffled rest: a baseline whose run bounds the others'
/// (`contend run`'s time limit is a multiple of glibc's execution).
pub fn run_rounds_from<S: RunRecord>(
    points: usize,
    plan: &Repeat,
    counting: bool,
    first: Option<usize>,
    run: impl FnMut(usize, Purpose) -> Result<S>,
    after: impl FnMut(usize, &S),
) -> Result<Rounds<S>> {
    let mut rounds = Engine {
        plan,
        counting,
        first,
        run,
        after,
        state: (0..points)
            .map(|_| PointState { runs: Vec::new(), spent: Duration::ZERO, stopped: None })
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
    /// Run first in the first round.
    first: Option<usize>,
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
            let mut active: Vec<usize> =
                (0..self.state.len()).filter(|&i| self.state[i].stopped.is_none()).collect();
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
            if let Some(at) =
                self.first.filter(|_| round == 0).and_then(|f| active.iter().position(|&i| i == f))
            {
                let first = active.remove(at);
                active.insert(0, first);
            }
            for remake in 0..=MAX_RERUNS {
                for &i in &active {
                    // A re-made round measures again the points it reopened.
                    if remake > 0 && self.state[i].stopped.is_some() {
                        continue;
                    }
                    if let Some(sig) = self.measure(i, round)? {
                        return Ok(Some(sig));
                    }
                }
                if remake == MAX_RERUNS || !self.round_disturbed(&active, round) {
                    break;
                }
            }
        }
        Ok(None)
    }

    /// Judges the round when some of its kept runs were too short to
    /// judge alone: their windows together, so that every point of the
    /// round gets the same verdict (a baseline of 0.1 s runs was never
    /// screened while a slower variant's runs were, and each ratio then
    /// compared a screened side with an unscreened one). A disturbed
    /// round's kept runs are marked rejected and their points measured
    /// again in the same round.
    fn round_disturbed(&mut self, active: &[usize], round: u32) -> bool {
        let Some(max) = self.plan.max_steal_pct else { return false };
        let kept = |s: &S| s.info().round == round && s.info().status == RunStatus::Measured;
        let runs: Vec<&S> =
            active.iter().flat_map(|&i| self.state[i].runs.iter().filter(|s| kept(s))).collect();
        if !runs.iter().any(|s| s.disturbance_pct().is_none()) {
            return false;
        }
        let windows: Vec<crate::measure::cpu::Window> = runs.iter().filter_map(|s| s.window()).collect();
        if windows.len() < runs.len() {
            return false;
        }
        let disturbed =
            crate::measure::cpu::Window::pooled_disturbance_pct(&windows).is_some_and(|d| d > max);
        if disturbed {
            for &i in active {
                for s in self.state[i].runs.iter_mut().filter(|s| kept(s)) {
                    s.info_mut().status = RunStatus::Rejected;
                }
                if matches!(self.state[i].stopped, Some(Stopped::Runs | Stopped::Precision)) {
                    self.state[i].stopped = None;
                }
            }
        }
        disturbed
    }

    /// One counting run per point that has a measured one, after them all.
    fn count(&mut self) -> Result<Option<Signal>> {
        let mut order: Vec<usize> = (0..self.state.len())
            .filter(|&i| !self.state[i].runs.is_empty() && self.state[i].stopped != Some(Stopped::Failed))
            .collect();
        if self.plan.order == Order::Interleaved {
            self.rng.shuffle(&mut order);
        }
        for i in order {
            let round = self.state[i].runs.iter().map(|r| r.info().round + 1).max().unwrap_or(0);
            let (sample, sig) = self.attempt(i, round, Purpose::Count)?;
            if let Some(mut s) = sample {
                if s.failed() {
                    s.info_mut().status = RunStatus::Failed;
                    self.state[i].stopped = Some(Stopped::Failed);
                }
                (self.after)(i, &s);
                self.state[i].runs.push(s);
            }
            if let Some(sig) = sig.or_else(crate::session::signals::latched) {
                return Ok(Some(sig));
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
            if s.failed() && sig.is_none() {
                // No point running it again: the failure is the result.
                s.info_mut().status = RunStatus::Failed;
                (self.after)(i, &s);
                self.state[i].runs.push(s);
                self.state[i].stopped = Some(Stopped::Failed);
                return Ok(crate::session::signals::latched());
            }
            let disturbed = self.plan.max_steal_pct.zip(s.disturbance_pct()).is_some_and(|(max, d)| d > max);
            let reject = sig.is_none() && disturbed && attempt < MAX_RERUNS;
            if reject {
                s.info_mut().status = RunStatus::Rejected;
            }
            if sig.is_some() {
                s.info_mut().status = RunStatus::CutShort;
            }
            (self.after)(i, &s);
            self.state[i].runs.push(s);
            // A signal read during the drain after a complete window: the
            // run stands, and the sweep stops.
            if let Some(sig) = sig.or_else(crate::session::signals::latched) {
                self.state[i].stopped = Some(Stopped::Interrupted);
                return Ok(Some(sig));
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
        let start_unix_ns = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
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
        let values: Vec<f64> = crate::engine::repeat::measured(&state.runs).map(RunRecord::metric).collect();
        if values.len() < self.plan.least() {
            return None;
        }
        let Some(target) = self.plan.precision_pct else {
            return Some(Stopped::Runs);
        };
        if crate::measure::stats::Stats::of(&values).ci95_pct.is_some_and(|p| p <= target) {
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
mod tests;
