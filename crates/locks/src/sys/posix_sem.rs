//! An unnamed POSIX semaphore (`sem_t`), boxed at a stable address.

use std::cell::UnsafeCell;

/// A process-private `sem_t`.
pub struct Semaphore {
    raw: Box<UnsafeCell<libc::sem_t>>,
}

// SAFETY: sem_t is designed for concurrent use through the sem_* calls.
unsafe impl Send for Semaphore {}
// SAFETY: as above.
unsafe impl Sync for Semaphore {}

impl Semaphore {
    /// A semaphore with the given initial value.
    pub fn new(value: u32) -> Self {
        // SAFETY: sem_t is plain data; sem_init initialises it below.
        let raw = Box::new(UnsafeCell::new(unsafe { std::mem::zeroed::<libc::sem_t>() }));
        // SAFETY: `raw` is at its final heap address; pshared 0 = threads only.
        let r = unsafe { libc::sem_init(raw.get(), 0, value) };
        assert_eq!(r, 0, "sem_init failed: {}", std::io::Error::last_os_error());
        Self { raw }
    }

    /// Decrements, sleeping while the value is 0 (retries on EINTR).
    #[inline]
    pub fn wait(&self) {
        // SAFETY: initialised semaphore that outlives the call.
        while unsafe { libc::sem_wait(self.raw.get()) } != 0 {
            let e = std::io::Error::last_os_error();
            assert_eq!(e.raw_os_error(), Some(libc::EINTR), "sem_wait failed: {e}");
        }
    }

    /// Decrements if the value is above 0.
    #[inline]
    pub fn try_wait(&self) -> bool {
        // SAFETY: as in `wait`.
        unsafe { libc::sem_trywait(self.raw.get()) == 0 }
    }

    /// Increments, waking a waiter.
    #[inline]
    pub fn post(&self) {
        // SAFETY: as in `wait`.
        let r = unsafe { libc::sem_post(self.raw.get()) };
        debug_assert_eq!(r, 0, "sem_post failed");
    }
}

impl Drop for Semaphore {
    fn drop(&mut self) {
        // SAFETY: no thread can be waiting: that would need a borrow.
        unsafe { libc::sem_destroy(self.raw.get()) };
    }
}
