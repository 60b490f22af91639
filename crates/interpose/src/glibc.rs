//! glibc's own pthread functions, found with `dlsym(RTLD_NEXT, ...)`: the
//! mutexes the interposer leaves to glibc (recursive, error-checking,
//! robust, PI, priority-protected, process-shared; and every mutex under
//! `--lock pthread`), glibc's condition variables under `--lock
//! pthread`, its rwlocks and spinlocks, which nothing swaps, and the
//! loader's dlclose. Looked up on first use, not in a constructor:
//! another library's constructor may lock a mutex before this library's
//! runs.

use libc::{c_char, c_int, clockid_t, pthread_cond_t, pthread_condattr_t, pthread_mutex_t};
use libc::{pthread_mutexattr_t, pthread_rwlock_t, pthread_spinlock_t, timespec};
use std::sync::OnceLock;

type Mutex = unsafe extern "C" fn(*mut pthread_mutex_t) -> c_int;
type MutexInit = unsafe extern "C" fn(*mut pthread_mutex_t, *const pthread_mutexattr_t) -> c_int;
type MutexTimed = unsafe extern "C" fn(*mut pthread_mutex_t, *const timespec) -> c_int;
type MutexClock = unsafe extern "C" fn(*mut pthread_mutex_t, clockid_t, *const timespec) -> c_int;
type Cond = unsafe extern "C" fn(*mut pthread_cond_t) -> c_int;
type CondInit = unsafe extern "C" fn(*mut pthread_cond_t, *const pthread_condattr_t) -> c_int;
type CondWait = unsafe extern "C" fn(*mut pthread_cond_t, *mut pthread_mutex_t) -> c_int;
type CondTimed = unsafe extern "C" fn(*mut pthread_cond_t, *mut pthread_mutex_t, *const timespec) -> c_int;
type CondClock =
    unsafe extern "C" fn(*mut pthread_cond_t, *mut pthread_mutex_t, clockid_t, *const timespec) -> c_int;
type RwLock = unsafe extern "C" fn(*mut pthread_rwlock_t) -> c_int;
type RwTimed = unsafe extern "C" fn(*mut pthread_rwlock_t, *const timespec) -> c_int;
type RwClock = unsafe extern "C" fn(*mut pthread_rwlock_t, clockid_t, *const timespec) -> c_int;
type Spin = unsafe extern "C" fn(*mut pthread_spinlock_t) -> c_int;
type DlClose = unsafe extern "C" fn(*mut libc::c_void) -> c_int;

/// glibc's functions.
pub struct Real {
    pub mutex_lock: Mutex,
    pub mutex_trylock: Mutex,
    pub mutex_unlock: Mutex,
    pub mutex_init: MutexInit,
    pub mutex_destroy: Mutex,
    pub mutex_timedlock: MutexTimed,
    pub mutex_clocklock: MutexClock,
    pub cond_init: CondInit,
    pub cond_destroy: Cond,
    pub cond_signal: Cond,
    pub cond_broadcast: Cond,
    pub cond_wait: CondWait,
    pub cond_timedwait: CondTimed,
    pub cond_clockwait: CondClock,
    pub rwlock_rdlock: RwLock,
    pub rwlock_wrlock: RwLock,
    pub rwlock_tryrdlock: RwLock,
    pub rwlock_trywrlock: RwLock,
    pub rwlock_timedrdlock: RwTimed,
    pub rwlock_timedwrlock: RwTimed,
    pub rwlock_clockrdlock: RwClock,
    pub rwlock_clockwrlock: RwClock,
    pub spin_lock: Spin,
    pub spin_trylock: Spin,
    pub dlclose: DlClose,
}

/// The next definition of `name` (a NUL-terminated symbol) after this
/// library: glibc's. A missing one is fatal: the program could not run.
fn next(name: &[u8]) -> *mut libc::c_void {
    // SAFETY: `name` is NUL-terminated (every caller passes a b"...\0"
    // literal); RTLD_NEXT is a valid pseudo-handle.
    let f = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr() as *const c_char) };
    if f.is_null() {
        crate::say::die(&format!("glibc has no {}", String::from_utf8_lossy(&name[..name.len() - 1])));
    }
    f
}

macro_rules! real {
    ($name:literal as $ty:ty) => {
        // SAFETY: dlsym found glibc's function of this name, whose C
        // signature is `$ty`.
        unsafe { std::mem::transmute::<*mut libc::c_void, $ty>(next(concat!($name, "\0").as_bytes())) }
    };
}

/// glibc's functions, looked up on the first call.
pub fn real() -> &'static Real {
    static REAL: OnceLock<Real> = OnceLock::new();
    REAL.get_or_init(|| Real {
        mutex_lock: real!("pthread_mutex_lock" as Mutex),
        mutex_trylock: real!("pthread_mutex_trylock" as Mutex),
        mutex_unlock: real!("pthread_mutex_unlock" as Mutex),
        mutex_init: real!("pthread_mutex_init" as MutexInit),
        mutex_destroy: real!("pthread_mutex_destroy" as Mutex),
        mutex_timedlock: real!("pthread_mutex_timedlock" as MutexTimed),
        mutex_clocklock: real!("pthread_mutex_clocklock" as MutexClock),
        cond_init: real!("pthread_cond_init" as CondInit),
        cond_destroy: real!("pthread_cond_destroy" as Cond),
        cond_signal: real!("pthread_cond_signal" as Cond),
        cond_broadcast: real!("pthread_cond_broadcast" as Cond),
        cond_wait: real!("pthread_cond_wait" as CondWait),
        cond_timedwait: real!("pthread_cond_timedwait" as CondTimed),
        cond_clockwait: real!("pthread_cond_clockwait" as CondClock),
        rwlock_rdlock: real!("pthread_rwlock_rdlock" as RwLock),
        rwlock_wrlock: real!("pthread_rwlock_wrlock" as RwLock),
        rwlock_tryrdlock: real!("pthread_rwlock_tryrdlock" as RwLock),
        rwlock_trywrlock: real!("pthread_rwlock_trywrlock" as RwLock),
        rwlock_timedrdlock: real!("pthread_rwlock_timedrdlock" as RwTimed),
        rwlock_timedwrlock: real!("pthread_rwlock_timedwrlock" as RwTimed),
        rwlock_clockrdlock: real!("pthread_rwlock_clockrdlock" as RwClock),
        rwlock_clockwrlock: real!("pthread_rwlock_clockwrlock" as RwClock),
        spin_lock: real!("pthread_spin_lock" as Spin),
        spin_trylock: real!("pthread_spin_trylock" as Spin),
        dlclose: real!("dlclose" as DlClose),
    })
}
