//! Priority-inheritance futexes: FUTEX_LOCK_PI / FUTEX_UNLOCK_PI /
//! FUTEX_TRYLOCK_PI. The word holds the owner's TID (plus the kernel's
//! FUTEX_WAITERS and FUTEX_OWNER_DIED bits); the kernel queues waiters on an
//! rt_mutex that spins while the owner runs.

use std::sync::atomic::AtomicU32;

fn pi_op(word: &AtomicU32, op: libc::c_int, shared: bool) -> Result<(), i32> {
    let op = if shared { op } else { op | libc::FUTEX_PRIVATE_FLAG };
    // SAFETY: a valid aligned u32 owned by the caller's lock; null timeout
    // (wait forever); the other arguments are ignored by the PI operations.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op,
            0u32,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    }
}

/// Blocks in the kernel until this thread owns `word`. Returns after EINTR
/// or EAGAIN too (the caller retries its user-space fast path). `shared`:
/// the word is in memory shared between processes.
#[link_section = "contend_measured"] // crate docs: Placement
pub fn lock_pi(word: &AtomicU32, shared: bool) -> bool {
    match pi_op(word, libc::FUTEX_LOCK_PI, shared) {
        Ok(()) => true,
        Err(libc::EINTR) | Err(libc::EAGAIN) => false,
        Err(e) => panic!("FUTEX_LOCK_PI failed: errno {e}"),
    }
}

/// Asks the kernel to take `word` if it is free (the waiters bit may be set).
pub fn trylock_pi(word: &AtomicU32, shared: bool) -> bool {
    match pi_op(word, libc::FUTEX_TRYLOCK_PI, shared) {
        Ok(()) => true,
        Err(libc::EWOULDBLOCK) | Err(libc::EINTR) | Err(libc::EDEADLK) => false,
        Err(e) => panic!("FUTEX_TRYLOCK_PI failed: errno {e}"),
    }
}

/// Hands `word` to the highest-priority waiter, or frees it.
#[link_section = "contend_measured"] // crate docs: Placement
pub fn unlock_pi(word: &AtomicU32, shared: bool) {
    if let Err(e) = pi_op(word, libc::FUTEX_UNLOCK_PI, shared) {
        panic!("FUTEX_UNLOCK_PI failed: errno {e}");
    }
}
