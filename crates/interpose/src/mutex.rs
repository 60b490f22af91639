//! Which lock a mutex is, and the four operations on it whatever it is.
//!
//! A mutex is swapped when the process runs a swapped lock (for every
//! mutex, or for this one: `chosen.rs`) and glibc's
//! type field (offset 16, written by `pthread_mutex_init` or a static
//! initializer) says a plain private mutex: normal/default or adaptive,
//! not robust, PI, priority-protected or process-shared. Everything else
//! goes to glibc, which honours its type, and is counted.

use crate::glibc::real;
use crate::held;
use crate::mode::Mode;
use crate::swapped;
use crate::tally;
use libc::{c_int, pthread_mutex_t, timespec};
use locks::in_mutex::{InMutex, OnSwapped, Swap};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

use locks::in_mutex::{swappable_kind as swappable, KIND_OFFSET};

/// Kind bits that change semantics (see [`locks::in_mutex::swappable_kind`]).
const KIND_SEMANTICS: i32 = 0xff;

/// glibc's type field of `m`.
///
/// # Safety
/// `m` points at a live `pthread_mutex_t`.
#[inline(always)]
pub unsafe fn kind(m: *mut pthread_mutex_t) -> i32 {
    // SAFETY: offset 16 is the 4-aligned `__kind` int of every glibc
    // pthread_mutex_t; it is written only at initialization.
    unsafe { (*((m as *const u8).add(KIND_OFFSET) as *const AtomicI32)).load(Ordering::Relaxed) }
}

/// Whether a held mutex is known to have no thread asleep on it: glibc's
/// lock word (`__lock`, offset 0) of a mutex neither robust, PI nor
/// priority-protected is 1 while held with none waiting and 2 once one
/// waits (lowlevellock's protocol). Any other kind or word, or a swapped
/// lock, answers false: a waiter may be there.
///
/// # Safety
/// `m` points at a live `pthread_mutex_t` the caller holds.
#[inline(always)]
pub unsafe fn none_asleep(m: *mut pthread_mutex_t, mode: Mode) -> bool {
    const ROBUST_PI_PP: i32 = 16 | 32 | 64;
    // SAFETY: the caller's contract; offset 0 is the 4-aligned `__lock`
    // int, which glibc changes only with atomic operations.
    mode.glibc_only()
        && unsafe { kind(m) } & ROBUST_PI_PP == 0
        && unsafe { (*(m as *const AtomicI32)).load(Ordering::Relaxed) } == 1
}

/// Whether a lock call's result means the caller now holds the mutex: 0,
/// or EOWNERDEAD (a robust mutex whose owner died is acquired, and the
/// caller must make it consistent).
#[inline(always)]
pub fn holds(rc: c_int) -> bool {
    rc == 0 || rc == libc::EOWNERDEAD
}

/// Defines an operation on a swapped mutex as code generic over the
/// process's lock, run by [`Swap::dispatch`] (an exhaustive match: no lock
/// can run under another's name). One type per operation, so that each
/// monomorphized body holds that operation alone and inlines whole.
macro_rules! op {
    ($(#[$doc:meta])* $name:ident($($field:ident: $ty:ty),*) => |$m:ident, $L:ident| $body:expr) => {
        $(#[$doc])*
        struct $name(*mut pthread_mutex_t, $($ty),*);

        impl OnSwapped for $name {
            type Out = c_int;

            // Not inlined: each lock's body is its own small function, so
            // the entry point that dispatches to one of them keeps few
            // registers (inlined, the ten bodies made every call save all
            // six callee-saved registers: about 1 ns per lock and unlock).
            #[inline(never)]
            fn run<$L: InMutex>(self) -> c_int {
                let $name($m, $($field),*) = self;
                // SAFETY: an operation is made only by the functions
                // below, whose callers pass a live mutex of a swappable
                // kind in a process running this lock (so it holds an
                // `L`), a held one for an unlock, and a valid timespec
                // for a timed lock.
                unsafe { $body }
            }
        }
    };
}

op!(
    /// pthread_mutex_lock.
    LockOp() => |m, L| {
        swapped::lock::<L>(m);
        0
    }
);
op!(
    /// pthread_mutex_trylock.
    TryLockOp() => |m, L| if swapped::try_lock::<L>(m) { 0 } else { libc::EBUSY }
);
op!(
    /// pthread_mutex_unlock.
    UnlockOp() => |m, L| {
        swapped::unlock::<L>(m);
        0
    }
);
op!(
    /// pthread_mutex_destroy.
    DestroyOp() => |m, L| swapped::destroy::<L>(m)
);
op!(
    /// pthread_mutex_timedlock / clocklock, on a checked clock.
    TimedOp(clock: libc::clockid_t, deadline: *const timespec) => |m, L| swapped::timed_lock::<L>(m, clock, &*deadline)
);

/// Runs `op` with the swapped lock of `swap`.
///
/// # Safety
/// As the operation's: its mutex is live, of a swappable kind, and holds
/// `swap`'s lock.
#[inline(always)]
unsafe fn on_swapped(swap: Swap, op: impl OnSwapped<Out = c_int>) -> c_int {
    swap.dispatch(op).unwrap_or_else(|| unreachable!("glibc's mutex is never swapped"))
}

/// The swapped lock `m` holds, if the process swaps and `m` is of a
/// swappable kind; None when it is glibc's.
///
/// # Safety
/// `m` points at a live `pthread_mutex_t`.
#[inline(always)]
unsafe fn swapped_in(m: *mut pthread_mutex_t, mode: Mode) -> Option<Swap> {
    // SAFETY: the caller's contract (kind reads offset 16).
    if mode.glibc_only() || !swappable(unsafe { kind(m) }) {
        None
    } else if mode.per_mutex() {
        crate::chosen::lock_of(m)
    } else {
        Some(mode.swap())
    }
}

/// Whether `m` holds a swapped lock.
///
/// # Safety
/// `m` points at a live `pthread_mutex_t`.
#[inline]
pub unsafe fn is_swapped(m: *mut pthread_mutex_t, mode: Mode) -> bool {
    // SAFETY: the caller's contract.
    unsafe { swapped_in(m, mode) }.is_some()
}

/// An acquisition by `op` on the swapped lock, or by `glibc` when the
/// process or the mutex is glibc's; either way counted by where it went
/// (`tally.rs`).
///
/// # Safety
/// `m` points at a live, initialized `pthread_mutex_t`; `op` is an
/// acquisition whose arguments are valid.
#[inline(always)]
unsafe fn acquisition(
    m: *mut pthread_mutex_t,
    mode: Mode,
    op: impl OnSwapped<Out = c_int>,
    glibc: impl FnOnce() -> c_int,
) -> c_int {
    // SAFETY: the caller's contract.
    let rc = match unsafe { swapped_in(m, mode) } {
        None => {
            // Only a plain process remembers what it holds (held.rs).
            if mode.plain() && !mode.glibc_only() {
                held::forget(m as usize);
            }
            let rc = glibc();
            if holds(rc) {
                tally::glibc();
            }
            rc
        }
        Some(swap) => {
            // SAFETY: `m` holds `swap`'s lock (swapped_in said so).
            let rc = unsafe { on_swapped(swap, op) };
            if rc == 0 {
                tally::swapped();
            }
            rc
        }
    };
    if mode.delaying() && holds(rc) {
        crate::delay::entered(m);
    }
    rc
}

/// pthread_mutex_lock when the mode is [`Mode::plain`]: glibc's mutex or
/// the swapped lock, and the count, nothing else.
///
/// # Safety
/// `m` points at a live, initialized `pthread_mutex_t`.
#[inline(always)]
pub unsafe fn acquire_plain(m: *mut pthread_mutex_t, mode: Mode) -> c_int {
    // SAFETY: the caller's contract (kind reads offset 16).
    if mode.glibc_only() || !swappable(unsafe { kind(m) }) {
        if !mode.glibc_only() {
            held::forget(m as usize);
        }
        // SAFETY: the caller's contract, passed on to glibc.
        let rc = unsafe { (real().mutex_lock)(m) };
        if holds(rc) {
            tally::glibc();
        }
        return rc;
    }
    // SAFETY: a plain swapped process: `m` holds the process's lock.
    unsafe {
        match crate::plain::lock() {
            Some(f) => f(m),
            None => acquire(m, mode),
        }
    }
}

/// pthread_mutex_unlock when the mode is [`Mode::plain`].
///
/// # Safety
/// As [`acquire_plain`], and the caller holds `m`.
#[inline(always)]
pub unsafe fn release_plain(m: *mut pthread_mutex_t, mode: Mode) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        // A mutex this thread took by the swapped lock is unlocked
        // without reading its type (held.rs says why).
        if mode.glibc_only() || (!held::let_go(m as usize) && !swappable(kind(m))) {
            return (real().mutex_unlock)(m);
        }
        match crate::plain::unlock() {
            Some(f) => f(m),
            None => release(m, mode),
        }
    }
}

/// pthread_mutex_lock, unprofiled.
///
/// # Safety
/// `m` points at a live, initialized `pthread_mutex_t`.
#[inline(always)]
pub unsafe fn acquire(m: *mut pthread_mutex_t, mode: Mode) -> c_int {
    // SAFETY: the caller's contract, passed on to glibc or the lock.
    unsafe { acquisition(m, mode, LockOp(m), || (real().mutex_lock)(m)) }
}

/// pthread_mutex_trylock, unprofiled: 0 or EBUSY (or glibc's error).
///
/// # Safety
/// As [`acquire`].
#[inline(always)]
pub unsafe fn try_acquire(m: *mut pthread_mutex_t, mode: Mode) -> c_int {
    // SAFETY: the caller's contract, passed on to glibc or the lock.
    unsafe { acquisition(m, mode, TryLockOp(m), || (real().mutex_trylock)(m)) }
}

/// pthread_mutex_unlock, unprofiled.
///
/// # Safety
/// As [`acquire`], and the caller holds `m`.
#[inline(always)]
pub unsafe fn release(m: *mut pthread_mutex_t, mode: Mode) -> c_int {
    // SAFETY: the caller's contract: `m` is a live mutex it holds. An
    // unlock is not an acquisition: it is not counted.
    unsafe {
        match swapped_in(m, mode) {
            None => (real().mutex_unlock)(m),
            Some(swap) => on_swapped(swap, UnlockOp(m)),
        }
    }
}

/// pthread_mutex_timedlock / clocklock, unprofiled (`clock` None: the
/// timedlock's CLOCK_REALTIME, passed to glibc's timedlock).
///
/// # Safety
/// As [`acquire`]; `deadline` points at a timespec.
pub unsafe fn timed_acquire(
    m: *mut pthread_mutex_t,
    mode: Mode,
    clock: Option<libc::clockid_t>,
    deadline: *const timespec,
) -> c_int {
    if deadline.is_null() {
        return libc::EINVAL;
    }
    let on = clock.unwrap_or(libc::CLOCK_REALTIME);
    if on != libc::CLOCK_REALTIME && on != libc::CLOCK_MONOTONIC {
        return libc::EINVAL;
    }
    // SAFETY: the caller's contract: `m` is a live, initialized mutex and
    // `deadline` a valid timespec (checked non-null above).
    unsafe {
        acquisition(m, mode, TimedOp(m, on, deadline), || match clock {
            None => (real().mutex_timedlock)(m, deadline),
            Some(c) => (real().mutex_clocklock)(m, c, deadline),
        })
    }
}

/// pthread_mutex_destroy.
///
/// # Safety
/// As [`acquire`].
pub unsafe fn destroy(m: *mut pthread_mutex_t, mode: Mode) -> c_int {
    // SAFETY: the caller's contract: `m` is a live, initialized mutex.
    unsafe {
        match swapped_in(m, mode) {
            None => (real().mutex_destroy)(m),
            Some(swap) => on_swapped(swap, DestroyOp(m)),
        }
    }
}

/// Mutexes initialized, by what became of them.
pub struct Inits {
    /// Swapped (plain private mutexes in a swapped process).
    pub swapped: AtomicU64,
    /// Left to glibc because of their type, by kind: recursive,
    /// error-checking, robust, PI or PP, process-shared.
    pub glibc: [AtomicU64; 5],
}

/// The counts of `pthread_mutex_init` calls.
pub static INITS: Inits = Inits { swapped: AtomicU64::new(0), glibc: [const { AtomicU64::new(0) }; 5] };

/// Which of [`Inits::glibc`] a kind counts under: the most specific
/// reason first (a robust process-shared mutex counts as robust).
pub fn reason(k: i32) -> usize {
    let k = k & KIND_SEMANTICS;
    if k & 16 != 0 {
        2
    } else if k & (32 | 64) != 0 {
        3
    } else if k & 128 != 0 {
        4
    } else if k & 3 == 2 {
        1
    } else {
        0
    }
}

/// pthread_mutex_init.
///
/// # Safety
/// `m` points at writable memory for a `pthread_mutex_t`; `attr` is null
/// or an initialized attribute object.
pub unsafe fn init(m: *mut pthread_mutex_t, attr: *const libc::pthread_mutexattr_t, mode: Mode) -> c_int {
    // glibc writes its kind from the attributes; read it back to decide.
    // SAFETY: the caller's contract.
    let r = unsafe { (real().mutex_init)(m, attr) };
    if r != 0 || mode.glibc_only() {
        return r;
    }
    // SAFETY: just initialized.
    let k = unsafe { kind(m) };
    if mode.per_mutex() && crate::chosen::lock_of(m).is_none() {
        // Not chosen: glibc's by choice, not by kind.
        return 0;
    }
    if swappable(k) {
        // A swapped lock is unlocked when its bytes are zero; the kind is
        // kept (0 or adaptive), so later calls know the mutex is swapped.
        // SAFETY: `m` is writable for a whole pthread_mutex_t; offsets
        // 0..16 and 24..40 are not the kind.
        unsafe {
            std::ptr::write_bytes(m as *mut u8, 0, KIND_OFFSET);
            std::ptr::write_bytes((m as *mut u8).add(swapped::NODE_OFFSET), 0, 16);
        }
        INITS.swapped.fetch_add(1, Ordering::Relaxed);
    } else {
        INITS.glibc[reason(k)].fetch_add(1, Ordering::Relaxed);
    }
    0
}
