//! The arena a run lives in: one anonymous mapping holding the lock, a
//! header (witness, stop flag, start gate) and one slot per worker, each in
//! its own cache line. Mapped MAP_SHARED for worker processes (forked
//! children inherit the mapping and share it), MAP_PRIVATE for threads, so
//! both modes run the same code on the same layout.

use crate::{LockConfig, ProcessShared, RawLock};
use std::marker::PhantomData;
use std::{io, mem, ptr};

/// Cache-line alignment for every part of the arena (two lines, as
/// crossbeam's CachePadded uses on x86_64, against adjacent-line prefetch).
const ALIGN: usize = 128;

const fn round_up(n: usize) -> usize {
    n.div_ceil(ALIGN) * ALIGN
}

/// Lock `L`, header `H` and `n` slots `S` in one mapping.
pub struct Arena<L, H, S> {
    base: *mut u8,
    bytes: usize,
    n: usize,
    parts: PhantomData<(L, H, S)>,
}

// SAFETY: the arena only hands out shared references to L, H and S, which
// are Sync; the mapping itself is plain memory.
unsafe impl<L: Sync, H: Sync, S: Sync> Sync for Arena<L, H, S> {}
// SAFETY: as above; nothing in it is tied to the creating thread.
unsafe impl<L: Send + Sync, H: Send + Sync, S: Send + Sync> Send for Arena<L, H, S> {}

impl<L, H, S> Arena<L, H, S> {
    const HEADER_AT: usize = round_up(mem::size_of::<L>());
    const SLOTS_AT: usize = Self::HEADER_AT + round_up(mem::size_of::<H>());
    const SLOT_STRIDE: usize = round_up(mem::size_of::<S>());

    /// Maps the arena and moves `lock`, `header` and the `n` slots `slot(i)`
    /// makes into it.
    fn place(
        share: libc::c_int,
        lock: L,
        header: H,
        n: usize,
        mut slot: impl FnMut(usize) -> S,
    ) -> Result<Self, String> {
        assert!(
            mem::align_of::<L>() <= ALIGN && mem::align_of::<H>() <= ALIGN && mem::align_of::<S>() <= ALIGN
        );
        let len = Self::SLOTS_AT + n * Self::SLOT_STRIDE;
        // SAFETY: a fresh anonymous mapping; no existing memory is touched.
        let base = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len.max(1),
                libc::PROT_READ | libc::PROT_WRITE,
                share | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(format!(
                "mmap of {len} bytes for the run's arena failed: {} (memory limits: ulimit -v \
                 (RLIMIT_AS), vm.overcommit_memory, cgroup memory.max)",
                io::Error::last_os_error()
            ));
        }
        let base = base.cast::<u8>();
        // SAFETY: the mapping is page-aligned (so ALIGN-aligned) and large
        // enough for the lock, the header and `n` slots at the offsets
        // computed above; each is written exactly once before any use.
        unsafe {
            base.cast::<L>().write(lock);
            base.add(Self::HEADER_AT).cast::<H>().write(header);
            for i in 0..n {
                base.add(Self::SLOTS_AT + i * Self::SLOT_STRIDE).cast::<S>().write(slot(i));
            }
        }
        Ok(Self { base, bytes: len, n, parts: PhantomData })
    }

    /// The lock.
    pub fn lock(&self) -> &L {
        // SAFETY: written in `build`, alive until drop.
        unsafe { &*self.base.cast::<L>() }
    }

    /// The header.
    pub fn header(&self) -> &H {
        // SAFETY: as for `lock`.
        unsafe { &*self.base.add(Self::HEADER_AT).cast::<H>() }
    }

    /// Worker `i`'s slot.
    pub fn slot(&self, i: usize) -> &S {
        assert!(i < self.n, "slot {i} of {}", self.n);
        // SAFETY: as for `lock`; `i` is in bounds.
        unsafe { &*self.base.add(Self::SLOTS_AT + i * Self::SLOT_STRIDE).cast::<S>() }
    }

    /// Number of slots.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether there are no slots.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
}

impl<L: RawLock, H, S> Arena<L, H, S> {
    /// An arena for threads of this process.
    pub fn private(config: &LockConfig, header: H, n: usize, slot: impl Fn() -> S) -> Result<Self, String> {
        Self::place(libc::MAP_PRIVATE, L::try_new(config)?, header, n, |_| slot())
    }
}

impl<H, S> Arena<(), H, S> {
    /// An arena with no lock: a header and the given slots, MAP_SHARED
    /// when `shared` (for processes forked after it is built). Whatever
    /// the slots hold must then work across processes, which the caller
    /// checks (see `wake::Channel::PROCESS_SHARED`).
    pub fn plain(shared: bool, header: H, slots: Vec<S>) -> Result<Self, String> {
        let share = if shared { libc::MAP_SHARED } else { libc::MAP_PRIVATE };
        let n = slots.len();
        let mut slots = slots.into_iter();
        Self::place(share, (), header, n, |_| slots.next().expect("n slots"))
    }
}

impl<L: ProcessShared, H, S> Arena<L, H, S> {
    /// An arena shared with worker processes forked after it was built.
    /// Only locks that work across processes may live here, which is what
    /// [`ProcessShared`] promises.
    pub fn shared(config: &LockConfig, header: H, n: usize, slot: impl Fn() -> S) -> Result<Self, String> {
        Self::place(libc::MAP_SHARED, L::try_new(config)?, header, n, |_| slot())
    }
}

impl<L, H, S> Drop for Arena<L, H, S> {
    fn drop(&mut self) {
        // SAFETY: each part was written once in `build` and is dropped once
        // here, then the mapping is released. Forked children never run this
        // (they leave with _exit), so a shared lock is destroyed only by its
        // creator.
        unsafe {
            ptr::drop_in_place(self.base.cast::<L>());
            ptr::drop_in_place(self.base.add(round_up(mem::size_of::<L>())).cast::<H>());
            let slots_at = round_up(mem::size_of::<L>()) + round_up(mem::size_of::<H>());
            for i in 0..self.n {
                ptr::drop_in_place(self.base.add(slots_at + i * round_up(mem::size_of::<S>())).cast::<S>());
            }
            libc::munmap(self.base.cast(), self.bytes.max(1));
        }
    }
}
