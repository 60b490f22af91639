//! Worker processes: forked after the shared arena exists, watched while
//! they run, stopped and reaped on every path. Dropping `Children` kills and
//! reaps whatever is still alive, so no exit from the coordinator, error
//! included, leaves a worker behind.

use crate::session::limits::Limits;
use crate::session::signals;
use anyhow::{bail, Result};
use locks::gate::Gate;
use locks::sys::process::fork_worker;
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitid, waitpid, Id, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use std::time::{Duration, Instant};

/// The worker processes of one point.
#[derive(Debug)]
pub struct Children {
    pids: Vec<Pid>,
    reaped: Vec<bool>,
    expected: Option<usize>,
    started: Instant,
}

fn describe(status: WaitStatus) -> String {
    match status {
        WaitStatus::Exited(_, code) => format!("exited with status {code}"),
        WaitStatus::Signaled(_, sig, core) => {
            format!("was killed by {sig}{}", if core { " (core dumped)" } else { "" })
        }
        other => format!("{other:?}"),
    }
}

/// Whether `pid` is stopped (state T, or t: traced), from /proc/PID/stat.
fn is_stopped(pid: Pid) -> bool {
    crate::measure::children::stat_fields(pid.as_raw())
        .and_then(|f| f.into_iter().next())
        .is_some_and(|state| state == "T" || state == "t")
}

impl Children {
    /// Forks `n` workers running `body(index)`. If a fork fails, the gate
    /// is aborted so the started ones return, and they are reaped.
    pub fn spawn(n: usize, gate: &Gate, body: impl Fn(usize) -> i32) -> Result<Self> {
        let mut children = Self {
            pids: Vec::with_capacity(n),
            reaped: Vec::with_capacity(n),
            expected: None,
            started: Instant::now(),
        };
        for i in 0..n {
            match fork_worker(|| body(i)) {
                Ok(pid) => {
                    children.pids.push(Pid::from_raw(pid));
                    children.reaped.push(false);
                }
                Err(e) => {
                    gate.abort();
                    children.reap_within(Duration::from_secs(5), "the start gate");
                    bail!(
                        "could not start worker process {} of {n}: {e} ({})",
                        i + 1,
                        Limits::read().describe()
                    );
                }
            }
        }
        Ok(children)
    }

    /// The pids, in worker order.
    pub fn pids(&self) -> &[Pid] {
        &self.pids
    }

    /// Worker `i` is meant to die (fault injection): its SIGKILL is not an
    /// error. Returns whether it is dead already.
    pub fn expect_death(&mut self, i: usize) -> bool {
        self.expected = Some(i);
        if !self.reaped[i] {
            if let Ok(WaitStatus::Signaled(_, Signal::SIGKILL, _)) =
                waitpid(self.pids[i], Some(WaitPidFlag::WNOHANG))
            {
                self.reaped[i] = true;
            }
        }
        self.reaped[i]
    }

    /// Fails if any worker has exited: during a run none may, except one
    /// whose death was expected. Called every tick of the window, so it
    /// first asks the kernel once whether any child has exited, without
    /// reaping it (waitid(P_ALL, WNOHANG | WNOWAIT)); only then does it
    /// look at each worker. Polling every worker each tick would be 4000
    /// syscalls a second with 1000 workers, inside the measured window; and
    /// reaping "any child" would steal the children of other owners in the
    /// same process.
    pub fn check(&mut self) -> Result<()> {
        let any_exited = waitid(Id::All, WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT);
        if matches!(any_exited, Ok(WaitStatus::StillAlive) | Err(nix::errno::Errno::ECHILD)) {
            return Ok(());
        }
        for (i, pid) in self.pids.iter().enumerate() {
            if self.reaped[i] {
                continue;
            }
            match waitpid(*pid, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::StillAlive) => {}
                Ok(WaitStatus::Signaled(_, Signal::SIGKILL, _)) if self.expected == Some(i) => {
                    self.reaped[i] = true;
                }
                Ok(status) => {
                    self.reaped[i] = true;
                    bail!(
                        "worker process {i} (pid {pid}) {} during the run, {:.2} s after the workers started",
                        describe(status),
                        self.started.elapsed().as_secs_f64()
                    );
                }
                Err(e) => bail!("waiting for worker process {i} (pid {pid}): {e}"),
            }
        }
        Ok(())
    }

    /// After the stop flag: waits up to `grace` for every worker to exit
    /// cleanly, then kills the rest. Errors name workers that failed or had
    /// to be killed, saying where the ones that did not stop are `stuck`
    /// ("the lock: a lost wake-up, or ...").
    pub fn finish(&mut self, grace: Duration, stuck: &str) -> Result<()> {
        let failures = self.reap_within(grace, stuck);
        if failures.is_empty() {
            Ok(())
        } else {
            bail!("{}", failures.join("; "))
        }
    }

    fn reap_within(&mut self, grace: Duration, stuck_in: &str) -> Vec<String> {
        let deadline = Instant::now() + grace;
        let mut failures = Vec::new();
        loop {
            for (i, pid) in self.pids.iter().enumerate() {
                if self.reaped[i] {
                    continue;
                }
                match waitpid(*pid, Some(WaitPidFlag::WNOHANG)) {
                    Ok(WaitStatus::StillAlive) => {}
                    Ok(WaitStatus::Exited(_, 0)) => self.reaped[i] = true,
                    Ok(status) => {
                        self.reaped[i] = true;
                        failures.push(format!("worker process {i} (pid {pid}) {}", describe(status)));
                    }
                    Err(_) => self.reaped[i] = true,
                }
            }
            let alive = self.reaped.iter().filter(|r| !**r).count();
            if alive == 0 {
                return failures;
            }
            if Instant::now() >= deadline {
                // A stopped process (SIGSTOP, a debugger) is not stuck in
                // the lock, whatever else it is: say which is which.
                let stopped: Vec<String> = (0..self.pids.len())
                    .filter(|&i| !self.reaped[i] && is_stopped(self.pids[i]))
                    .map(|i| format!("{i} (pid {})", self.pids[i]))
                    .collect();
                if !stopped.is_empty() {
                    failures.push(format!(
                        "worker process(es) {} were stopped (SIGSTOP or a tracer) and could not exit",
                        stopped.join(", ")
                    ));
                }
                let stuck = alive - stopped.len();
                if stuck > 0 {
                    failures.push(format!(
                        "{stuck} worker process(es) did not stop within {grace:?} (stuck in {stuck_in})"
                    ));
                }
                failures.push(format!("all {alive} were killed"));
                self.kill_all();
                return failures;
            }
            let _ = signals::wait_for(Duration::from_millis(5));
        }
    }

    fn kill_all(&mut self) {
        for (i, pid) in self.pids.iter().enumerate() {
            if !self.reaped[i] {
                let _ = kill(*pid, Signal::SIGKILL);
            }
        }
        for (i, pid) in self.pids.iter().enumerate() {
            if !self.reaped[i] {
                let _ = waitpid(*pid, None);
                self.reaped[i] = true;
            }
        }
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        self.kill_all();
    }
}
