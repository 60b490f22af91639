//! A crew: the workers of one point, threads or forked processes, behind
//! one lifecycle. Spawn them (a refusal aborts the start gate and names
//! the limit), check on them every tick of the window (a worker that ends
//! during the run is an error), and finish them with one grace rule:
//!
//! - after a clean or interrupted window, the family's drain time (how
//!   long a healthy worker may take to leave: a last hold, a last round);
//! - after a failed window, [`FAILED_GRACE`]: the failure may have left
//!   workers stuck (a holder died, a wake-up was lost), and waiting the
//!   full drain for them only delays the error.
//!
//! What happens to a worker still there after the grace depends on what
//! it is. A process is killed, and the error names it. A thread can be
//! neither killed nor joined, so contend takes the emergency exit (remove
//! what it created, print why, exit) rather than hang.

use super::procs::Children;
use super::threads::{join_all, spawn_workers};
use super::{Interrupted, Window};
use crate::measure::UsageSource;
use crate::session::{emergency, signals};
use anyhow::{anyhow, bail, Result};
use locks::gate::Gate;
use nix::sys::signal::Signal;
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

/// How long workers get to leave after a failed window.
pub const FAILED_GRACE: Duration = Duration::from_secs(1);

/// The workers of one point.
pub enum Crew<'scope, T> {
    /// Threads of this process, joined when they finish (`None` once
    /// joined).
    Threads(Option<Vec<ScopedJoinHandle<'scope, T>>>),
    /// Forked worker processes, killed and reaped on drop.
    Processes(Children),
}

/// Where workers that do not leave are stuck, for the error that says so.
pub struct Stuck<'a> {
    /// What they wait on: "the lock", "`futex`".
    pub place: &'a str,
    /// The likely causes, in words.
    pub why: &'a str,
    /// What the shared state shows now (a lock word), if anything.
    pub detail: &'a dyn Fn() -> Option<String>,
}

/// How a window ended, as far as the crew's grace is concerned.
pub struct Close<'a> {
    /// The window's error, if it failed or was interrupted before t1.
    pub cause: Option<&'a anyhow::Error>,
    /// The signal that ended it early, if one did.
    pub interrupted: Option<Signal>,
}

impl<'a> Close<'a> {
    /// Reads a window's outcome.
    pub fn of<C>(window: &'a Result<Window<C>>) -> Self {
        match window {
            Ok(w) => Close { cause: None, interrupted: w.interrupted },
            Err(e) => Close { cause: Some(e), interrupted: e.downcast_ref::<Interrupted>().map(|i| i.0) },
        }
    }

    /// Whether the window failed (an interrupt is not a failure: the
    /// workers get the full drain).
    pub fn failed(&self) -> bool {
        self.cause.is_some() && self.interrupted.is_none()
    }

    /// The one grace rule.
    pub fn grace(&self, drain: Duration) -> Duration {
        if self.failed() {
            FAILED_GRACE
        } else {
            drain
        }
    }
}

impl<'scope, T: Send + 'scope> Crew<'scope, T> {
    /// Starts `n` worker threads running `body(index)` in `scope`.
    pub fn threads<'env, F>(
        scope: &'scope Scope<'scope, 'env>,
        n: usize,
        gate: &'env Gate,
        body: F,
    ) -> Result<Self>
    where
        F: Fn(usize) -> T + Send + Sync + Copy + 'scope,
    {
        spawn_workers(scope, n, gate, body).map(|h| Crew::Threads(Some(h)))
    }

    /// Forks `n` worker processes running `body(index)`, whose return
    /// value is the process's exit status.
    pub fn processes(n: usize, gate: &Gate, body: impl Fn(usize) -> i32) -> Result<Self> {
        Children::spawn(n, gate, body).map(Crew::Processes)
    }

    /// Whose CPU time and context switches the window's probes read.
    pub fn usage(&self) -> UsageSource {
        match self {
            Crew::Threads(_) => UsageSource::SelfProcess,
            Crew::Processes(c) => UsageSource::Children(c.pids().to_vec()),
        }
    }

    /// The worker processes, for a family that acts on them (fault
    /// injection); None for threads.
    pub fn children(&mut self) -> Option<&mut Children> {
        match self {
            Crew::Threads(_) => None,
            Crew::Processes(c) => Some(c),
        }
    }

    /// Fails if a worker ended during the run. A thread that ends has
    /// panicked unless `may_end(index)` says its work was done (`name`
    /// says who it was); a process may end only when its death was
    /// expected (see [`Children::expect_death`]).
    pub fn check(&mut self, may_end: impl Fn(usize) -> bool, name: impl Fn(usize) -> String) -> Result<()> {
        match self {
            Crew::Threads(Some(handles)) => {
                match (0..handles.len()).find(|&i| handles[i].is_finished() && !may_end(i)) {
                    Some(i) => bail!("{} stopped early (it panicked)", name(i)),
                    None => Ok(()),
                }
            }
            Crew::Threads(None) => Ok(()),
            Crew::Processes(c) => c.check(),
        }
    }

    /// After the stop: waits the grace `close` calls for, then returns
    /// what the threads returned (none for processes, which hand their
    /// results back through shared memory or files). A process still
    /// there is killed and named in the error; a thread still there ends
    /// contend through the emergency exit, with `context` and `stuck` in
    /// its message.
    pub fn finish(
        &mut self,
        close: &Close<'_>,
        drain: Duration,
        context: &str,
        stuck: &Stuck<'_>,
    ) -> Result<Vec<T>> {
        let grace = close.grace(drain);
        let detail = || (stuck.detail)().map_or(String::new(), |d| format!("; {d}"));
        match self {
            Crew::Processes(c) => c
                .finish(grace, &format!("{}: {}", stuck.place, stuck.why))
                .map(|()| Vec::new())
                .map_err(|e| anyhow!("{e:#}{}", detail())),
            Crew::Threads(handles) => {
                let unfinished = await_finished(handles.as_deref().unwrap_or_default(), grace);
                if unfinished > 0 {
                    let cause = close.cause.map_or(String::new(), |e| format!("{e:#}; then "));
                    emergency::exit(
                        close.interrupted.map_or(1, signals::exit_status),
                        &format!(
                            "{context}: {cause}{unfinished} worker thread(s) did not stop within {grace:?}: \
                             stuck in {} ({}){}",
                            stuck.place,
                            stuck.why,
                            detail()
                        ),
                    );
                }
                join_all(handles.take().unwrap_or_default())
            }
        }
    }
}

/// Waits up to `grace` for every thread to finish, polling the signal fd
/// every 5 ms so signals are still taken. Returns how many were still
/// running at the deadline (0: all finished).
fn await_finished<T>(handles: &[ScopedJoinHandle<'_, T>], grace: Duration) -> usize {
    let deadline = Instant::now() + grace;
    loop {
        let n = handles.iter().filter(|h| !h.is_finished()).count();
        if n == 0 || Instant::now() >= deadline {
            return n;
        }
        let _ = signals::wait_for(Duration::from_millis(5));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_detail() -> Option<String> {
        None
    }

    const STUCK: Stuck<'static> = Stuck { place: "the test", why: "none", detail: &no_detail };

    #[test]
    fn one_grace_rule() {
        let drain = Duration::from_secs(10);
        let clean = Close { cause: None, interrupted: None };
        assert_eq!(clean.grace(drain), drain);
        let interrupted: Result<Window<()>> = Err(anyhow!(Interrupted(Signal::SIGINT)));
        let close = Close::of(&interrupted);
        assert!(!close.failed());
        assert_eq!(close.interrupted, Some(Signal::SIGINT));
        assert_eq!(close.grace(drain), drain);
        let failed: Result<Window<()>> = Err(anyhow!("worker process 0 exited"));
        let close = Close::of(&failed);
        assert!(close.failed());
        assert_eq!(close.grace(drain), FAILED_GRACE);
    }

    #[test]
    fn threads_hand_back_their_values_in_order() {
        let gate = Gate::default();
        let values = std::thread::scope(|scope| {
            let mut crew = Crew::threads(scope, 3, &gate, |i| i * 2).unwrap();
            assert!(matches!(crew.usage(), UsageSource::SelfProcess));
            assert!(crew.children().is_none());
            let clean = Close { cause: None, interrupted: None };
            crew.finish(&clean, Duration::from_secs(5), "test", &STUCK)
        });
        assert_eq!(values.unwrap(), vec![0, 2, 4]);
    }

    #[test]
    fn a_thread_that_ends_early_is_named_and_its_panic_reported() {
        let gate = Gate::default();
        let (checked, finished) = std::thread::scope(|scope| {
            let mut crew = Crew::threads(scope, 2, &gate, |i| {
                assert!(i == 0, "worker {i} fails on purpose");
            })
            .unwrap();
            // Worker 1 panics at once; wait for it to be finished.
            let checked = loop {
                match crew.check(|_| false, |i| format!("test worker {i}")) {
                    Ok(()) => std::thread::sleep(Duration::from_millis(1)),
                    Err(e) => break e.to_string(),
                }
            };
            let clean = Close { cause: None, interrupted: None };
            (checked, crew.finish(&clean, Duration::from_secs(5), "test", &STUCK))
        });
        assert!(checked.contains("stopped early (it panicked)"), "{checked}");
        let err = finished.unwrap_err().to_string();
        assert!(err.contains("worker thread 1 panicked: worker 1 fails on purpose"), "{err}");
    }
}
