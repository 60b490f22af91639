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

pub mod input;
pub mod nodes;
pub mod report;
pub mod said;

pub use nodes::Pooled;

use crate::raw::{
    Backoff, Mcs, NoLock, PackedAdaptive, ParkingLot, PiFutex, PthreadSpin, Tas, Ticket, Ttas, YieldSpin,
};
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

/// Declares every swappable lock once: its variant of [`Swap`], its
/// registry name, its type, and whether users are offered it. From this
/// one table come the enum, [`Swap::all`], [`Swap::name`],
/// [`Swap::parse`], [`Swap::from_repr`], [`Swap::check`] and
/// [`Swap::dispatch`], whose exhaustive match is the only place a variant
/// meets its type: a lock cannot be named without running.
macro_rules! swappable {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal => $ty:ty, offered: $offered:literal; )*) => {
        /// A lock `contend run` can swap in for glibc's mutex.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr(u8)]
        pub enum Swap {
            /// glibc's own mutex: nothing swapped (the baseline).
            Pthread = 1,
            $( $(#[$doc])* $variant, )*
        }

        impl Swap {
            /// The largest `repr(u8)` value (the interposer packs flags
            /// above it).
            pub const MAX_REPR: u8 = Swap::EVERY.len() as u8;

            /// Every variant, glibc's first, offered or not.
            const EVERY: &'static [Swap] = &[Swap::Pthread, $(Swap::$variant),*];

            /// Its registry name.
            pub fn name(self) -> &'static str {
                match self {
                    Swap::Pthread => "pthread",
                    $( Swap::$variant => $name, )*
                }
            }

            /// Whether users may ask for it (`noop` exists for the tests).
            pub fn offered(self) -> bool {
                match self {
                    Swap::Pthread => true,
                    $( Swap::$variant => $offered, )*
                }
            }

            /// What the lock supports (None for `Pthread`: glibc's).
            pub fn caps(self) -> Option<crate::Caps> {
                match self {
                    Swap::Pthread => None,
                    $( Swap::$variant => Some(<$ty as crate::RawLock>::CAPS), )*
                }
            }

            /// Checks that the lock really fits (size, alignment, zero when
            /// unlocked); `Pthread` always does.
            pub fn check(self) -> Result<(), String> {
                match self {
                    Swap::Pthread => Ok(()),
                    $( Swap::$variant => fits::<$ty>(), )*
                }
            }

            /// From its `repr(u8)` value (a match, not a table: it sits on
            /// the interposer's path of every call).
            #[inline(always)]
            pub fn from_repr(v: u8) -> Option<Swap> {
                match v {
                    v if v == Swap::Pthread as u8 => Some(Swap::Pthread),
                    $( v if v == Swap::$variant as u8 => Some(Swap::$variant), )*
                    _ => None,
                }
            }

            /// Runs `v` with the lock's type; None for `Pthread`, which
            /// has no type here (it is glibc's).
            #[inline(always)]
            pub fn dispatch<V: OnSwapped>(self, v: V) -> Option<V::Out> {
                match self {
                    Swap::Pthread => None,
                    $( Swap::$variant => Some(v.run::<$ty>()), )*
                }
            }
        }
    };
}

swappable! {
    /// `adaptive`, packed into 8 bytes, one spinner at a time.
    Adaptive = "adaptive" => PackedAdaptive, offered: true;
    /// The MCS queue lock; its queue nodes come from a per-thread pool.
    Mcs = "mcs" => Mcs, offered: true;
    /// The ticket lock.
    Ticket = "ticket" => Ticket, offered: true;
    /// Test-and-set.
    Tas = "tas" => Tas, offered: true;
    /// Test-and-test-and-set.
    Ttas = "ttas" => Ttas, offered: true;
    /// TTAS with exponential backoff.
    Backoff = "backoff" => Backoff, offered: true;
    /// glibc's x86-64 pthread_spin_lock, on a zero-free word.
    PthreadSpin = "pthread-spin" => PthreadSpin, offered: true;
    /// TTAS that yields.
    Yield = "yield" => YieldSpin, offered: true;
    /// FUTEX_LOCK_PI.
    Pi = "pi" => PiFutex, offered: true;
    /// parking_lot's RawMutex.
    ParkingLot = "parking_lot" => ParkingLot, offered: true;
    /// No lock at all: not offered to users (`contend run` refuses it);
    /// the tests run the interposer's checks with it to show they catch a
    /// lock that does not exclude.
    Noop = "noop" => NoLock, offered: false;
}

/// What a lock needs to live in a `pthread_mutex_t` under the interposer:
/// try-lock (pthread has one), and a node it can get per thread and per
/// mutex, since pthread's API carries none ([`nodes`]).
pub trait InMutex: RawLock<Node: Pooled> + TryLock {}

impl<L: RawLock<Node: Pooled> + TryLock> InMutex for L {}

/// Code generic over a swappable lock's type, run by [`Swap::dispatch`].
pub trait OnSwapped {
    /// What it returns.
    type Out;
    /// Runs with the lock's type.
    fn run<L: InMutex>(self) -> Self::Out;
}

impl Swap {
    /// Every lock users may ask for, glibc's first.
    pub fn all() -> impl Iterator<Item = Swap> {
        Swap::EVERY.iter().copied().filter(|s| s.offered())
    }

    /// The lock named `name`, if it can be swapped in (`noop` included).
    pub fn parse(name: &str) -> Option<Swap> {
        Swap::EVERY.iter().copied().find(|s| s.name() == name)
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
    fn every_swappable_lock_fits_and_reads_back() {
        for &s in Swap::EVERY {
            assert_eq!(s.check(), Ok(()), "{}", s.name());
            assert_eq!(Swap::parse(s.name()), Some(s));
            assert_eq!(Swap::from_repr(s as u8), Some(s), "EVERY is in repr order");
        }
        assert_eq!(Swap::from_repr(0), None);
        assert_eq!(Swap::from_repr(Swap::EVERY.len() as u8 + 1), None);
        assert_eq!(Swap::all().count(), Swap::EVERY.len() - 1, "all but noop are offered");
        assert!(Swap::all().all(|s| s != Swap::Noop));
    }

    #[test]
    fn dispatch_runs_each_lock_with_its_own_type() {
        struct Size;
        impl OnSwapped for Size {
            type Out = (usize, &'static str);
            fn run<L: InMutex>(self) -> Self::Out {
                (std::mem::size_of::<L>(), std::any::type_name::<L>())
            }
        }
        assert_eq!(Swap::Pthread.dispatch(Size), None);
        let (size, ty) = Swap::Mcs.dispatch(Size).unwrap();
        assert!(ty.ends_with("Mcs") && size <= SLOT_BYTES, "{ty}");
        assert!(Swap::ParkingLot.dispatch(Size).unwrap().1.contains("ParkingLot"));
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
