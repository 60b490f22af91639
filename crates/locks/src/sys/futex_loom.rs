//! A loom model of the futex: wait parks the thread only if the word still
//! holds the expected value, checked under the same lock a wake takes, so a
//! wake that follows a change of the word can never be missed; wake unparks
//! at most `n` sleepers. One wait queue serves every address, which only
//! adds wake-ups a real futex could also deliver spuriously.

use super::futex_api::{Futex, WaitOutcome};
use crate::primitive::{AtomicU32, Ordering};
use loom::sync::{Condvar, Mutex};

loom::lazy_static! {
    static ref QUEUE: (Mutex<()>, Condvar) = (Mutex::new(()), Condvar::new());
}

/// The futex as loom sees it.
#[derive(Debug, Default, Clone, Copy)]
pub struct LoomFutex;

impl Futex for LoomFutex {
    fn wait(word: &AtomicU32, expected: u32) -> WaitOutcome {
        let guard = QUEUE.0.lock().unwrap();
        if word.load(Ordering::SeqCst) != expected {
            return WaitOutcome::ValueChanged;
        }
        drop(QUEUE.1.wait(guard).unwrap());
        WaitOutcome::Woken
    }

    fn wake(_word: &AtomicU32, n: u32) -> u32 {
        let _guard = QUEUE.0.lock().unwrap();
        if n == 1 {
            QUEUE.1.notify_one();
        } else {
            QUEUE.1.notify_all();
        }
        0
    }
}
