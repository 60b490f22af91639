//! malloc/free through libc, so the allocator that runs is whichever one
//! the dynamic linker bound (glibc's, or one preloaded with LD_PRELOAD):
//! the point of `contend alloc`. Rust's own allocator is not used here.

use std::ptr::NonNull;

/// A block from malloc, freed explicitly (not on drop: the workload
/// decides which thread frees it, and that is what it measures).
#[derive(Debug)]
pub struct Block(NonNull<u8>);

// SAFETY: a malloc'd block may be freed by any thread; that is exactly the
// producer/consumer pattern being measured.
unsafe impl Send for Block {}

impl Block {
    /// malloc(size); aborts the worker on allocation failure (the run would
    /// measure nothing meaningful after that).
    #[inline]
    pub fn alloc(size: usize) -> Block {
        // SAFETY: plain malloc; a null result is handled below.
        let p = unsafe { libc::malloc(size.max(1)) }.cast::<u8>();
        // Touch the first byte so the allocation is not a pure no-op for
        // allocators that hand out untouched pages lazily.
        let p = NonNull::new(p).unwrap_or_else(|| std::process::abort());
        // SAFETY: the block is at least one byte long and ours.
        unsafe { p.as_ptr().write_volatile(1) };
        Block(p)
    }

    /// free().
    #[inline]
    pub fn free(self) {
        // SAFETY: the pointer came from malloc and is freed exactly once
        // (free consumes the block).
        unsafe { libc::free(self.0.as_ptr().cast()) };
    }
}
