//! What a FUTEX_WAKE costs the waker when a thread really sleeps, measured
//! once per process: a helper thread sleeps on a private futex, the caller
//! wakes it and times the syscall, twenty times, and keeps the median. On a
//! virtual machine the answer is dominated by the inter-processor
//! interrupt (about 10 µs here, against about 0.2 µs for a wake that finds
//! nobody), which is why `adaptive` spins about that long before it
//! decides sleeping is cheaper.

use super::futex::PrivateFutex;
use super::futex_api::Futex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

const SAMPLES: usize = 20;
/// Used when measuring is impossible (no second thread): between bare
/// metal (a few µs) and this VM.
const FALLBACK: Duration = Duration::from_micros(5);

/// The median cost of waking a sleeping thread, measured on first use;
/// `None` where it could not be measured (no second thread, or no wake
/// reached it), so that a report does not pass the fallback off as a
/// measurement.
pub fn measured() -> Option<Duration> {
    static COST: OnceLock<Option<Duration>> = OnceLock::new();
    *COST.get_or_init(measure)
}

/// The measured wake cost, or a fallback where it could not be measured.
pub fn wake_cost() -> Duration {
    measured().unwrap_or(FALLBACK)
}

fn measure() -> Option<Duration> {
    let word = Arc::new(AtomicU32::new(0));
    let done = Arc::new(AtomicU32::new(0));
    let sleeper = {
        let (word, done) = (word.clone(), done.clone());
        std::thread::Builder::new()
            .name("contend-wake-cost".into())
            .spawn(move || {
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
    let mut costs = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        // Give the helper time to go back to sleep, so the wake is real.
        std::thread::sleep(Duration::from_micros(200));
        word.store(1, Ordering::Release);
        let t = Instant::now();
        let woke = PrivateFutex::wake(&word, 1);
        let cost = t.elapsed();
        if woke == 1 {
            costs.push(cost);
        }
    }
    done.store(1, Ordering::Release);
    word.store(1, Ordering::Release);
    PrivateFutex::wake(&word, 1);
    let _ = sleeper.join();
    costs.sort_unstable();
    costs.get(costs.len() / 2).copied()
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
        assert_eq!(measured(), Some(c));
    }
}
