//! An unnamed POSIX semaphore (`sem_t`), stored inline: glibc's sem_t is
//! plain data (a value and a waiter count), position-independent before
//! first use, so it can also live in a shared mapping (`pshared`).

use std::cell::UnsafeCell;

/// A `sem_t`, private to the process or shared between processes.
pub struct Semaphore {
    raw: UnsafeCell<libc::sem_t>,
}

// SAFETY: sem_t is designed for concurrent use through the sem_* calls.
unsafe impl Send for Semaphore {}
// SAFETY: as above.
unsafe impl Sync for Semaphore {}

impl Semaphore {
    /// A semaphore with the given initial value; `shared` between processes.
    pub fn new(value: u32, shared: bool) -> Self {
        // SAFETY: sem_t is plain data for which all-zero is a valid bit
        // pattern; sem_init initialises it below.
        let zeroed = unsafe { std::mem::zeroed::<libc::sem_t>() };
        let sem = Self { raw: UnsafeCell::new(zeroed) };
        // SAFETY: the semaphore is not yet in use.
        let r = unsafe { libc::sem_init(sem.raw.get(), libc::c_int::from(shared), value) };
        assert_eq!(r, 0, "sem_init failed: {}", std::io::Error::last_os_error());
        sem
    }

    /// Decrements, sleeping while the value is 0 (retries on EINTR).
    #[inline]
    #[link_section = "contend_measured"] // crate docs: Placement
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
