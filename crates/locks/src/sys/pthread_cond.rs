//! An inline `pthread_cond_t`. glibc's condition variable (since 2.25) is
//! plain data with no pointers into itself, so it may be moved before first
//! use and may live in a shared mapping (PTHREAD_PROCESS_SHARED).

use super::pthread::Mutex;
use std::cell::UnsafeCell;

/// An initialised condition variable.
pub struct Cond {
    raw: UnsafeCell<libc::pthread_cond_t>,
}

// SAFETY: a condition variable is made to be used by many threads (and,
// when process-shared, processes) at once through the pthread calls.
unsafe impl Send for Cond {}
// SAFETY: as above.
unsafe impl Sync for Cond {}

impl Cond {
    /// A condition variable; `shared` makes it PTHREAD_PROCESS_SHARED.
    pub fn new(shared: bool) -> Self {
        let cond = Self { raw: UnsafeCell::new(libc::PTHREAD_COND_INITIALIZER) };
        let mut attr = std::mem::MaybeUninit::<libc::pthread_condattr_t>::uninit();
        // SAFETY: attr is initialised before use and destroyed after the
        // condition variable is initialised; the condvar is not yet in use.
        unsafe {
            let r = libc::pthread_condattr_init(attr.as_mut_ptr());
            assert_eq!(r, 0, "pthread_condattr_init failed: errno {r}");
            if shared {
                let r = libc::pthread_condattr_setpshared(attr.as_mut_ptr(), libc::PTHREAD_PROCESS_SHARED);
                assert_eq!(r, 0, "pthread_condattr_setpshared failed: errno {r}");
            }
            let r = libc::pthread_cond_init(cond.raw.get(), attr.as_ptr());
            assert_eq!(r, 0, "pthread_cond_init failed: errno {r}");
            libc::pthread_condattr_destroy(attr.as_mut_ptr());
        }
        cond
    }

    /// A private condition variable whose timed waits use CLOCK_MONOTONIC
    /// (`monotonic`) or the default CLOCK_REALTIME.
    pub fn with_clock(monotonic: bool) -> Self {
        let cond = Self { raw: UnsafeCell::new(libc::PTHREAD_COND_INITIALIZER) };
        if !monotonic {
            return cond;
        }
        let mut attr = std::mem::MaybeUninit::<libc::pthread_condattr_t>::uninit();
        // SAFETY: as in `new`.
        unsafe {
            let r = libc::pthread_condattr_init(attr.as_mut_ptr());
            assert_eq!(r, 0, "pthread_condattr_init failed: errno {r}");
            let r = libc::pthread_condattr_setclock(attr.as_mut_ptr(), libc::CLOCK_MONOTONIC);
            assert_eq!(r, 0, "pthread_condattr_setclock failed: errno {r}");
            let r = libc::pthread_cond_init(cond.raw.get(), attr.as_ptr());
            assert_eq!(r, 0, "pthread_cond_init failed: errno {r}");
            libc::pthread_condattr_destroy(attr.as_mut_ptr());
        }
        cond
    }

    /// Waits for a signal for at most `timeout`, on the clock the condition
    /// variable was made with; true if the wait timed out.
    ///
    /// # Safety
    ///
    /// As [`Cond::wait`]; and it was made by [`Cond::with_clock`] with
    /// `monotonic` (the deadline is taken on that clock).
    pub unsafe fn wait_timeout(&self, mutex: &Mutex, timeout: std::time::Duration, monotonic: bool) -> bool {
        let clock = if monotonic { libc::CLOCK_MONOTONIC } else { libc::CLOCK_REALTIME };
        let at = super::clock::ns_on(clock).saturating_add(timeout.as_nanos() as i64);
        let deadline = libc::timespec { tv_sec: at / 1_000_000_000, tv_nsec: at % 1_000_000_000 };
        // SAFETY: both objects are initialised and outlive the call; the
        // caller holds the mutex.
        let r = unsafe { libc::pthread_cond_timedwait(self.raw.get(), mutex.raw(), &deadline) };
        assert!(r == 0 || r == libc::ETIMEDOUT, "pthread_cond_timedwait failed: errno {r}");
        r == libc::ETIMEDOUT
    }

    /// Wakes every waiter.
    pub fn broadcast(&self) {
        // SAFETY: an initialised condition variable that outlives the call.
        let r = unsafe { libc::pthread_cond_broadcast(self.raw.get()) };
        assert_eq!(r, 0, "pthread_cond_broadcast failed: errno {r}");
    }

    /// Waits for a signal, releasing `mutex` while asleep.
    ///
    /// # Safety
    ///
    /// The calling thread must hold `mutex`, and every waiter on this
    /// condition variable must use the same mutex.
    pub unsafe fn wait(&self, mutex: &Mutex) {
        // SAFETY: both objects are initialised and outlive the call; the
        // caller holds the mutex (contract above).
        let r = unsafe { libc::pthread_cond_wait(self.raw.get(), mutex.raw()) };
        assert_eq!(r, 0, "pthread_cond_wait failed: errno {r}");
    }

    /// Wakes one waiter, if any.
    pub fn signal(&self) {
        // SAFETY: an initialised condition variable that outlives the call.
        let r = unsafe { libc::pthread_cond_signal(self.raw.get()) };
        assert_eq!(r, 0, "pthread_cond_signal failed: errno {r}");
    }
}

impl Drop for Cond {
    fn drop(&mut self) {
        // SAFETY: nobody can be waiting: that needs a borrow of `self`.
        unsafe { libc::pthread_cond_destroy(self.raw.get()) };
    }
}
