//! glibc's `pthread_rwlock_t`, stored inline, reader- or writer-preferring.
//!
//! Inline storage, as for [`crate::sys::pthread::Mutex`]: the lock is plain
//! data with no pointer into itself (PTHREAD_RWLOCK_INITIALIZER is all
//! zeros), so it may move before first use.

use std::cell::UnsafeCell;

/// glibc's `PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP`: waiting writers
/// hold back new readers. (`PTHREAD_RWLOCK_PREFER_WRITER_NP`, 1, is
/// accepted but behaves as the reader-preferring default, 0.)
const PREFER_WRITER_NONRECURSIVE: libc::c_int = 2;

/// An initialised `pthread_rwlock_t`.
pub struct RwLock {
    raw: UnsafeCell<libc::pthread_rwlock_t>,
}

// SAFETY: a pthread rwlock is made to be shared between threads; every
// access goes through the pthread functions, which synchronize.
unsafe impl Send for RwLock {}
// SAFETY: as above.
unsafe impl Sync for RwLock {}

fn check(what: &str, r: libc::c_int) {
    assert_eq!(r, 0, "{what} failed: errno {r}");
}

impl RwLock {
    /// A rwlock that prefers writers (new readers wait behind a waiting
    /// writer) or, with `prefer_writers` false, glibc's default, readers.
    pub fn new(prefer_writers: bool) -> Self {
        let lock = Self { raw: UnsafeCell::new(libc::PTHREAD_RWLOCK_INITIALIZER) };
        let mut attr = std::mem::MaybeUninit::<libc::pthread_rwlockattr_t>::uninit();
        // SAFETY: attr is initialised before any other use and destroyed
        // after the lock is initialised; the lock is not yet in use.
        unsafe {
            check("pthread_rwlockattr_init", libc::pthread_rwlockattr_init(attr.as_mut_ptr()));
            if prefer_writers {
                check(
                    "pthread_rwlockattr_setkind_np",
                    libc::pthread_rwlockattr_setkind_np(attr.as_mut_ptr(), PREFER_WRITER_NONRECURSIVE),
                );
            }
            check("pthread_rwlock_init", libc::pthread_rwlock_init(lock.raw.get(), attr.as_ptr()));
            libc::pthread_rwlockattr_destroy(attr.as_mut_ptr());
        }
        lock
    }

    /// pthread_rwlock_wrlock.
    #[inline]
    pub fn write(&self) {
        // SAFETY: an initialised rwlock that lives as long as `self`.
        let r = unsafe { libc::pthread_rwlock_wrlock(self.raw.get()) };
        assert_eq!(r, 0, "pthread_rwlock_wrlock failed: errno {r}");
    }

    /// pthread_rwlock_rdlock.
    #[inline]
    pub fn read(&self) {
        // SAFETY: as above.
        let r = unsafe { libc::pthread_rwlock_rdlock(self.raw.get()) };
        assert_eq!(r, 0, "pthread_rwlock_rdlock failed: errno {r}");
    }

    /// pthread_rwlock_trywrlock: true if it took the lock.
    #[inline]
    pub fn try_write(&self) -> bool {
        // SAFETY: as above.
        unsafe { libc::pthread_rwlock_trywrlock(self.raw.get()) == 0 }
    }

    /// pthread_rwlock_unlock, for either mode.
    ///
    /// # Safety
    ///
    /// The calling thread holds the lock, shared or exclusive.
    #[inline]
    pub unsafe fn unlock(&self) {
        // SAFETY: the caller holds it (this function's contract).
        let r = unsafe { libc::pthread_rwlock_unlock(self.raw.get()) };
        debug_assert_eq!(r, 0, "pthread_rwlock_unlock failed: errno {r}");
    }
}

impl Drop for RwLock {
    fn drop(&mut self) {
        // SAFETY: nobody holds a lock that is being dropped (`&mut self`).
        unsafe { libc::pthread_rwlock_destroy(self.raw.get()) };
    }
}
