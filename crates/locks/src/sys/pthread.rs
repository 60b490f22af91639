//! glibc's `pthread_mutex_t`, boxed so it never moves after initialisation.

use std::cell::UnsafeCell;

/// An initialised `pthread_mutex_t` at a stable heap address.
pub struct Mutex {
    raw: Box<UnsafeCell<libc::pthread_mutex_t>>,
}

// SAFETY: a pthread mutex is designed to be shared between threads; all
// access goes through the pthread functions, which synchronize internally.
unsafe impl Send for Mutex {}
// SAFETY: as above.
unsafe impl Sync for Mutex {}

impl Mutex {
    /// A default (`PTHREAD_MUTEX_NORMAL`-like, non-robust, private) mutex.
    pub fn new_default() -> Self {
        Self {
            raw: Box::new(UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER)),
        }
    }

    /// Locks, blocking as glibc does.
    #[inline]
    pub fn lock(&self) {
        // SAFETY: `raw` points to an initialised mutex that lives as long as
        // `self`.
        let r = unsafe { libc::pthread_mutex_lock(self.raw.get()) };
        assert_eq!(r, 0, "pthread_mutex_lock failed: errno {r}");
    }

    /// Unlocks.
    ///
    /// # Safety
    ///
    /// The calling thread must hold the mutex.
    #[inline]
    pub unsafe fn unlock(&self) {
        // SAFETY: initialised mutex held by this thread (caller's contract).
        let r = unsafe { libc::pthread_mutex_unlock(self.raw.get()) };
        debug_assert_eq!(r, 0, "pthread_mutex_unlock failed: errno {r}");
    }
}

impl Drop for Mutex {
    fn drop(&mut self) {
        // SAFETY: we own the mutex and nobody can hold it once we are being
        // dropped (holding it requires a borrow of `self`).
        unsafe { libc::pthread_mutex_destroy(self.raw.get()) };
    }
}
