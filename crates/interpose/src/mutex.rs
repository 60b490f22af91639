//! Which lock a mutex is, and the four operations on it whatever it is.
//!
//! A mutex is swapped when the process runs a swapped lock and glibc's
//! type field (offset 16, written by `pthread_mutex_init` or a static
//! initializer) says a plain private mutex: normal/default or adaptive,
//! not robust, PI, priority-protected or process-shared. Everything else
//! goes to glibc, which honours its type, and is counted.

use crate::glibc::real;
use crate::mode::Mode;
use crate::swapped;
use crate::tally;
use libc::{c_int, pthread_mutex_t, timespec};
use locks::in_mutex::Swap;
use locks::raw::{Backoff, Mcs, PackedAdaptive, ParkingLot, PiFutex, Tas, Ticket, Ttas, YieldSpin};
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

/// Whether a lock call's result means the caller now holds the mutex: 0,
/// or EOWNERDEAD (a robust mutex whose owner died is acquired, and the
/// caller must make it consistent).
#[inline(always)]
pub fn holds(rc: c_int) -> bool {
    rc == 0 || rc == libc::EOWNERDEAD
}

/// Runs `$body` with `$L` bound to the swapped lock type of `$mode`, for
/// a mutex already known to hold it.
macro_rules! on_swapped {
    ($mode:expr, $L:ident => $body:expr) => {{
        let bits = $mode.bits() & 0x7f;
        if bits == Swap::Adaptive as u8 {
            type $L = PackedAdaptive;
            $body
        } else if bits == Swap::Mcs as u8 {
            type $L = Mcs;
            $body
        } else if bits == Swap::Ticket as u8 {
            type $L = Ticket;
            $body
        } else if bits == Swap::Tas as u8 {
            type $L = Tas;
            $body
        } else if bits == Swap::Ttas as u8 {
            type $L = Ttas;
            $body
        } else if bits == Swap::Backoff as u8 {
            type $L = Backoff;
            $body
        } else if bits == Swap::Yield as u8 {
            type $L = YieldSpin;
            $body
        } else if bits == Swap::Pi as u8 {
            type $L = PiFutex;
            $body
        } else if bits == Swap::Noop as u8 {
            type $L = locks::raw::NoLock;
            $body
        } else {
            type $L = ParkingLot;
            $body
        }
    }};
}

/// Runs `$body` with `$L` bound to the swapped lock type of `$mode`, or
/// `$glibc` when the process or the mutex is glibc's; either way an
/// acquisition is counted by where it went (`tally.rs`). Used inside an
/// `unsafe` block whose caller passes a live mutex (it reads the kind).
macro_rules! with_lock {
    ($mode:expr, $m:expr, $L:ident => $body:expr, glibc => $glibc:expr) => {{
        let bits = $mode.bits() & 0x7f;
        if bits == Swap::Pthread as u8 || !swappable(kind($m)) {
            let rc = $glibc;
            if holds(rc) {
                tally::glibc();
            }
            rc
        } else {
            let rc = on_swapped!($mode, $L => $body);
            if rc == 0 {
                tally::swapped();
            }
            rc
        }
    }};
}

/// pthread_mutex_lock, unprofiled.
///
/// # Safety
/// `m` points at a live, initialized `pthread_mutex_t`.
#[inline(always)]
pub unsafe fn acquire(m: *mut pthread_mutex_t, mode: Mode) -> c_int {
    // SAFETY: the caller's contract: `m` is a live, initialized mutex.
    unsafe { with_lock!(mode, m, L => { swapped::lock::<L>(m); 0 }, glibc => (real().mutex_lock)(m)) }
}

/// pthread_mutex_trylock, unprofiled: 0 or EBUSY (or glibc's error).
///
/// # Safety
/// As [`acquire`].
#[inline(always)]
pub unsafe fn try_acquire(m: *mut pthread_mutex_t, mode: Mode) -> c_int {
    // SAFETY: the caller's contract: `m` is a live, initialized mutex.
    unsafe {
        with_lock!(mode, m, L => if swapped::try_lock::<L>(m) { 0 } else { libc::EBUSY },
                   glibc => (real().mutex_trylock)(m))
    }
}

/// pthread_mutex_unlock, unprofiled.
///
/// # Safety
/// As [`acquire`], and the caller holds `m`.
#[inline(always)]
pub unsafe fn release(m: *mut pthread_mutex_t, mode: Mode) -> c_int {
    let bits = mode.bits() & 0x7f;
    // SAFETY: the caller's contract: `m` is a live mutex it holds. An
    // unlock is not an acquisition: it goes to glibc uncounted.
    unsafe {
        if bits == Swap::Pthread as u8 || !swappable(kind(m)) {
            return (real().mutex_unlock)(m);
        }
        on_swapped!(mode, L => { swapped::unlock::<L>(m); 0 })
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
    // SAFETY: checked non-null; the caller's contract.
    let d = unsafe { &*deadline };
    let on = clock.unwrap_or(libc::CLOCK_REALTIME);
    if on != libc::CLOCK_REALTIME && on != libc::CLOCK_MONOTONIC {
        return libc::EINVAL;
    }
    // SAFETY: the caller's contract: `m` is a live, initialized mutex and
    // `deadline` a valid timespec (checked non-null above).
    unsafe {
        with_lock!(mode, m, L => swapped::timed_lock::<L>(m, on, d),
        glibc => match clock {
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
    let bits = mode.bits() & 0x7f;
    // SAFETY: the caller's contract: `m` is a live, initialized mutex.
    unsafe {
        if bits == Swap::Pthread as u8 || !swappable(kind(m)) {
            return (real().mutex_destroy)(m);
        }
        on_swapped!(mode, L => swapped::destroy::<L>(m))
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
    if r != 0 || mode.swap() == Swap::Pthread {
        return r;
    }
    // SAFETY: just initialized.
    let k = unsafe { kind(m) };
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
