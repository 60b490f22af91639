//! The locks that can live inside a `pthread_mutex_t`, for the interposer
//! of `contend run`: a lock qualifies when it fits in the first
//! [`SLOT_BYTES`] bytes (glibc keeps the mutex type at offset 16, which
//! the interposer reads to leave recursive, error-checking, robust, PI
//! and process-shared mutexes to glibc), needs no more than 8-byte
//! alignment, offers try-lock, and is unlocked when all its bytes are zero,
//! because `PTHREAD_MUTEX_INITIALIZER` is all zeros and a statically
//! initialized mutex is never passed to `pthread_mutex_init`.
//!
//! Not here, and why: `clh` (unlocked means a tail pointing at a released
//! node, never zero), `futex` and `seed` (the spin budget is a field, not
//! zero), `std` (its guard is the node and cannot be parked in a pool),
//! the file and SysV locks (kernel objects per lock), and the `pthread-*`
//! variants (they are glibc's mutex: `pthread` covers them).

use crate::raw::{Backoff, Mcs, NoLock, PackedAdaptive, ParkingLot, PiFutex, Tas, Ticket, Ttas, YieldSpin};
use crate::{LockConfig, RawLock, TryLock};

/// Bytes of a `pthread_mutex_t` a swapped lock may use.
pub const SLOT_BYTES: usize = 16;

/// Where glibc keeps the mutex kind (`__kind`) in a `pthread_mutex_t`.
pub const KIND_OFFSET: usize = 16;

/// Whether a mutex of glibc kind `kind` can hold a swapped lock: a plain
/// private mutex, normal/default (0) or adaptive (3). The low byte holds
/// what changes semantics (the type in bits 0-1: 1 recursive, 2
/// error-checking; robust 16, PI 32, PP 64, process-shared 128); the
/// elision hints above it (256, 512) do not.
#[inline]
pub fn swappable_kind(kind: i32) -> bool {
    let k = kind & 0xff;
    k == 0 || k == 3
}

/// A lock `contend run` can swap in for glibc's mutex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Swap {
    /// glibc's own mutex: nothing swapped (the baseline).
    Pthread = 1,
    /// `adaptive`, packed into 8 bytes, one spinner at a time.
    Adaptive,
    /// The MCS queue lock; its queue nodes come from a per-thread pool.
    Mcs,
    /// The ticket lock.
    Ticket,
    /// Test-and-set.
    Tas,
    /// Test-and-test-and-set.
    Ttas,
    /// TTAS with exponential backoff.
    Backoff,
    /// TTAS that yields.
    Yield,
    /// FUTEX_LOCK_PI.
    Pi,
    /// parking_lot's RawMutex.
    ParkingLot,
    /// No lock at all: not offered to users (`contend run` refuses it);
    /// the tests run the interposer's checks with it to show they catch a
    /// lock that does not exclude.
    Noop,
}

impl Swap {
    /// Every swappable lock, glibc's first.
    pub const ALL: [Swap; 10] = [
        Swap::Pthread,
        Swap::Adaptive,
        Swap::Mcs,
        Swap::Ticket,
        Swap::Tas,
        Swap::Ttas,
        Swap::Backoff,
        Swap::Yield,
        Swap::Pi,
        Swap::ParkingLot,
    ];

    /// Its registry name.
    pub fn name(self) -> &'static str {
        match self {
            Swap::Pthread => "pthread",
            Swap::Adaptive => "adaptive",
            Swap::Mcs => "mcs",
            Swap::Ticket => "ticket",
            Swap::Tas => "tas",
            Swap::Ttas => "ttas",
            Swap::Backoff => "backoff",
            Swap::Yield => "yield",
            Swap::Pi => "pi",
            Swap::ParkingLot => "parking_lot",
            Swap::Noop => "noop",
        }
    }

    /// The lock named `name`, if it can be swapped in (`noop` included).
    pub fn parse(name: &str) -> Option<Swap> {
        Swap::ALL.into_iter().chain([Swap::Noop]).find(|s| s.name() == name)
    }

    /// From its `repr(u8)` value.
    pub fn from_u8(v: u8) -> Option<Swap> {
        Swap::ALL.into_iter().chain([Swap::Noop]).find(|&s| s as u8 == v)
    }

    /// Checks that the lock really fits (size, alignment, zero when
    /// unlocked); `Pthread` always does.
    pub fn check(self) -> Result<(), String> {
        match self {
            Swap::Pthread => Ok(()),
            Swap::Adaptive => fits::<PackedAdaptive>(),
            Swap::Mcs => fits::<Mcs>(),
            Swap::Ticket => fits::<Ticket>(),
            Swap::Tas => fits::<Tas>(),
            Swap::Ttas => fits::<Ttas>(),
            Swap::Backoff => fits::<Backoff>(),
            Swap::Yield => fits::<YieldSpin>(),
            Swap::Pi => fits::<PiFutex>(),
            Swap::ParkingLot => fits::<ParkingLot>(),
            Swap::Noop => fits::<NoLock>(),
        }
    }
}

/// Whether `L` can live in a `pthread_mutex_t`'s first [`SLOT_BYTES`]
/// bytes and be unlocked when they are zero.
pub fn fits<L: RawLock + TryLock>() -> Result<(), String> {
    let (size, align) = (std::mem::size_of::<L>(), std::mem::align_of::<L>());
    if size > SLOT_BYTES || align > 8 {
        return Err(format!("{size} bytes aligned to {align}: more than {SLOT_BYTES} bytes aligned to 8"));
    }
    let lock = L::new(&LockConfig::default());
    // SAFETY: `lock` is a live value of `size` bytes; reading them as bytes
    // is reading its representation (the locks are atomics and plain
    // integers: no padding in any of them, checked by the test below).
    let bytes = unsafe { std::slice::from_raw_parts(&lock as *const L as *const u8, size) };
    if bytes.iter().any(|&b| b != 0) {
        return Err(
            "not all zero when unlocked, so PTHREAD_MUTEX_INITIALIZER would not be a valid lock".into()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_swappable_lock_fits() {
        for s in Swap::ALL.into_iter().chain([Swap::Noop]) {
            assert_eq!(s.check(), Ok(()), "{}", s.name());
            assert_eq!(Swap::parse(s.name()), Some(s));
            assert_eq!(Swap::from_u8(s as u8), Some(s));
        }
    }

    #[test]
    fn a_lock_that_does_not_fit_is_refused() {
        // The padded adaptive lock is two cache lines.
        let why = fits::<crate::raw::Adaptive>().unwrap_err();
        assert!(why.contains("more than 16 bytes"), "{why}");
        // The futex mutex keeps its spin budget (100) in its bytes.
        let why = fits::<crate::raw::FutexMutex>().unwrap_err();
        assert!(why.contains("not all zero"), "{why}");
    }
}
