//! The calling thread's kernel TID, cached per thread (PI futexes store the
//! owner's TID in the lock word).

use std::cell::Cell;

thread_local! {
    static TID: Cell<u32> = const { Cell::new(0) };
}

/// This thread's TID.
#[inline]
pub fn current() -> u32 {
    TID.with(|t| {
        let cached = t.get();
        if cached != 0 {
            return cached;
        }
        // SAFETY: gettid takes no arguments and cannot fail.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) } as u32;
        t.set(tid);
        tid
    })
}
