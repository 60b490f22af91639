//! The start gate, in shared memory: workers (threads or processes) arrive
//! and sleep on a futex; the coordinator opens the gate once all have
//! arrived, or aborts it when starting a worker failed, so the ones already
//! started return instead of waiting forever.

use crate::primitive::{AtomicU32, Ordering};
use crate::sys::futex::SharedFutex;
use crate::sys::{Futex, WAKE_ALL};

const WAITING: u32 = 0;
const OPEN: u32 = 1;
const ABORTED: u32 = 2;

/// A one-shot start gate that works across processes (shared futex).
#[derive(Debug, Default)]
pub struct Gate {
    arrived: AtomicU32,
    state: AtomicU32,
}

impl Gate {
    /// Called by a worker: registers its arrival and sleeps until the gate
    /// opens (`true`) or is aborted (`false`).
    pub fn arrive_and_wait(&self) -> bool {
        self.arrived.fetch_add(1, Ordering::AcqRel);
        SharedFutex::wake(&self.arrived, WAKE_ALL);
        loop {
            match self.state.load(Ordering::Acquire) {
                WAITING => {
                    SharedFutex::wait(&self.state, WAITING);
                }
                state => return state == OPEN,
            }
        }
    }

    /// How many workers have arrived.
    pub fn arrived(&self) -> u32 {
        self.arrived.load(Ordering::Acquire)
    }

    /// Whether the gate has been opened (the workers run).
    pub fn is_open(&self) -> bool {
        self.state.load(Ordering::Acquire) == OPEN
    }

    /// Releases every waiting worker to run.
    pub fn open(&self) {
        self.set(OPEN);
    }

    /// Releases every waiting worker to return without running.
    pub fn abort(&self) {
        self.set(ABORTED);
    }

    fn set(&self, state: u32) {
        let _ = self.state.compare_exchange(WAITING, state, Ordering::AcqRel, Ordering::Acquire);
        SharedFutex::wake(&self.state, WAKE_ALL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_releases_everyone_and_abort_says_so() {
        for (open, expected) in [(true, true), (false, false)] {
            let gate = Gate::default();
            std::thread::scope(|s| {
                let workers: Vec<_> = (0..3).map(|_| s.spawn(|| gate.arrive_and_wait())).collect();
                while gate.arrived() < 3 {
                    std::thread::yield_now();
                }
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
    fn opening_wakes_every_sleeper() {
        // Regression: a wake count of u32::MAX reaches the kernel as -1 and
        // releases a single waiter; with 8 sleepers that hangs the test.
        let gate = Gate::default();
        std::thread::scope(|s| {
            let workers: Vec<_> = (0..8).map(|_| s.spawn(|| gate.arrive_and_wait())).collect();
            while gate.arrived() < 8 {
                std::thread::yield_now();
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
            gate.open();
            assert!(workers.into_iter().all(|w| w.join().unwrap()));
        });
    }

    #[test]
    fn the_first_decision_sticks() {
        let gate = Gate::default();
        gate.abort();
        gate.open();
        assert!(!gate.arrive_and_wait());
    }
}
