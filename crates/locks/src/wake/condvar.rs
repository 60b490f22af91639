//! A pthread mutex, a condition variable and a flag: post sets the flag
//! and signals with the mutex held (the textbook form); wait sleeps on the
//! condition until the flag is set, then clears it. This is what most
//! application code uses to hand work to another thread, so it measures
//! the mutex round trips a wake-up drags along, on top of the futex wake.

use super::{Channel, ChannelConfig};
use crate::sys::pthread::{Kind, Mutex};
use crate::sys::pthread_cond::Cond;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Mutex + condition variable + pending flag.
pub struct CondChannel {
    mutex: Mutex,
    cond: Cond,
    // Only read and written with `mutex` held, which orders it; an atomic
    // only so the type is Sync without an UnsafeCell.
    pending: AtomicBool,
}

impl Channel for CondChannel {
    const PROCESS_SHARED: bool = true;

    fn new(config: &ChannelConfig) -> io::Result<Self> {
        Ok(Self {
            mutex: Mutex::new(Kind::Default, config.shared),
            cond: Cond::new(config.shared),
            pending: AtomicBool::new(false),
        })
    }

    #[inline]
    fn post(&self) {
        self.mutex.lock();
        self.pending.store(true, Relaxed);
        self.cond.signal();
        // SAFETY: locked just above by this thread.
        unsafe { self.mutex.unlock() };
    }

    #[inline]
    fn wait(&self) {
        self.mutex.lock();
        while !self.pending.load(Relaxed) {
            // SAFETY: this thread holds `mutex`, the only mutex ever used
            // with `cond`.
            unsafe { self.cond.wait(&self.mutex) };
        }
        self.pending.store(false, Relaxed);
        // SAFETY: held since the lock above (cond.wait re-acquires it).
        unsafe { self.mutex.unlock() };
    }
}
