//! Where a thread's cache ([`Cache`]) lives: a static table of [`THREADS`] caches
//! keyed by the thread pointer (claimed with one CAS at a thread's first
//! swapped lock, found by hashing), so that finding it is a register read
//! and a compare. A `thread_local!` in a shared library is general-dynamic
//! TLS, a call to `__tls_get_addr` on every access: that call was most
//! of what a swapped lock cost beyond the same lock in `contend lock`.
//! A thread that finds no free slot within [`PROBES`] uses a thread-local
//! cache as before. A thread that exits holding nothing leaves nothing
//! behind that matters: glibc gives its thread pointer, with its stack, to
//! a later thread, which takes over its cache of free entries.

use super::Cache;
use crate::raw::{AdaptiveNode, McsNode};
use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Threads whose caches the static table holds.
pub const THREADS: usize = 256;
/// Slots tried before a thread falls back to a thread-local cache.
pub const PROBES: usize = 16;

/// A node type whose all-zero bytes are a valid value equal to its
/// `Default` (so that a zeroed static table holds default nodes).
///
/// # Safety
/// All-zero bytes must be a valid `Self` equal to `Self::default()`.
pub unsafe trait ZeroIsDefault: Default {}

// SAFETY: a null pointer and false (tested below).
unsafe impl ZeroIsDefault for McsNode {}
// SAFETY: every field is a number, a flag or an enum whose default is its
// first variant, 0 (tested below).
unsafe impl ZeroIsDefault for AdaptiveNode {}

/// One thread's cache in the table.
#[repr(C, align(64))]
struct ThreadCache<N> {
    /// The owner's thread pointer (0: free).
    owner: AtomicUsize,
    cache: Cache<N>,
}

/// The static table: zeroed, which is every slot free with default nodes.
pub struct Table<N>(UnsafeCell<MaybeUninit<[ThreadCache<N>; THREADS]>>);

impl<N: ZeroIsDefault> Default for Table<N> {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: a slot's cache is touched only by the thread whose pointer
// claimed it (with a CAS); a later thread with the same pointer comes after
// the first has exited.
unsafe impl<N> Sync for Table<N> {}

impl<N: ZeroIsDefault> Table<N> {
    /// An empty table.
    pub const fn new() -> Self {
        Table(UnsafeCell::new(MaybeUninit::zeroed()))
    }

    #[inline(always)]
    fn slot(&self, i: usize) -> &ThreadCache<N> {
        // SAFETY: `i < THREADS`; zeroed bytes are a valid ThreadCache
        // (owner 0; entries with owner 0, not held, default nodes:
        // `ZeroIsDefault`), and the memory is static.
        unsafe { &*(self.0.get() as *const ThreadCache<N>).add(i % THREADS) }
    }

    /// The calling thread's cache, if it has (or can claim) a slot.
    #[inline(always)]
    pub fn mine(&self) -> Option<&Cache<N>> {
        let tp = crate::sys::thread::pointer();
        let home = (tp.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 48) % THREADS;
        let s = self.slot(home);
        if s.owner.load(Relaxed) == tp {
            return Some(&s.cache);
        }
        self.claim(tp, home)
    }

    #[cold]
    fn claim(&self, tp: usize, home: usize) -> Option<&Cache<N>> {
        for i in home..home + PROBES {
            let s = self.slot(i);
            let owner = s.owner.load(Relaxed);
            if owner == tp || (owner == 0 && s.owner.compare_exchange(0, tp, Relaxed, Relaxed).is_ok()) {
                return Some(&s.cache);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zeroed_node_is_the_default_one() {
        fn check<N: ZeroIsDefault + std::fmt::Debug>() {
            // SAFETY: the claim under test: zero bytes are a valid N.
            let zeroed: N = unsafe { MaybeUninit::zeroed().assume_init() };
            assert_eq!(format!("{zeroed:?}"), format!("{:?}", N::default()));
        }
        check::<McsNode>();
        check::<AdaptiveNode>();
    }

    #[test]
    fn each_thread_gets_its_own_cache_from_the_table_and_keeps_it() {
        static T: Table<McsNode> = Table::new();
        let mine = T.mine().unwrap() as *const Cache<McsNode> as usize;
        assert_eq!(T.mine().unwrap() as *const Cache<McsNode> as usize, mine);
        let other =
            std::thread::spawn(|| T.mine().unwrap() as *const Cache<McsNode> as usize).join().unwrap();
        assert_ne!(other, mine);
    }
}
