//! glibc's `pthread_mutex_t`, stored inline, in the kinds contend compares:
//! default, adaptive (spins a while before sleeping) and priority-
//! inheritance, each private to the process or shared between processes.
//!
//! Inline storage: glibc's mutex is plain data with no pointer into itself
//! until it is used (the static `PTHREAD_MUTEX_INITIALIZER` form shows it is
//! position-independent), so it may be moved after initialisation and
//! before first use; once in use it stays put because every use borrows it.
//! That lets the same type live in a shared mapping for worker processes.

use std::cell::UnsafeCell;

/// glibc's adaptive mutex type (`PTHREAD_MUTEX_ADAPTIVE_NP`).
const PTHREAD_MUTEX_ADAPTIVE_NP: libc::c_int = 3;
/// `PTHREAD_PRIO_INHERIT` protocol.
const PTHREAD_PRIO_INHERIT: libc::c_int = 1;

/// Which pthread mutex to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The default type.
    Default,
    /// `PTHREAD_MUTEX_ADAPTIVE_NP`.
    Adaptive,
    /// `PTHREAD_PRIO_INHERIT` (FUTEX_LOCK_PI underneath).
    PriorityInherit,
    /// `PTHREAD_MUTEX_ROBUST`: if the owner dies, the next locker gets
    /// EOWNERDEAD (glibc keeps the thread's robust list with
    /// set_robust_list, and the kernel walks it when the thread dies).
    Robust,
    /// `PTHREAD_MUTEX_RECURSIVE`: the owner may lock it again.
    Recursive,
    /// `PTHREAD_MUTEX_ERRORCHECK`: relocking by the owner and unlocking by
    /// another thread fail with EDEADLK and EPERM.
    ErrorCheck,
}

/// An initialised `pthread_mutex_t`.
pub struct Mutex {
    raw: UnsafeCell<libc::pthread_mutex_t>,
}

// SAFETY: a pthread mutex is designed to be shared between threads (and,
// with PTHREAD_PROCESS_SHARED, processes); all access goes through the
// pthread functions, which synchronize internally.
unsafe impl Send for Mutex {}
// SAFETY: as above.
unsafe impl Sync for Mutex {}

fn check(what: &str, r: libc::c_int) {
    assert_eq!(r, 0, "{what} failed: errno {r}");
}

impl Mutex {
    /// A mutex of the given kind; `shared` makes it PTHREAD_PROCESS_SHARED.
    pub fn new(kind: Kind, shared: bool) -> Self {
        let mutex = Self { raw: UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER) };
        let mut attr = std::mem::MaybeUninit::<libc::pthread_mutexattr_t>::uninit();
        // SAFETY: attr is initialised by pthread_mutexattr_init before any
        // other use and destroyed after the mutex is initialised; the mutex
        // is not yet in use.
        unsafe {
            check("pthread_mutexattr_init", libc::pthread_mutexattr_init(attr.as_mut_ptr()));
            match kind {
                Kind::Adaptive => check(
                    "pthread_mutexattr_settype",
                    libc::pthread_mutexattr_settype(attr.as_mut_ptr(), PTHREAD_MUTEX_ADAPTIVE_NP),
                ),
                Kind::PriorityInherit => check(
                    "pthread_mutexattr_setprotocol",
                    libc::pthread_mutexattr_setprotocol(attr.as_mut_ptr(), PTHREAD_PRIO_INHERIT),
                ),
                Kind::Robust => check(
                    "pthread_mutexattr_setrobust",
                    libc::pthread_mutexattr_setrobust(attr.as_mut_ptr(), libc::PTHREAD_MUTEX_ROBUST),
                ),
                Kind::Recursive => check(
                    "pthread_mutexattr_settype",
                    libc::pthread_mutexattr_settype(attr.as_mut_ptr(), libc::PTHREAD_MUTEX_RECURSIVE),
                ),
                Kind::ErrorCheck => check(
                    "pthread_mutexattr_settype",
                    libc::pthread_mutexattr_settype(attr.as_mut_ptr(), libc::PTHREAD_MUTEX_ERRORCHECK),
                ),
                Kind::Default => {}
            }
            if shared {
                check(
                    "pthread_mutexattr_setpshared",
                    libc::pthread_mutexattr_setpshared(attr.as_mut_ptr(), libc::PTHREAD_PROCESS_SHARED),
                );
            }
            check("pthread_mutex_init", libc::pthread_mutex_init(mutex.raw.get(), attr.as_ptr()));
            libc::pthread_mutexattr_destroy(attr.as_mut_ptr());
        }
        mutex
    }

    /// A mutex as `PTHREAD_MUTEX_INITIALIZER` leaves it, never passed to
    /// `pthread_mutex_init` (how most C programs' global mutexes start).
    pub fn statically_initialized() -> Self {
        Self { raw: UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER) }
    }

    /// pthread_mutex_lock's return code, as it is (for checks of the
    /// error-checking kinds).
    pub fn lock_code(&self) -> libc::c_int {
        // SAFETY: an initialised mutex that lives as long as `self`.
        unsafe { libc::pthread_mutex_lock(self.raw.get()) }
    }

    /// pthread_mutex_unlock's return code, as it is: unlike [`Mutex::unlock`]
    /// it may be called by a thread that does not hold the mutex, which an
    /// error-checking mutex refuses with EPERM (and other kinds may not
    /// survive: callers use it on error-checking mutexes, or as the owner).
    pub fn unlock_code(&self) -> libc::c_int {
        // SAFETY: an initialised mutex; for an error-checking one glibc
        // checks the owner before touching anything.
        unsafe { libc::pthread_mutex_unlock(self.raw.get()) }
    }

    /// Locks, blocking as glibc does. Returns true if the previous owner
    /// died holding it (a robust mutex's EOWNERDEAD), after marking the
    /// mutex consistent again.
    #[inline]
    pub fn lock(&self) -> bool {
        // SAFETY: an initialised mutex that lives as long as `self`.
        let r = unsafe { libc::pthread_mutex_lock(self.raw.get()) };
        if r == libc::EOWNERDEAD {
            // SAFETY: we now own the mutex; consistent() makes it usable
            // again (the data it protected is the caller's to repair).
            let c = unsafe { libc::pthread_mutex_consistent(self.raw.get()) };
            assert_eq!(c, 0, "pthread_mutex_consistent failed: errno {c}");
            return true;
        }
        assert_eq!(r, 0, "pthread_mutex_lock failed: errno {r}");
        false
    }

    /// pthread_mutex_trylock's return code, as it is.
    pub fn try_lock_code(&self) -> libc::c_int {
        // SAFETY: an initialised mutex that lives as long as `self`.
        unsafe { libc::pthread_mutex_trylock(self.raw.get()) }
    }

    /// pthread_mutex_timedlock's return code, as it is (`deadline` on
    /// CLOCK_REALTIME; its fields may be out of range on purpose).
    pub fn timed_lock_code(&self, deadline: &libc::timespec) -> libc::c_int {
        // SAFETY: an initialised mutex and a live timespec.
        unsafe { libc::pthread_mutex_timedlock(self.raw.get(), deadline) }
    }

    /// pthread_mutex_clocklock's return code, as it is (glibc 2.30+).
    pub fn clock_lock_code(&self, clock: libc::clockid_t, deadline: &libc::timespec) -> libc::c_int {
        extern "C" {
            fn pthread_mutex_clocklock(
                m: *mut libc::pthread_mutex_t,
                clock: libc::clockid_t,
                deadline: *const libc::timespec,
            ) -> libc::c_int;
        }
        // SAFETY: glibc's function of this C signature, with an
        // initialised mutex and a live timespec.
        unsafe { pthread_mutex_clocklock(self.raw.get(), clock, deadline) }
    }

    /// pthread_mutex_consistent's return code.
    pub fn consistent_code(&self) -> libc::c_int {
        // SAFETY: an initialised mutex; glibc checks the kind and owner.
        unsafe { libc::pthread_mutex_consistent(self.raw.get()) }
    }

    /// Sets a held recursive mutex's count (glibc's `__count`, at offset
    /// 4), so a test can reach the limit at which a further lock fails with
    /// EAGAIN without four billion locks.
    ///
    /// # Safety
    /// The mutex is recursive and the calling thread holds it.
    pub unsafe fn set_recursion_count(&self, count: u32) {
        // SAFETY: offset 4 is glibc's `unsigned int __count`, which only
        // the owner reads and writes (the caller's contract).
        unsafe { *((self.raw.get() as *mut u8).add(4) as *mut u32) = count };
    }

    /// Tries to lock without blocking.
    #[inline]
    pub fn try_lock(&self) -> bool {
        // SAFETY: as in `lock`.
        let r = unsafe { libc::pthread_mutex_trylock(self.raw.get()) };
        match r {
            0 => true,
            libc::EBUSY => false,
            libc::EOWNERDEAD => {
                // SAFETY: we own it now; see `lock`.
                let c = unsafe { libc::pthread_mutex_consistent(self.raw.get()) };
                assert_eq!(c, 0, "pthread_mutex_consistent failed: errno {c}");
                true
            }
            _ => panic!("pthread_mutex_trylock failed: errno {r}"),
        }
    }

    /// The raw mutex, for pthread calls that take one (condition waits).
    pub(crate) fn raw(&self) -> *mut libc::pthread_mutex_t {
        self.raw.get()
    }

    /// Unlocks a default-kind mutex that another thread locked, which is
    /// how ptsematest uses a mutex as a binary semaphore. POSIX leaves this
    /// undefined; glibc's default mutex never looks at the owner on unlock
    /// (it releases the word and wakes one waiter), and it is that
    /// behaviour the `mutex-handoff` primitive measures.
    ///
    /// # Safety
    ///
    /// The mutex must be of [`Kind::Default`] and locked (by any thread).
    #[inline]
    pub unsafe fn unlock_from_other_thread(&self) {
        // SAFETY: an initialised default-kind mutex (caller's contract), for
        // which glibc's unlock path only touches the lock word and futex.
        let r = unsafe { libc::pthread_mutex_unlock(self.raw.get()) };
        debug_assert_eq!(r, 0, "pthread_mutex_unlock failed: errno {r}");
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
