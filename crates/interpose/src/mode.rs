//! What the interposer does in this process, decided once from the
//! environment `contend run` sets: which lock replaces glibc's mutex
//! (`CONTEND_RUN_LOCK`, default `pthread`: none) or which lock replaces it
//! in which mutexes alone (`CONTEND_RUN_MUTEXES`, `chosen.rs`), whether every mutex is
//! profiled (`CONTEND_RUN_PROFILE=1`), whether one mutex's critical
//! sections are lengthened (`CONTEND_RUN_DELAY`, `delay.rs`) or virtually
//! shortened (`CONTEND_RUN_SPEEDUP`, `speedup.rs`), and the wake cost `contend`
//! measured (`CONTEND_WAKE_NS`, so `adaptive` does not spend 10 ms and two
//! threads measuring it again in every process, nor allocate inside a
//! lock: without it, a fallback is assumed).
//!
//! Decided on the first pthread call rather than in a constructor, with
//! getenv (no allocation), because another library's constructor may lock
//! a mutex before this library's constructor runs, and a mutex locked by
//! one lock must be unlocked by the same one.

use locks::in_mutex::{input, Swap};
use std::sync::atomic::{AtomicU8, Ordering};

/// The decision packed in a byte: the [`Swap`] in the low bits,
/// [`PROFILE`] and [`CHOSEN`] on top; 0 until decided.
static MODE: AtomicU8 = AtomicU8::new(0);
const PROFILE: u8 = 0x80;
/// Only the chosen mutexes are swapped, each with its own lock (the low
/// bits then say `pthread`: no lock for the rest).
const CHOSEN: u8 = 0x40;
/// One mutex's critical sections are lengthened (`delay.rs`) or
/// virtually shortened (`speedup.rs`).
const DELAY: u8 = 0x20;
const FLAGS: u8 = PROFILE | CHOSEN | DELAY;
const _: () = assert!(locks::in_mutex::Swap::MAX_REPR < DELAY, "a lock's number must not reach the flags");

/// The interposer's mode.
#[derive(Clone, Copy)]
pub struct Mode(u8);

impl Mode {
    /// The lock that replaces glibc's mutex in every plain mutex
    /// (`pthread` under a per-mutex choice).
    #[inline]
    pub fn swap(self) -> Swap {
        // Only values from `decide` are stored.
        Swap::from_repr(self.0 & !FLAGS).unwrap_or(Swap::Pthread)
    }
    /// Whether nothing is swapped (`pthread`): every call goes to glibc.
    #[inline]
    pub fn glibc_only(self) -> bool {
        self.0 & !(PROFILE | DELAY) == Swap::Pthread as u8
    }
    /// Whether a mutex's critical sections are lengthened or virtually
    /// shortened.
    #[inline]
    pub fn delaying(self) -> bool {
        self.0 & DELAY != 0
    }
    /// Whether a mutex's critical sections are virtually shortened
    /// (`speedup.rs`): every mutex and condition call keeps the accounts.
    #[inline]
    pub fn speeding(self) -> bool {
        self.delaying() && crate::speedup::on()
    }
    /// What the report names as the lock: the swapped lock's name, or the
    /// per-mutex choice as it was given.
    pub fn label(self) -> &'static str {
        if self.per_mutex() {
            env(input::MUTEXES).unwrap_or("-")
        } else {
            self.swap().name()
        }
    }
    /// Whether nothing but the lock is asked for (no profile, per-mutex
    /// choice or delay): the entry points' short path.
    #[inline]
    pub fn plain(self) -> bool {
        self.0 & FLAGS == 0
    }
    /// Whether only the chosen mutexes are swapped (`chosen.rs`).
    #[inline]
    pub fn per_mutex(self) -> bool {
        self.0 & CHOSEN != 0
    }
    /// Whether every acquisition is profiled.
    #[inline]
    pub fn profiling(self) -> bool {
        self.0 & PROFILE != 0
    }
}

/// This process's mode.
#[inline]
pub fn current() -> Mode {
    match MODE.load(Ordering::Relaxed) {
        0 => decide(),
        m => Mode(m),
    }
}

fn env(var: input::Var) -> Option<&'static str> {
    // SAFETY: `name` is NUL-terminated; getenv returns null or a pointer
    // into the environment, which lives as long as the process (a program
    // that rewrites its own environment concurrently is outside POSIX).
    let p = unsafe { libc::getenv(var.c_name.as_ptr()) };
    if p.is_null() {
        return None;
    }
    // SAFETY: getenv's result is a NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(p) }.to_str().ok()
}

#[cold]
fn decide() -> Mode {
    let swap = match env(input::LOCK) {
        None | Some("") => Swap::Pthread,
        Some(name) => match Swap::parse(name).filter(|s| s.check().is_ok()) {
            Some(s) => s,
            None => crate::say::die(&format!(
                "{}={name} is not a lock that fits in a pthread_mutex_t",
                input::LOCK.name
            )),
        },
    };
    let chosen = match env(input::MUTEXES) {
        None | Some("") => 0,
        Some(_) if swap != Swap::Pthread => {
            crate::say::die(&format!("{} and {} both set", input::LOCK.name, input::MUTEXES.name))
        }
        Some(spec) => match crate::chosen::parse(spec) {
            Ok(()) => CHOSEN,
            Err(why) => crate::say::die(&format!("{}: {why}", input::MUTEXES.name)),
        },
    };
    let delay = match env(input::DELAY) {
        None | Some("") => 0,
        Some(spec) => match crate::delay::parse(spec) {
            Ok(()) => DELAY,
            Err(why) => crate::say::die(&format!("{}: {why}", input::DELAY.name)),
        },
    };
    let delay = match env(input::SPEEDUP) {
        None | Some("") => delay,
        Some(_) if delay != 0 => {
            crate::say::die(&format!("{} and {} both set", input::DELAY.name, input::SPEEDUP.name))
        }
        Some(spec) => match crate::speedup::parse(spec) {
            Ok(()) => DELAY,
            Err(why) => crate::say::die(&format!("{}: {why}", input::SPEEDUP.name)),
        },
    };
    // Never measured here: the measurement's helper threads allocate, and
    // under a swapped lock their allocations take the program's
    // allocator's mutexes from inside the lock that wanted the cost
    // (jemalloc hung that way). Without contend's figure (one CPU: nothing
    // to measure across), the fallback.
    let wake = env(input::WAKE_NS).and_then(|v| v.parse::<u64>().ok());
    locks::sys::wake_cost::assume(
        wake.map_or(locks::sys::wake_cost::FALLBACK, std::time::Duration::from_nanos),
    );
    let profile = env(input::PROFILE) == Some(input::PROFILE_ON);
    let bits = swap as u8 | chosen | delay | if profile { PROFILE } else { 0 };
    if bits & FLAGS == 0 {
        crate::plain::set(swap);
    }
    // Two threads deciding at once decide the same.
    MODE.store(bits, Ordering::Relaxed);
    Mode(bits)
}
