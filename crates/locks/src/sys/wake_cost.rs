//! What a FUTEX_WAKE costs the waker when a thread really sleeps on another
//! CPU, measured once per process: two helper threads, pinned to two
//! different CPUs, one asleep on a private futex and one waking it and
//! timing the syscall, `SAMPLES` times; the median is the estimate.
//!
//! Why pinned: unpinned, each wake found the sleeper either on the waker's
//! CPU (about 1.4 µs here: no inter-processor interrupt) or on the other
//! (about 3.8 µs), in proportions that changed from one process to the
//! next, so a median of 20 read anywhere between 3.9 and 6.3 µs across 12
//! invocations, and `adaptive`'s budgets moved with it. The cross-CPU
//! wake is the one a lock pays when it wakes a sleeper for an idle CPU,
//! and pinned, the samples of one process form a single mode.

use super::futex::PrivateFutex;
use super::futex_api::Futex;
use super::sched;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Wakes timed: 40 at 200 µs apart take about 10 ms at start-up.
const SAMPLES: usize = 40;

/// Attempts allowed per kept sample (a wake that found the sleeper awake
/// is not kept).
const ATTEMPTS_PER_SAMPLE: usize = 25;

/// Used when measuring is impossible (no second thread): between bare
/// metal (a few µs) and this VM.
pub const FALLBACK: Duration = Duration::from_micros(5);

/// The wake cost as measured, with what it was measured from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WakeCost {
    /// The median of the samples: the estimate.
    pub median: Duration,
    /// The 25th and 75th percentiles: how tightly the samples agree.
    pub quartiles: (Duration, Duration),
    /// How many wakes were timed (those that found the sleeper asleep).
    pub samples: usize,
    /// The waker's and the sleeper's CPU, or `None` where fewer than two
    /// CPUs are allowed (or pinning failed) and the scheduler placed them.
    pub cpus: Option<(usize, usize)>,
}

/// The wake cost, measured on first use; `None` where it could not be
/// measured (no second thread, or no wake reached it), so that a report
/// does not pass the fallback off as a measurement.
pub fn estimate() -> Option<WakeCost> {
    *COST.get_or_init(measure)
}

static COST: OnceLock<Option<WakeCost>> = OnceLock::new();

/// Takes `median` as this process's wake cost instead of measuring it,
/// unless it was measured or assumed already (then false). For a process
/// that cannot afford the measurement's helper threads and 10 ms: a
/// program under `contend run`, whose interposer is handed the cost
/// `contend` measured.
pub fn assume(median: Duration) -> bool {
    let given = WakeCost { median, quartiles: (median, median), samples: 0, cpus: None };
    COST.set(Some(given)).is_ok()
}

/// The median cost of waking a sleeping thread, if it was measured.
pub fn measured() -> Option<Duration> {
    estimate().map(|c| c.median)
}

/// The measured wake cost, or a fallback where it could not be measured.
pub fn wake_cost() -> Duration {
    measured().unwrap_or(FALLBACK)
}

/// Two different allowed CPUs, waker first, if there are two.
fn two_cpus() -> Option<(usize, usize)> {
    let cpus = sched::allowed_cpus().ok()?;
    Some((*cpus.first()?, *cpus.get(1)?))
}

fn measure() -> Option<WakeCost> {
    let cpus = two_cpus();
    let word = Arc::new(AtomicU32::new(0));
    let done = Arc::new(AtomicU32::new(0));
    let pinned = Arc::new(AtomicBool::new(true));
    let sleeper = {
        let (word, done, pinned) = (word.clone(), done.clone(), pinned.clone());
        std::thread::Builder::new()
            .name("contend-wake-sleeper".into())
            .spawn(move || {
                pin(cpus.map(|(_, sleeper)| sleeper), &pinned);
                while done.load(Ordering::Acquire) == 0 {
                    // Sleep while the word is 0; the waker sets 1.
                    if word.load(Ordering::Acquire) == 0 {
                        PrivateFutex::wait(&word, 0);
                    }
                    word.store(0, Ordering::Release);
                }
            })
            .ok()?
    };
    // The waker is a thread of its own too, so that the caller's affinity
    // is left alone.
    let waker = {
        let (word, pinned) = (word.clone(), pinned.clone());
        std::thread::Builder::new().name("contend-wake-waker".into()).spawn(move || {
            pin(cpus.map(|(waker, _)| waker), &pinned);
            time_wakes(&word)
        })
    };
    let costs = waker.ok().and_then(|w| w.join().ok());
    done.store(1, Ordering::Release);
    word.store(1, Ordering::Release);
    PrivateFutex::wake(&word, 1);
    let _ = sleeper.join();
    let pinned = pinned.load(Ordering::Relaxed);
    summarize(costs?, cpus.filter(|_| pinned))
}

/// Pins the calling helper to `cpu`, if there is one; a refusal clears
/// `pinned`, so that the report does not claim a placement it lacks.
fn pin(cpu: Option<usize>, pinned: &AtomicBool) {
    if let Some(cpu) = cpu {
        if sched::pin_current_thread(&[cpu]).is_err() {
            pinned.store(false, Ordering::Relaxed);
        }
    }
}

/// Times wakes of the thread asleep on `word` until `SAMPLES` of them
/// found it asleep (only those are kept), within `SAMPLES` x
/// [`ATTEMPTS_PER_SAMPLE`] attempts. A count, not a time: on a loaded
/// machine the sleeper may not be back in FUTEX_WAIT 200 µs after a wake,
/// and 40 fixed attempts then found it awake every time (no measurement at
/// all, seen in the test suite with both CPUs busy).
fn time_wakes(word: &AtomicU32) -> Vec<Duration> {
    let mut costs = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES * ATTEMPTS_PER_SAMPLE {
        if costs.len() == SAMPLES {
            break;
        }
        // The sleeper stores 0 once it has taken the last wake; until then
        // a wake would find it awake.
        while word.load(Ordering::Acquire) != 0 {
            std::thread::yield_now();
        }
        // Give it time to go back to sleep, so the wake is real.
        std::thread::sleep(Duration::from_micros(200));
        word.store(1, Ordering::Release);
        let t = Instant::now();
        let woke = PrivateFutex::wake(word, 1);
        let cost = t.elapsed();
        if woke == 1 {
            costs.push(cost);
        }
    }
    costs
}

/// The median and quartiles of the samples; `None` if there are none.
fn summarize(mut costs: Vec<Duration>, cpus: Option<(usize, usize)>) -> Option<WakeCost> {
    if costs.is_empty() {
        return None;
    }
    costs.sort_unstable();
    let at = |q: usize| costs[(costs.len() - 1) * q / 4];
    Some(WakeCost { median: at(2), quartiles: (at(1), at(3)), samples: costs.len(), cpus })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wake_cost_is_measured_and_plausible() {
        let c = wake_cost();
        assert!(c > Duration::ZERO && c < Duration::from_millis(10), "{c:?}");
        assert_eq!(wake_cost(), c, "measured once");
        // A test process can always start a second thread.
        let e = estimate().expect("measured");
        assert_eq!(e.median, c);
        assert!(e.quartiles.0 <= e.median && e.median <= e.quartiles.1, "{e:?}");
        assert!(e.samples >= 1 && e.samples <= SAMPLES);
        if let Some((waker, sleeper)) = e.cpus {
            assert_ne!(waker, sleeper);
        }
    }

    #[test]
    fn the_summary_takes_the_middle_and_the_quartiles() {
        let us = |n: u64| Duration::from_micros(n);
        let s = summarize(vec![us(9), us(1), us(5), us(3), us(7)], Some((0, 1))).unwrap();
        assert_eq!((s.median, s.quartiles, s.samples), (us(5), (us(3), us(7)), 5));
        assert_eq!(summarize(Vec::new(), None), None);
    }
}
