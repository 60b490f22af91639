//! A counting semaphore on a futex that counts its own syscalls, so
//! `contend alloc` can tell its own futex calls (the producer/consumer
//! handoffs) from the allocator's and libc's.

use crate::primitive::{AtomicU32, AtomicU64, Ordering};
use crate::sys::futex::PrivateFutex;
use crate::sys::Futex;

/// A semaphore whose value lives in one futex word.
#[derive(Debug, Default)]
pub struct CountingSem {
    value: AtomicU32,
    sleepers: AtomicU32,
    syscalls: AtomicU64,
}

impl CountingSem {
    /// Adds one and wakes a sleeper if any. The add and the sleeper check
    /// are SeqCst, as is the waiter's announce-then-check: a store followed
    /// by a load on another location needs it (Dekker), or a post could
    /// miss a waiter that is about to sleep.
    pub fn post(&self) {
        self.value.fetch_add(1, Ordering::SeqCst);
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            self.syscalls.fetch_add(1, Ordering::Relaxed);
            PrivateFutex::wake(&self.value, 1);
        }
    }

    /// Takes one, sleeping while the value is 0.
    pub fn wait(&self) {
        loop {
            let v = self.value.load(Ordering::Acquire);
            if v > 0 {
                if self.value.compare_exchange(v, v - 1, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                    return;
                }
                continue;
            }
            self.sleepers.fetch_add(1, Ordering::SeqCst);
            if self.value.load(Ordering::SeqCst) == 0 {
                self.syscalls.fetch_add(1, Ordering::Relaxed);
                PrivateFutex::wait(&self.value, 0);
            }
            self.sleepers.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Futex syscalls this semaphore made.
    pub fn syscalls(&self) -> u64 {
        self.syscalls.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handoffs_complete_and_are_counted() {
        let (a, b) = (CountingSem::default(), CountingSem::default());
        std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..1000 {
                    a.wait();
                    b.post();
                }
            });
            for _ in 0..1000 {
                a.post();
                b.wait();
            }
        });
        assert_eq!(a.value.load(Ordering::Relaxed), 0);
        assert!(a.syscalls() + b.syscalls() > 0, "ping-pong between threads sleeps sometimes");
    }
}
