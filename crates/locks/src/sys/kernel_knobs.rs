//! The prctl knobs of recent kernels that bear on locks: the process's
//! private futex hash (PR_FUTEX_HASH, Linux 6.17) and rseq time-slice
//! extension (PR_RSEQ_SLICE_EXTENSION, Linux 7.0). Each call reports the
//! kernel's own answer; a kernel that lacks the knob says EINVAL, which is
//! passed on for the caller to put in words.

use std::io;

/// prctl option numbers from include/uapi/linux/prctl.h (the libc crate
/// does not have them yet).
const PR_FUTEX_HASH: libc::c_int = 78;
const PR_FUTEX_HASH_SET_SLOTS: libc::c_ulong = 1;
const PR_FUTEX_HASH_GET_SLOTS: libc::c_ulong = 2;
const PR_RSEQ_SLICE_EXTENSION: libc::c_int = 79;
const PR_RSEQ_SLICE_EXTENSION_GET: libc::c_ulong = 1;

fn prctl(option: libc::c_int, a2: libc::c_ulong, a3: libc::c_ulong) -> io::Result<libc::c_int> {
    // SAFETY: prctl with integer arguments only; none is a pointer.
    let r = unsafe { libc::prctl(option, a2, a3, 0 as libc::c_ulong, 0 as libc::c_ulong) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// The size of this process's private futex hash: 0 while it uses the
/// global hash (a single-threaded process, or after [`set_futex_hash_slots`]
/// with 0).
pub fn futex_hash_slots() -> io::Result<u32> {
    prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_GET_SLOTS, 0).map(|n| n as u32)
}

/// Gives this process a private futex hash of `slots` buckets (a power of
/// two, at least 2), or 0: the global hash, from which the kernel lets no
/// process return (EBUSY afterwards).
pub fn set_futex_hash_slots(slots: u32) -> io::Result<()> {
    prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, libc::c_ulong::from(slots)).map(|_| ())
}

/// Whether this thread has rseq time-slice extension enabled; an error
/// (EINVAL) where the kernel has no such prctl.
pub fn slice_extension() -> io::Result<bool> {
    prctl(PR_RSEQ_SLICE_EXTENSION, PR_RSEQ_SLICE_EXTENSION_GET, 0).map(|r| r != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_futex_hash_is_read_or_refused_in_words() {
        // Whatever the kernel, the answer is a size or an OS error, never a
        // panic; where the prctl exists, a size is 0 or a power of two.
        if let Ok(n) = futex_hash_slots() {
            assert!(n == 0 || n.is_power_of_two(), "{n}");
        }
        let _ = slice_extension();
    }
}
