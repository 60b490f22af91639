//! A pthread mutex used as a binary semaphore, as rt-tests' ptsematest
//! does: the mutex starts locked; the waiter blocks in
//! pthread_mutex_lock, and the poster wakes it by unlocking a mutex that
//! another thread locked. The waiter's successful lock leaves it locked
//! again for the next round. Thread mode only (glibc's default mutex does
//! not check the owner on unlock; a process-shared one is not relied on).

use super::{Channel, ChannelConfig};
use crate::sys::pthread::{Kind, Mutex};
use std::io;

/// A locked default-kind mutex.
pub struct HandoffChannel(Mutex);

impl Channel for HandoffChannel {
    const PROCESS_SHARED: bool = false;

    fn new(_: &ChannelConfig) -> io::Result<Self> {
        let mutex = Mutex::new(Kind::Default, false);
        mutex.lock();
        Ok(Self(mutex))
    }

    #[inline]
    fn post(&self) {
        // SAFETY: a default-kind mutex, locked at creation and re-locked by
        // every `wait`; posts and waits alternate, so it is locked here.
        unsafe { self.0.unlock_from_other_thread() };
    }

    #[inline]
    fn wait(&self) {
        self.0.lock();
    }
}
