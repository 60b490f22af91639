//! The start gate: workers arrive and wait; the coordinator opens the gate
//! once all have arrived, or aborts it when starting a worker failed, so the
//! ones already started return instead of waiting forever (a plain barrier
//! would deadlock there).

use std::sync::{Condvar, Mutex};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Waiting,
    Open,
    Aborted,
}

/// A one-shot start gate for a known number of workers.
#[derive(Debug)]
pub struct StartGate {
    state: Mutex<(usize, Status)>,
    changed: Condvar,
}

impl Default for StartGate {
    fn default() -> Self {
        Self {
            state: Mutex::new((0, Status::Waiting)),
            changed: Condvar::new(),
        }
    }
}

impl StartGate {
    /// Called by a worker: registers its arrival and blocks until the gate
    /// opens (`true`) or is aborted (`false`).
    pub fn arrive_and_wait(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.0 += 1;
        self.changed.notify_all();
        while state.1 == Status::Waiting {
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        state.1 == Status::Open
    }

    /// Called by the coordinator: blocks until `n` workers have arrived.
    pub fn wait_for(&self, n: usize) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while state.0 < n {
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Releases every waiting worker to run.
    pub fn open(&self) {
        self.set(Status::Open);
    }

    /// Releases every waiting worker to return without running.
    pub fn abort(&self) {
        self.set(Status::Aborted);
    }

    fn set(&self, status: Status) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.1 == Status::Waiting {
            state.1 = status;
        }
        self.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_releases_everyone_and_abort_says_so() {
        for (open, expected) in [(true, true), (false, false)] {
            let gate = StartGate::default();
            std::thread::scope(|s| {
                let workers: Vec<_> = (0..3).map(|_| s.spawn(|| gate.arrive_and_wait())).collect();
                gate.wait_for(3);
                if open {
                    gate.open()
                } else {
                    gate.abort()
                }
                for w in workers {
                    assert_eq!(w.join().unwrap(), expected);
                }
            });
        }
    }

    #[test]
    fn the_first_decision_sticks() {
        let gate = StartGate::default();
        gate.abort();
        gate.open();
        assert!(!gate.arrive_and_wait());
    }
}
