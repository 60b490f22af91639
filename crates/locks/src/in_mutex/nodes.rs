//! Queue nodes and per-thread lock state for swapped locks whose `Node`
//! is not `()`: MCS needs a node from `lock` to `unlock`, and `adaptive`
//! keeps a thread's state across its acquisitions of one lock in its node.
//! pthread's API carries neither, so each thread keeps a small cache of
//! nodes keyed by mutex address; `lock` takes the entry for the mutex (its
//! state kept from the last time), and the holder parks the entry's
//! address in the mutex (bytes 24..32, which glibc uses only for robust
//! mutexes, never swapped) for `unlock` to give back.
//!
//! A thread holding more than [`WAYS`] swapped mutexes at once is stopped
//! with a message: such a program needs a bigger cache, not a silent
//! misbehaviour.
//!
//! Where a thread's cache lives: a static table of [`THREADS`] caches
//! keyed by the thread pointer (claimed with one CAS at a thread's first
//! swapped lock, found by hashing), so that finding it is a register read
//! and a compare. A `thread_local!` in a shared library is general-dynamic
//! TLS, a call to `__tls_get_addr` on every access: that call was most
//! of what a swapped lock cost beyond the same lock in `contend lock`.
//! A thread that finds no free slot within [`PROBES`] uses a thread-local
//! cache as before. A thread that exits holding nothing leaves nothing
//! behind that matters: glibc gives its thread pointer, with its stack, to
//! a later thread, which takes over its cache of free entries.

use crate::raw::{AdaptiveNode, McsNode};
use std::cell::{Cell, UnsafeCell};
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

/// Entries per thread.
pub const WAYS: usize = 16;

/// One cached node.
pub struct Entry<N> {
    /// The mutex it was last used for (0: none).
    owner: Cell<usize>,
    /// Taken by a lock that has not been unlocked yet.
    held: Cell<bool>,
    /// The node (reset in place when the entry changes mutex).
    node: UnsafeCell<N>,
}

/// A thread's entries.
pub struct Cache<N> {
    entries: [Entry<N>; WAYS],
}

impl<N: Default> Cache<N> {
    fn new() -> Self {
        Cache {
            entries: std::array::from_fn(|_| Entry {
                owner: Cell::new(0),
                held: Cell::new(false),
                node: UnsafeCell::new(N::default()),
            }),
        }
    }

    /// The entry for the mutex at `addr`: the one it used last if free,
    /// else a free one, reset.
    /// Where the entry for `addr` is looked for first.
    fn home(addr: usize) -> usize {
        (addr >> 4) % WAYS
    }

    // Always inlined, as the two below: this is on the interposer's path of
    // every lock and unlock, and across the crate boundary LLVM declined.
    #[inline(always)]
    fn take(&self, addr: usize) -> *const Entry<N> {
        let e = &self.entries[Self::home(addr)];
        if e.owner.get() == addr && !e.held.get() {
            e.held.set(true);
            return e;
        }
        self.take_slow(addr)
    }

    #[cold]
    fn take_slow(&self, addr: usize) -> *const Entry<N> {
        let home = &self.entries[Self::home(addr)];
        let found = self.entries.iter().find(|e| e.owner.get() == addr && !e.held.get());
        // A new mutex takes its home entry if free, so the next lock finds
        // it on the fast path.
        let free =
            || Some(home).filter(|e| !e.held.get()).or_else(|| self.entries.iter().find(|e| !e.held.get()));
        let e = match found.or_else(free) {
            Some(e) => e,
            None => crate::sys::process::die(&format!(
                "contend-interpose: a thread holds more than {WAYS} swapped mutexes at once"
            )),
        };
        if e.owner.get() != addr {
            // A node's state belongs to one lock: a fresh one for another.
            // SAFETY: the entry is not held, so no lock refers to its node.
            unsafe { *e.node.get() = N::default() };
            e.owner.set(addr);
        }
        e.held.set(true);
        e
    }
}

/// A node type the swapped locks use: how a thread gets one for a mutex,
/// and gives it back.
pub trait Pooled: Sized + 'static {
    /// A node for the mutex at `addr`, to keep until [`Pooled::give`].
    fn take(addr: usize) -> *const Self;
    /// Gives back a node [`Pooled::take`] returned.
    ///
    /// # Safety
    /// `node` came from `take` on this thread and is given back once.
    unsafe fn give(node: *const Self);
    /// Whether the node must be parked in the mutex between lock and unlock.
    const PARKED: bool;
}

impl Pooled for () {
    #[inline]
    fn take(_addr: usize) -> *const () {
        std::ptr::NonNull::dangling().as_ptr()
    }
    #[inline]
    unsafe fn give(_node: *const ()) {}
    const PARKED: bool = false;
}

macro_rules! pooled {
    ($node:ty, $table:ident, $cache:ident) => {
        static $table: Table<$node> = Table::new();
        thread_local! {
            static $cache: Cache<$node> = Cache::new();
        }
        impl Pooled for $node {
            #[inline(always)]
            fn take(addr: usize) -> *const $node {
                // The node is the entry's field: its address is the entry's
                // plus the field offset, turned back in `give`.
                let e = match $table.mine() {
                    Some(c) => c.take(addr),
                    None => $cache.with(|c| c.take(addr)),
                };
                // SAFETY: `e` points at a live entry of this thread's cache
                // (static, or thread-local: alive until the thread exits).
                unsafe { (*e).node.get() as *const $node }
            }
            #[inline(always)]
            unsafe fn give(node: *const $node) {
                let e = (node as *const u8).wrapping_sub(std::mem::offset_of!(Entry<$node>, node))
                    as *const Entry<$node>;
                // SAFETY: `node` is the `node` field of an entry `take`
                // returned (the caller's contract), so `e` is that entry.
                unsafe { (*e).held.set(false) };
            }
            const PARKED: bool = true;
        }
    };
}

pooled!(McsNode, MCS_TABLE, MCS_NODES);
pooled!(AdaptiveNode, ADAPTIVE_TABLE, ADAPTIVE_NODES);

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

    #[test]
    fn a_mutex_gets_its_entry_back_and_a_held_one_is_never_shared() {
        let c: Cache<McsNode> = Cache::new();
        let a = c.take(0x1000);
        // SAFETY: `a` points into `c`, alive here.
        unsafe { (*a).held.set(false) };
        assert_eq!(c.take(0x1000), a, "the same mutex, the same entry");
        let b = c.take(0x1000);
        assert_ne!(b, a, "a held entry is not handed out again");
        let other = (0..WAYS - 2).map(|i| c.take(0x2000 + 64 * i)).collect::<Vec<_>>();
        assert!(!other.contains(&a) && !other.contains(&b));
    }

    #[test]
    fn an_entry_taken_for_another_mutex_starts_fresh() {
        #[derive(Default)]
        struct State(Cell<u32>);
        let c: Cache<State> = Cache::new();
        let e = c.take(0x1000);
        // SAFETY: `e` points into `c`, alive here; nobody else uses it.
        unsafe {
            (*(*e).node.get()).0.set(7);
            (*e).held.set(false);
        }
        assert_eq!(c.take(0x1000), e);
        // SAFETY: as above.
        assert_eq!(unsafe { (*(*e).node.get()).0.get() }, 7, "kept for the same mutex");
        // SAFETY: as above.
        unsafe { (*e).held.set(false) };
        // Fill every entry with other mutexes: one of them takes `e` over.
        let taken: Vec<_> = (1..=WAYS).map(|i| c.take(0x1000 + 16 * i)).collect();
        assert!(taken.contains(&e));
        // SAFETY: as above.
        assert_eq!(unsafe { (*(*e).node.get()).0.get() }, 0, "another mutex gets a fresh node");
    }
}
