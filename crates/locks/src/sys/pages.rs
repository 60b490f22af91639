//! Zeroed private pages straight from the kernel, for bookkeeping that
//! must not call the program's allocator: the interposer's lock nodes are
//! taken while the allocator itself may be locking (jemalloc's fork
//! handler locks every arena mutex at once), so malloc there would
//! re-enter the very locks being taken.

use std::ptr::NonNull;

/// A zero-filled, private, read-write mapping of at least `len` bytes
/// (page-aligned), or the errno mmap failed with.
pub fn zeroed(len: usize) -> Result<NonNull<u8>, i32> {
    // SAFETY: a fresh anonymous mapping; no existing memory is touched.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len.max(1),
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::ENOMEM));
    }
    NonNull::new(p.cast()).ok_or(libc::ENOMEM)
}

/// Gives back a mapping [`zeroed`] made.
///
/// # Safety
/// `p` and `len` are those of one [`zeroed`] call, and nothing refers to
/// the memory any more.
pub unsafe fn release(p: NonNull<u8>, len: usize) {
    // SAFETY: the caller's contract: the whole mapping, unused.
    unsafe { libc::munmap(p.as_ptr().cast(), len.max(1)) };
}

#[cfg(test)]
mod tests {
    #[test]
    fn pages_come_zeroed_and_go_back() {
        let p = super::zeroed(10_000).unwrap();
        // SAFETY: 10 000 bytes were mapped just above.
        let bytes = unsafe { std::slice::from_raw_parts_mut(p.as_ptr(), 10_000) };
        assert!(bytes.iter().all(|&b| b == 0));
        bytes[9_999] = 7;
        // SAFETY: the mapping just made; `bytes` is not used after.
        unsafe { super::release(p, 10_000) };
        assert_eq!(super::zeroed(usize::MAX - 4095), Err(libc::ENOMEM));
    }
}
