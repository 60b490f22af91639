//! A loom model of the futex: wait parks the thread only if the word still
//! holds the expected value, checked under the same lock a wake takes, so a
//! wake that follows a change of the word can never be missed; wake marks
//! and unparks at most `n` sleepers, oldest first.
//!
//! Built on park/unpark with a per-sleeper "woken" flag rather than on a
//! condition variable: a loom thread can return from park early (an unpark
//! token left over from blocking on a mutex), and a condvar's waiter list
//! would then hold it twice, letting a later notify_one go to the stale
//! entry while a real sleeper is never woken. With the flag, an early
//! return just parks again, and each wake reaches exactly one sleeper.
//! One queue serves every address, which only adds wake-ups a real futex
//! could also deliver spuriously.

use super::futex_api::{Futex, WaitOutcome};
use crate::primitive::{AtomicBool, AtomicU32, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread::{self, Thread};
use std::collections::VecDeque;

type Sleeper = (Thread, Arc<AtomicBool>);

loom::lazy_static! {
    static ref SLEEPERS: Mutex<VecDeque<Sleeper>> = Mutex::new(VecDeque::new());
}

/// The futex as loom sees it.
#[derive(Debug, Default, Clone, Copy)]
pub struct LoomFutex;

impl Futex for LoomFutex {
    fn wait(word: &AtomicU32, expected: u32) -> WaitOutcome {
        let woken = Arc::new(AtomicBool::new(false));
        {
            let mut sleepers = SLEEPERS.lock().unwrap();
            if word.load(Ordering::SeqCst) != expected {
                return WaitOutcome::ValueChanged;
            }
            sleepers.push_back((thread::current(), woken.clone()));
        }
        while !woken.load(Ordering::SeqCst) {
            thread::park();
        }
        WaitOutcome::Woken
    }

    fn wake(_word: &AtomicU32, n: u32) -> u32 {
        let mut sleepers = SLEEPERS.lock().unwrap();
        let mut woke = 0;
        while woke < n {
            let Some((sleeper, woken)) = sleepers.pop_front() else {
                break;
            };
            woken.store(true, Ordering::SeqCst);
            sleeper.unpark();
            woke += 1;
        }
        woke
    }
}
