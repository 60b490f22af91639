//! Queue nodes and per-thread lock state for swapped locks whose `Node`
//! is not `()`: MCS needs a node from `lock` to `unlock`, and `adaptive`
//! keeps a thread's state across its acquisitions of one lock in its node.
//! pthread's API carries neither, so each thread keeps a small cache of
//! nodes keyed by mutex address; `lock` takes the entry for the mutex (its
//! state kept from the last time), and the holder parks the entry's
//! address in the mutex (bytes 24..32, which glibc uses only for robust
//! mutexes, never swapped) for `unlock` to give back.
//!
//! A thread holds as many swapped mutexes at once as it likes: past the
//! [`WAYS`] inline entries its cache spills into pages of its own from
//! mmap (jemalloc's fork handler holds every arena's mutex at once, four
//! arenas per CPU). Only if the kernel refuses a page does a node come
//! from a process-wide reserve of [`RESERVE`], and only with that gone
//! too does the thread wait for memory, said once through
//! [`on_starved`]; [`counts`] says which happened. A thread is never
//! stopped for the cache's sake. (Falling back to glibc's mutex for one
//! mutex in mid-execution was weighed and refused: other threads may be
//! inside the swapped lock's protocol on the same bytes, and a switch
//! they all agree on would cost a check on every call.)
//!
//! Where a thread's cache lives: `table.rs`.

use crate::raw::{AdaptiveNode, McsNode};
use std::cell::{Cell, UnsafeCell};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering::Acquire, Ordering::Relaxed};

mod table;
pub use table::{Table, ZeroIsDefault, PROBES, THREADS};

/// Entries per thread kept inline, where the fast path looks.
pub const WAYS: usize = 16;
/// Entries per spill page (a thread holding more than [`WAYS`] at once).
const SPILL_WAYS: usize = 64;
/// Entries of the process-wide reserve, used only when the kernel refuses
/// a spill page.
pub const RESERVE: usize = 256;

/// One cached node.
pub struct Entry<N> {
    /// The mutex it was last used for (0: none).
    owner: Cell<usize>,
    /// Taken by a lock that has not been unlocked yet. Atomic because a
    /// program may unlock a normal mutex from another thread (glibc allows
    /// it), and because reserve entries are claimed by any thread.
    held: AtomicBool,
    /// The node (reset in place when the entry changes mutex).
    node: UnsafeCell<N>,
}

impl<N> Entry<N> {
    fn free(&self) -> bool {
        !self.held.load(Relaxed)
    }
    fn cached(&self, addr: usize) -> bool {
        self.owner.get() == addr && self.free()
    }
}

/// Entries beyond a thread's first [`WAYS`]: a chain of pages of its own,
/// from mmap (never malloc: see `sys::pages`), kept for the thread's life
/// (a thread that held many mutexes at once, as an allocator's fork
/// handler does, will again). All-zero bytes are an empty page.
struct Spill<N> {
    next: *mut Spill<N>,
    entries: [Entry<N>; SPILL_WAYS],
}

/// A thread's entries.
pub struct Cache<N> {
    entries: [Entry<N>; WAYS],
    /// The first spill page (null: none yet).
    spill: Cell<*mut Spill<N>>,
}

/// What became of the nodes beyond the inline ones, over the process:
/// the interposer reports them.
pub mod counts {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

    /// Spill pages mapped.
    pub static SPILL_PAGES: AtomicU64 = AtomicU64::new(0);
    /// Nodes taken from the reserve because a spill page was refused.
    pub static RESERVE_TAKES: AtomicU64 = AtomicU64::new(0);
    /// Times a thread found no node anywhere and waited for memory.
    pub static MEMORY_WAITS: AtomicU64 = AtomicU64::new(0);
    /// The errno of the last refused spill page.
    pub static LAST_ERRNO: AtomicU64 = AtomicU64::new(0);

    /// (spill pages, reserve takes, memory waits, last errno).
    pub fn read() -> (u64, u64, u64, u64) {
        [&SPILL_PAGES, &RESERVE_TAKES, &MEMORY_WAITS, &LAST_ERRNO].map(|c| c.load(Relaxed)).into()
    }
}

/// Told, once per process, when a thread finds no node at all and starts
/// waiting for memory (the interposer says so where `contend run` reads
/// it); set once by the interposer at load.
static ON_STARVED: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Sets what is called when a thread first waits for memory for a node.
pub fn on_starved(f: fn()) {
    let _ = ON_STARVED.set(f);
}

/// The process-wide reserve: entries any thread claims with a CAS on
/// `held` when the kernel refuses it a spill page.
pub struct Reserve<N>(UnsafeCell<MaybeUninit<[Entry<N>; RESERVE]>>);

// SAFETY: an entry is claimed with a CAS on `held` (Acquire) and given
// back with a Release store, so one thread at a time uses its other
// fields, and each sees the last user's writes.
unsafe impl<N> Sync for Reserve<N> {}

impl<N: ZeroIsDefault> Reserve<N> {
    /// An empty reserve.
    pub const fn new() -> Self {
        Reserve(UnsafeCell::new(MaybeUninit::zeroed()))
    }

    fn claim(&self) -> Option<&Entry<N>> {
        // SAFETY: zeroed bytes are valid entries (`ZeroIsDefault`), and the
        // memory is static.
        let all = unsafe { &*(self.0.get() as *const [Entry<N>; RESERVE]) };
        all.iter().find(|e| e.held.compare_exchange(false, true, Acquire, Relaxed).is_ok())
    }
}

impl<N: ZeroIsDefault> Default for Reserve<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<N: ZeroIsDefault> Cache<N> {
    fn new() -> Self {
        Cache {
            entries: std::array::from_fn(|_| Entry {
                owner: Cell::new(0),
                held: AtomicBool::new(false),
                node: UnsafeCell::new(N::default()),
            }),
            spill: Cell::new(std::ptr::null_mut()),
        }
    }

    /// Where the entry for `addr` is looked for first.
    fn home(addr: usize) -> usize {
        (addr >> 4) % WAYS
    }

    /// The entries of the spill pages, in order.
    fn spilled(&self) -> impl Iterator<Item = &Entry<N>> {
        let mut page = self.spill.get();
        std::iter::from_fn(move || {
            // SAFETY: a page of this cache's chain: mapped by `grow`, never
            // unmapped while the cache lives.
            let p = unsafe { page.as_ref()? };
            page = p.next;
            Some(p.entries.iter())
        })
        .flatten()
    }

    /// The entry for the mutex at `addr`: the one it used last if free,
    /// else a free one, reset. Never fails: past the inline entries come
    /// spill pages, then the reserve, then a wait for memory.
    // Always inlined, as the two below: this is on the interposer's path of
    // every lock and unlock, and across the crate boundary LLVM declined.
    #[inline(always)]
    fn take(&self, addr: usize, reserve: &Reserve<N>) -> *const Entry<N> {
        let e = &self.entries[Self::home(addr)];
        if e.cached(addr) {
            e.held.store(true, Relaxed);
            return e;
        }
        self.take_slow(addr, reserve)
    }

    #[cold]
    fn take_slow(&self, addr: usize, reserve: &Reserve<N>) -> *const Entry<N> {
        let home = &self.entries[Self::home(addr)];
        let found = || self.entries.iter().chain(self.spilled()).find(|e| e.cached(addr));
        // A new mutex takes its home entry if free, so the next lock finds
        // it on the fast path.
        let free = || {
            Some(home)
                .filter(|e| e.free())
                .or_else(|| self.entries.iter().chain(self.spilled()).find(|e| e.free()))
        };
        let e = match found().or_else(free).or_else(|| self.grow()) {
            Some(e) => e,
            None => return Self::from_reserve(reserve),
        };
        if e.owner.get() != addr {
            // A node's state belongs to one lock: a fresh one for another.
            // SAFETY: the entry is not held, so no lock refers to its node.
            unsafe { *e.node.get() = N::default() };
            e.owner.set(addr);
        }
        e.held.store(true, Relaxed);
        e
    }

    /// A new spill page at the end of the chain, its first entry; None if
    /// the kernel refused the page.
    fn grow(&self) -> Option<&Entry<N>> {
        let len = std::mem::size_of::<Spill<N>>();
        let page = match crate::sys::pages::zeroed(len) {
            Ok(p) => p.as_ptr() as *mut Spill<N>,
            Err(errno) => {
                counts::LAST_ERRNO.store(errno as u64, Relaxed);
                return None;
            }
        };
        counts::SPILL_PAGES.fetch_add(1, Relaxed);
        let mut link = &self.spill;
        // SAFETY: each page of the chain is mapped and lives with the cache.
        while let Some(p) = unsafe { link.get().as_ref() } {
            // SAFETY: as above; `next` is a plain pointer field, written
            // only by this thread.
            link = unsafe { &*(std::ptr::addr_of!(p.next) as *const Cell<*mut Spill<N>>) };
        }
        link.set(page);
        // SAFETY: the page is mapped, zeroed (an empty page: null `next`,
        // free entries with default nodes, `ZeroIsDefault`), and now ours.
        Some(unsafe { &(*page).entries[0] })
    }

    /// An entry of the reserve, claimed (its node fresh); with none free,
    /// waits for memory, retrying both, and says so once.
    #[cold]
    fn from_reserve(reserve: &Reserve<N>) -> *const Entry<N> {
        loop {
            if let Some(e) = reserve.claim() {
                counts::RESERVE_TAKES.fetch_add(1, Relaxed);
                // SAFETY: claimed above: no other thread uses this node.
                unsafe { *e.node.get() = N::default() };
                e.owner.set(0);
                return e;
            }
            if counts::MEMORY_WAITS.fetch_add(1, Relaxed) == 0 {
                if let Some(f) = ON_STARVED.get() {
                    f();
                }
            }
            // nanosleep: no allocation.
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}

impl<N> Drop for Cache<N> {
    /// A thread-local cache (a thread that found no slot in the static
    /// table) gives its spill pages back when its thread exits, unless
    /// one of their entries is still held (a thread that exits holding a
    /// mutex leaves its node where the mutex points).
    fn drop(&mut self) {
        let chain = || {
            let mut page = self.spill.get();
            std::iter::from_fn(move || {
                let p = page;
                // SAFETY: the chain's pages are mapped while the cache lives.
                page = unsafe { p.as_ref() }?.next;
                Some(p)
            })
        };
        // SAFETY: as above.
        if chain().any(|p| unsafe { (*p).entries.iter().any(|e| !e.free()) }) {
            return;
        }
        let mut page = self.spill.get();
        while !page.is_null() {
            // SAFETY: mapped by `grow` with this length; no entry is held,
            // and the cache that referred to the page is going away. Its
            // `next` is read before the page goes.
            unsafe {
                let next = (*page).next;
                crate::sys::pages::release(
                    std::ptr::NonNull::new_unchecked(page.cast()),
                    std::mem::size_of::<Spill<N>>(),
                );
                page = next;
            }
        }
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
    ($node:ty, $table:ident, $reserve:ident, $cache:ident) => {
        static $table: Table<$node> = Table::new();
        static $reserve: Reserve<$node> = Reserve::new();
        thread_local! {
            static $cache: Cache<$node> = Cache::new();
        }
        impl Pooled for $node {
            #[inline(always)]
            fn take(addr: usize) -> *const $node {
                // The node is the entry's field: its address is the entry's
                // plus the field offset, turned back in `give`.
                let e = match $table.mine() {
                    Some(c) => c.take(addr, &$reserve),
                    None => $cache.with(|c| c.take(addr, &$reserve)),
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
                // Release: a reserve entry's next user, on any thread, sees
                // this one's last writes to the node.
                unsafe { (*e).held.store(false, std::sync::atomic::Ordering::Release) };
            }
            const PARKED: bool = true;
        }
    };
}

pooled!(McsNode, MCS_TABLE, MCS_RESERVE, MCS_NODES);
pooled!(AdaptiveNode, ADAPTIVE_TABLE, ADAPTIVE_RESERVE, ADAPTIVE_NODES);

#[cfg(test)]
mod tests {
    use super::*;

    fn release<N>(e: *const Entry<N>) {
        // SAFETY: `e` points into a cache or reserve alive in the test.
        unsafe { (*e).held.store(false, Relaxed) };
    }

    #[test]
    fn a_mutex_gets_its_entry_back_and_a_held_one_is_never_shared() {
        let (c, r) = (Cache::<McsNode>::new(), Reserve::new());
        let a = c.take(0x1000, &r);
        release(a);
        assert_eq!(c.take(0x1000, &r), a, "the same mutex, the same entry");
        let b = c.take(0x1000, &r);
        assert_ne!(b, a, "a held entry is not handed out again");
        let other = (0..WAYS - 2).map(|i| c.take(0x2000 + 64 * i, &r)).collect::<Vec<_>>();
        assert!(!other.contains(&a) && !other.contains(&b));
    }

    #[test]
    fn an_entry_taken_for_another_mutex_starts_fresh() {
        #[derive(Default)]
        struct State(Cell<u32>);
        // SAFETY: a Cell of a number: zero is its default.
        unsafe impl ZeroIsDefault for State {}
        let (c, r) = (Cache::<State>::new(), Reserve::new());
        let e = c.take(0x1000, &r);
        // SAFETY: `e` points into `c`, alive here; nobody else uses it.
        unsafe { (*(*e).node.get()).0.set(7) };
        release(e);
        assert_eq!(c.take(0x1000, &r), e);
        // SAFETY: as above.
        assert_eq!(unsafe { (*(*e).node.get()).0.get() }, 7, "kept for the same mutex");
        release(e);
        // Fill every entry with other mutexes: one of them takes `e` over.
        let taken: Vec<_> = (1..=WAYS).map(|i| c.take(0x1000 + 16 * i, &r)).collect();
        assert!(taken.contains(&e));
        // SAFETY: as above.
        assert_eq!(unsafe { (*(*e).node.get()).0.get() }, 0, "another mutex gets a fresh node");
    }

    #[test]
    fn a_thread_holds_thousands_at_once_in_spill_pages_and_reuses_them() {
        let (c, r) = (Cache::<McsNode>::new(), Reserve::new());
        let held: Vec<_> = (1..=5000).map(|i| c.take(0x10_0000 + 64 * i, &r)).collect();
        let distinct: std::collections::HashSet<_> = held.iter().copied().collect();
        assert_eq!(distinct.len(), held.len(), "every held mutex has its own node");
        let pages = c.spilled().count().div_ceil(SPILL_WAYS);
        assert_eq!(pages, (5000 - WAYS).div_ceil(SPILL_WAYS));
        held.iter().for_each(|&e| release(e));
        // The same mutexes again: their old entries, no new page.
        let again: Vec<_> = (1..=5000).map(|i| c.take(0x10_0000 + 64 * i, &r)).collect();
        assert_eq!(again, held);
        assert_eq!(c.spilled().count().div_ceil(SPILL_WAYS), pages);
        // The reserve was never needed (it is for a refused page).
        // SAFETY: zeroed entries, static for the test's length.
        let reserve = unsafe { &*(r.0.get() as *const [Entry<McsNode>; RESERVE]) };
        assert!(reserve.iter().all(Entry::free));
    }

    #[test]
    fn the_reserve_is_claimed_by_one_thread_at_a_time_and_given_back() {
        let r = Reserve::<McsNode>::new();
        let all: Vec<*const Entry<McsNode>> = (0..RESERVE).map(|_| r.claim().unwrap() as *const _).collect();
        assert!(r.claim().is_none(), "all {RESERVE} are held");
        release(all[7]);
        let again = std::thread::scope(|s| s.spawn(|| r.claim().map(|e| e as *const _ as usize)).join());
        assert_eq!(again.unwrap(), Some(all[7] as usize));
    }
}
