//! `libcontend_interpose.so`: the LD_PRELOAD library of `contend run`.
//!
//! It defines `pthread_mutex_{init, destroy, lock, trylock, timedlock,
//! clocklock, unlock}`, `dlclose` (to note what a profile's report will
//! need to name), `pthread_cond_{init, destroy, signal, broadcast,
//! wait, timedwait, clockwait}`, the acquisitions of `pthread_rwlock_*`
//! (`{,try,timed,clock}{rd,wr}lock`) and `pthread_spin_{lock,trylock}`, so
//! an unmodified dynamically linked program calls them instead of
//! glibc's. Then, per process (`mode.rs`):
//!
//! - **Swap** (`CONTEND_RUN_LOCK`): a plain private mutex (normal,
//!   default or adaptive type; statically initialized or not) holds the
//!   chosen lock from `locks` in its first 16 bytes ([`locks::in_mutex`]
//!   lists the locks that fit). Recursive, error-checking, robust, PI,
//!   priority-protected and process-shared mutexes go to glibc, which
//!   honours their type, and their acquisitions are counted. Condition
//!   variables are this library's (`cond.rs`), because glibc's re-take the
//!   mutex through glibc internals.
//! - **Per-mutex swap** (`CONTEND_RUN_MUTEXES`): as a swap, but only for
//!   the mutexes chosen by address, each with its own lock; the rest and
//!   their condition variables are glibc's (`chosen.rs`).
//! - **Profile** (`CONTEND_RUN_PROFILE=1`): every acquisition is counted
//!   per mutex, with its wait and hold (`profile/`), and per rwlock and
//!   spinlock, readers and writers apart (`rwlock.rs`; they are never
//!   swapped, and without a profile go straight to glibc).
//!
//! Not interposed, and so untouched: glibc's internal locks (stdio,
//! malloc arenas, the loader), the unlocks of rwlocks and spinlocks,
//! C11 `mtx_*`/`cnd_*` (glibc calls its internal functions for them, so
//! they stay glibc's throughout), and statically linked programs (the
//! loader ignores LD_PRELOAD for them and for set-uid programs: `contend
//! run` notices that no report came back). Cancellation inside a
//! condition wait is not supported under a swapped lock.
//!
//! The entry points that record a call site are naked two-instruction
//! trampolines: they pass the caller's return address as an extra
//! argument and jump to the Rust function, so the site costs nothing.

mod chosen;
mod clock;
mod cond;
mod delay;
mod glibc;
mod held;
mod mode;
mod modules;
mod mutex;
mod plain;
mod profile;
mod report;
mod route;
mod rundir;
mod rwlock;
mod sampling;
mod say;
mod slots;
mod speedup;
mod stack;
mod swapped;
mod tally;

/// What `contend run` looks for in a file given as `--interposer` before
/// it preloads it into a program: this library, speaking this report
/// format (a file without it is refused, not blamed on the program). It
/// must read `{MAGIC} report format {VERSION}` of
/// `locks::in_mutex::report` (a unit test checks).
#[used]
#[unsafe(no_mangle)]
pub static CONTEND_INTERPOSE_MARK: [u8; 33] = *b"contend-interpose report format 8";

use libc::{c_int, clockid_t, pthread_cond_t, pthread_condattr_t, pthread_mutex_t, pthread_mutexattr_t};
use libc::{pthread_rwlock_t, pthread_spinlock_t, timespec};
use mode::Mode;
use route::lock_mutex;
use rwlock::RwCall;

/// Defines the exported `$name` as a trampoline that passes the return
/// address (the call site) in the argument register after the last real
/// argument, then jumps to `$target`.
macro_rules! trampoline {
    ($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*) => $target:ident, x86_64: $x86:literal, aarch64: $arm:literal) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// The C contract of the pthread function of this name.
        #[unsafe(no_mangle)]
        #[unsafe(naked)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> c_int {
            #[cfg(target_arch = "x86_64")]
            core::arch::naked_asm!(concat!("mov ", $x86, ", [rsp]"), "jmp {f}", f = sym $target);
            #[cfg(target_arch = "aarch64")]
            core::arch::naked_asm!(concat!("mov ", $arm, ", x30"), "b {f}", f = sym $target);
        }
    };
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("the interposer's trampolines are written for x86_64 and aarch64");

trampoline!(
    /// pthread_mutex_lock.
    pthread_mutex_lock(m: *mut pthread_mutex_t) => mutex_lock_at, x86_64: "rsi", aarch64: "x1");
trampoline!(
    /// pthread_mutex_trylock.
    pthread_mutex_trylock(m: *mut pthread_mutex_t) => mutex_trylock_at, x86_64: "rsi", aarch64: "x1");
trampoline!(
    /// pthread_mutex_timedlock.
    pthread_mutex_timedlock(m: *mut pthread_mutex_t, t: *const timespec) => mutex_timedlock_at,
    x86_64: "rdx", aarch64: "x2");
trampoline!(
    /// pthread_mutex_clocklock.
    pthread_mutex_clocklock(m: *mut pthread_mutex_t, c: clockid_t, t: *const timespec) => mutex_clocklock_at,
    x86_64: "rcx", aarch64: "x3");
trampoline!(
    /// pthread_cond_wait.
    pthread_cond_wait(c: *mut pthread_cond_t, m: *mut pthread_mutex_t) => cond_wait_at,
    x86_64: "rdx", aarch64: "x2");
trampoline!(
    /// pthread_cond_timedwait.
    pthread_cond_timedwait(c: *mut pthread_cond_t, m: *mut pthread_mutex_t, t: *const timespec)
        => cond_timedwait_at, x86_64: "rcx", aarch64: "x3");
trampoline!(
    /// pthread_cond_clockwait.
    pthread_cond_clockwait(c: *mut pthread_cond_t, m: *mut pthread_mutex_t, k: clockid_t, t: *const timespec)
        => cond_clockwait_at, x86_64: "r8", aarch64: "x4");

unsafe extern "C" fn mutex_lock_at(m: *mut pthread_mutex_t, site: usize) -> c_int {
    let mode = mode::current();
    // SAFETY: the program's contract with pthread_mutex_lock.
    unsafe {
        if mode.plain() {
            mutex::acquire_plain(m, mode)
        } else {
            lock_any(m, site, mode)
        }
    }
}

/// The lock of a process that profiles, chooses per mutex or delays: out
/// of line, so that the plain path keeps few registers.
///
/// # Safety
/// The program's contract with pthread_mutex_lock.
#[inline(never)]
unsafe fn lock_any(m: *mut pthread_mutex_t, site: usize, mode: Mode) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { lock_mutex(m, site, mode) }
}

unsafe extern "C" fn mutex_trylock_at(m: *mut pthread_mutex_t, site: usize) -> c_int {
    let mode = mode::current();
    // SAFETY: the program's contract with pthread_mutex_trylock.
    unsafe {
        if mode.profiling() {
            profile::try_lock(m, site, mode)
        } else {
            let rc = mutex::try_acquire(m, mode);
            if mode.speeding() && mutex::holds(rc) {
                speedup::acquired(m, None);
                speedup::nest_begin(m);
            }
            rc
        }
    }
}

unsafe fn timed(m: *mut pthread_mutex_t, c: Option<clockid_t>, t: *const timespec, site: usize) -> c_int {
    let mode = mode::current();
    // SAFETY: the program's contract with the timed lock.
    unsafe {
        if mode.profiling() {
            profile::timed_lock(m, site, mode, c, t)
        } else if mode.speeding() {
            let nested = speedup::nest_begin(m);
            speedup::pay();
            let since = speedup::blocking();
            let rc = mutex::timed_acquire(m, mode, c, t);
            if mutex::holds(rc) {
                speedup::acquired(m, Some(since));
            } else {
                speedup::nest_end(nested);
            }
            rc
        } else {
            mutex::timed_acquire(m, mode, c, t)
        }
    }
}

unsafe extern "C" fn mutex_timedlock_at(m: *mut pthread_mutex_t, t: *const timespec, site: usize) -> c_int {
    // SAFETY: the program's contract with pthread_mutex_timedlock.
    unsafe { timed(m, None, t, site) }
}

unsafe extern "C" fn mutex_clocklock_at(
    m: *mut pthread_mutex_t,
    c: clockid_t,
    t: *const timespec,
    site: usize,
) -> c_int {
    // SAFETY: the program's contract with pthread_mutex_clocklock.
    unsafe { timed(m, Some(c), t, site) }
}

trampoline!(
    /// pthread_mutex_unlock (its site: where a hold that others waited
    /// for ended).
    pthread_mutex_unlock(m: *mut pthread_mutex_t) => mutex_unlock_at, x86_64: "rsi", aarch64: "x1");

/// pthread_mutex_unlock. Its short path, a plain swapped process's unlock
/// of a mutex this thread took by the swapped lock, makes no call but the
/// tail one into the lock's unlock, so it saves no register: everything
/// before the releasing store lengthens the critical section for every
/// waiter, and a spinning waiter's exchange may take the lock's cache
/// line away in between, so that the store misses twice.
unsafe extern "C" fn mutex_unlock_at(m: *mut pthread_mutex_t, site: usize) -> c_int {
    if let Some(unlock) = plain::unlock() {
        if held::let_go(m as usize) {
            // SAFETY: the program's contract; the thread took `m` by the
            // process's swapped lock (plain::unlock is set only in a
            // plain swapped process) and holds it.
            return unsafe { unlock(m) };
        }
    }
    // SAFETY: the program's contract.
    unsafe { route::unlock_rest(m, site) }
}

/// pthread_mutex_init.
///
/// # Safety
/// The C contract of pthread_mutex_init.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_mutex_init(m: *mut pthread_mutex_t, a: *const pthread_mutexattr_t) -> c_int {
    // SAFETY: the program's contract.
    unsafe { mutex::init(m, a, mode::current()) }
}

/// pthread_mutex_destroy.
///
/// # Safety
/// The C contract of pthread_mutex_destroy.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_mutex_destroy(m: *mut pthread_mutex_t) -> c_int {
    // SAFETY: the program's contract.
    unsafe { mutex::destroy(m, mode::current()) }
}

/// dlclose: under a profile, the module is noted before it goes, so the
/// report can still name the call sites it held (modules.rs).
///
/// # Safety
/// The C contract of dlclose.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlclose(handle: *mut libc::c_void) -> c_int {
    if mode::current().profiling() {
        // SAFETY: the program's handle, before it is closed.
        unsafe { modules::closing(handle) };
    }
    // SAFETY: the program's contract, passed on to the loader.
    unsafe { (glibc::real().dlclose)(handle) }
}

/// Whether `c` is glibc's condition variable: always when nothing is
/// swapped, never when every plain mutex is, and unless a wait with a
/// chosen mutex made it this library's under a per-mutex choice.
fn glibc_cond(mode: Mode, c: *mut pthread_cond_t) -> bool {
    mode.glibc_only() || (mode.per_mutex() && !chosen::is_ours(c))
}

unsafe fn cond_wait_any(
    c: *mut pthread_cond_t,
    m: *mut pthread_mutex_t,
    deadline: Option<(Option<clockid_t>, *const timespec)>,
    site: usize,
) -> c_int {
    let mode = mode::current();
    if mode.profiling() {
        profile::cond_wait_begins(m, site);
    }
    // Under a per-mutex choice, the mutex decides: a wait with a chosen
    // one makes the condition variable this library's.
    // SAFETY: the program's contract: `m` is live and held, `c` is live.
    let ours = !mode.glibc_only() && (!mode.per_mutex() || unsafe { mutex::is_swapped(m, mode) });
    if ours {
        // SAFETY: the program's contract with the condition wait (no
        // thread waits on `c` with an unchosen mutex: chosen.rs).
        unsafe {
            if mode.per_mutex() {
                cond::adopt(c);
            }
            return cond::wait(c, m, deadline, site, mode);
        }
    }
    let real = glibc::real();
    // SAFETY: the program's contract, passed on to glibc.
    let wait = || unsafe {
        match deadline {
            None => (real.cond_wait)(c, m),
            Some((None, t)) => (real.cond_timedwait)(c, m, t),
            Some((Some(k), t)) => (real.cond_clockwait)(c, m, k, t),
        }
    };
    let rc = if mode.profiling() {
        profile::around_glibc_wait(m, site, wait)
    } else if mode.speeding() {
        // SAFETY: the program's contract: it holds `m` to wait with it.
        speedup::releasing(m, !unsafe { mutex::none_asleep(m, mode) });
        let since = speedup::blocking();
        let rc = wait();
        speedup::woken(c, m, since, rc);
        rc
    } else {
        wait()
    };
    // glibc re-took the mutex inside the wait (timed out or not): a
    // critical section begins.
    if mode.delaying() && (mutex::holds(rc) || rc == libc::ETIMEDOUT) {
        delay::entered(m);
    }
    rc
}

unsafe extern "C" fn cond_wait_at(c: *mut pthread_cond_t, m: *mut pthread_mutex_t, site: usize) -> c_int {
    // SAFETY: the program's contract.
    unsafe { cond_wait_any(c, m, None, site) }
}

unsafe extern "C" fn cond_timedwait_at(
    c: *mut pthread_cond_t,
    m: *mut pthread_mutex_t,
    t: *const timespec,
    site: usize,
) -> c_int {
    // SAFETY: the program's contract.
    unsafe { cond_wait_any(c, m, Some((None, t)), site) }
}

unsafe extern "C" fn cond_clockwait_at(
    c: *mut pthread_cond_t,
    m: *mut pthread_mutex_t,
    k: clockid_t,
    t: *const timespec,
    site: usize,
) -> c_int {
    // SAFETY: the program's contract.
    unsafe { cond_wait_any(c, m, Some((Some(k), t)), site) }
}

/// pthread_cond_init.
///
/// # Safety
/// The C contract of pthread_cond_init.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_cond_init(c: *mut pthread_cond_t, a: *const pthread_condattr_t) -> c_int {
    // SAFETY: the program's contract.
    unsafe {
        let mode = mode::current();
        if mode.glibc_only() || mode.per_mutex() {
            (glibc::real().cond_init)(c, a)
        } else {
            cond::init(c, a)
        }
    }
}

/// pthread_cond_destroy.
///
/// # Safety
/// The C contract of pthread_cond_destroy.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_cond_destroy(c: *mut pthread_cond_t) -> c_int {
    if glibc_cond(mode::current(), c) {
        // SAFETY: the program's contract, passed on to glibc.
        unsafe { (glibc::real().cond_destroy)(c) }
    } else {
        // This library's condition variable holds no resource.
        0
    }
}

/// pthread_cond_signal.
///
/// # Safety
/// The C contract of pthread_cond_signal.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_cond_signal(c: *mut pthread_cond_t) -> c_int {
    // SAFETY: the program's contract.
    unsafe {
        let mode = mode::current();
        if mode.speeding() {
            speedup::signalling(c);
        }
        if glibc_cond(mode, c) {
            (glibc::real().cond_signal)(c)
        } else {
            cond::signal(c, false)
        }
    }
}

/// pthread_cond_broadcast.
///
/// # Safety
/// The C contract of pthread_cond_broadcast.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_cond_broadcast(c: *mut pthread_cond_t) -> c_int {
    // SAFETY: the program's contract.
    unsafe {
        let mode = mode::current();
        if mode.speeding() {
            speedup::signalling(c);
        }
        if glibc_cond(mode, c) {
            (glibc::real().cond_broadcast)(c)
        } else {
            cond::signal(c, true)
        }
    }
}

/// Defines the rwlock entry points: trampolines to one function each that
/// passes the side (write or not) and the call to [`rwlock::rwlock`].
macro_rules! rwlock_calls {
    ($($name:ident / $at:ident, $write:literal: ($($arg:ident: $ty:ty),*) => $call:expr, x86_64: $x86:literal, aarch64: $arm:literal;)*) => {
        $(
            trampoline!(
                #[doc = concat!("`", stringify!($name), "`.")]
                $name(rw: *mut pthread_rwlock_t $(, $arg: $ty)*) => $at, x86_64: $x86, aarch64: $arm);

            unsafe extern "C" fn $at(rw: *mut pthread_rwlock_t, $($arg: $ty,)* site: usize) -> c_int {
                // SAFETY: the program's contract with this call.
                unsafe { rwlock::rwlock(rw, $write, $call, site, mode::current().profiling()) }
            }
        )*
    };
}

rwlock_calls! {
    pthread_rwlock_rdlock / rdlock_at, false: () => RwCall::Lock, x86_64: "rsi", aarch64: "x1";
    pthread_rwlock_wrlock / wrlock_at, true: () => RwCall::Lock, x86_64: "rsi", aarch64: "x1";
    pthread_rwlock_tryrdlock / tryrdlock_at, false: () => RwCall::Try, x86_64: "rsi", aarch64: "x1";
    pthread_rwlock_trywrlock / trywrlock_at, true: () => RwCall::Try, x86_64: "rsi", aarch64: "x1";
    pthread_rwlock_timedrdlock / timedrdlock_at, false: (t: *const timespec) => RwCall::Timed(t),
        x86_64: "rdx", aarch64: "x2";
    pthread_rwlock_timedwrlock / timedwrlock_at, true: (t: *const timespec) => RwCall::Timed(t),
        x86_64: "rdx", aarch64: "x2";
    pthread_rwlock_clockrdlock / clockrdlock_at, false: (c: clockid_t, t: *const timespec) => RwCall::Clock(c, t),
        x86_64: "rcx", aarch64: "x3";
    pthread_rwlock_clockwrlock / clockwrlock_at, true: (c: clockid_t, t: *const timespec) => RwCall::Clock(c, t),
        x86_64: "rcx", aarch64: "x3";
}

trampoline!(
    /// pthread_spin_lock.
    pthread_spin_lock(s: *mut pthread_spinlock_t) => spin_lock_at, x86_64: "rsi", aarch64: "x1");
trampoline!(
    /// pthread_spin_trylock.
    pthread_spin_trylock(s: *mut pthread_spinlock_t) => spin_trylock_at, x86_64: "rsi", aarch64: "x1");

unsafe extern "C" fn spin_lock_at(s: *mut pthread_spinlock_t, site: usize) -> c_int {
    // SAFETY: the program's contract with pthread_spin_lock.
    unsafe { rwlock::spin(s, false, site, mode::current().profiling()) }
}

unsafe extern "C" fn spin_trylock_at(s: *mut pthread_spinlock_t, site: usize) -> c_int {
    // SAFETY: the program's contract with pthread_spin_trylock.
    unsafe { rwlock::spin(s, true, site, mode::current().profiling()) }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_mark_names_the_report_format() {
        use locks::in_mutex::report::{MAGIC, VERSION};
        assert_eq!(&super::CONTEND_INTERPOSE_MARK[..], format!("{MAGIC} report format {VERSION}").as_bytes());
    }
}
