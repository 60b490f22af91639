//! The few mutexes a thread holds by the swapped lock of a plain process,
//! so that their unlock need not read glibc's type field: that field
//! shares its cache line with the lock word, and a read of it at every
//! unlock cost a contended short-hold program about a third of its speed
//! (spin2.c of the what-if validation: 360 ms compiled in, 511 ms with
//! one read of a field on the lock's line before the releasing store).
//!
//! Kept in initial-exec TLS, defined in assembly: stable Rust gives a
//! shared library only general-dynamic TLS, a call to `__tls_get_addr`
//! per access. Initial-exec costs two loads (the variable's offset from
//! the GOT, the thread pointer) that do not depend on each other, and the
//! unlock's check sits inside every critical section: it replaced a
//! table of per-thread slots found by hashing the thread pointer, whose
//! chain of dependent loads and a multiply came before the releasing
//! store. The cost of initial-exec, that a library using it cannot be
//! loaded by dlopen once static TLS is spent, does not apply: this
//! library is preloaded, so its TLS is part of every thread's static
//! block, zeroed by glibc for each new thread.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Mutexes a thread remembers holding: the nesting of all but odd
/// programs; more are unlocked the slow way (their type read).
pub const HELD: usize = 4;

// `%nobits`, not `@nobits`: the form both x86_64's and aarch64's
// assemblers accept (`@` starts a comment on aarch64).
core::arch::global_asm!(
    ".pushsection .tbss,\"awT\",%nobits",
    ".balign 8",
    "contend_interpose_held:",
    ".zero 32",
    ".popsection",
);

const _: () = assert!(HELD * 8 == 32, "the assembly reserves 32 bytes");

/// The calling thread's entries.
#[inline(always)]
fn mine() -> &'static [AtomicUsize; HELD] {
    let offset: usize;
    // SAFETY: loads the TLS offset of `contend_interpose_held` that the
    // dynamic linker wrote into the GOT (initial-exec model); reads
    // memory only, changes no flags.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        core::arch::asm!("mov {}, qword ptr [rip + contend_interpose_held@GOTTPOFF]", out(reg) offset,
            options(nostack, readonly, pure, preserves_flags));
    }
    // SAFETY: as above, with aarch64's relocations for the same model.
    #[cfg(target_arch = "aarch64")]
    unsafe {
        core::arch::asm!("adrp {0}, :gottprel:contend_interpose_held",
            "ldr {0}, [{0}, #:gottprel_lo12:contend_interpose_held]", out(reg) offset,
            options(nostack, readonly, pure, preserves_flags));
    }
    let at = locks::sys::thread::pointer().wrapping_add(offset);
    // SAFETY: the thread pointer plus the variable's offset is this
    // thread's copy of the 32 bytes reserved above, 8-aligned, live as
    // long as the thread, and touched by no other thread.
    unsafe { &*(at as *const [AtomicUsize; HELD]) }
}

/// Remembers that the calling thread takes `m` by the plain swapped lock
/// (nothing if it already holds [`HELD`]).
#[inline(always)]
pub fn hold(m: usize) {
    if let Some(h) = mine().iter().find(|h| h.load(Relaxed) == 0) {
        h.store(m, Relaxed);
    }
}

/// Whether this thread took `m` by the plain swapped lock and has not let
/// it go: then `m` is swapped for certain (a mutex's type does not change
/// while it is held), and the entry is cleared.
#[inline(always)]
pub fn let_go(m: usize) -> bool {
    match mine().iter().find(|h| h.load(Relaxed) == m) {
        Some(h) => {
            h.store(0, Relaxed);
            true
        }
        None => false,
    }
}

/// Forgets `m` if this thread remembers holding it (every entry: one
/// left by an unlock in another thread can repeat): called where `m` is
/// found to be glibc's (re-initialized with another type since, or
/// unlocked by another thread, which glibc tolerates for a normal mutex).
#[cold]
pub fn forget(m: usize) {
    while let_go(m) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_lets_go_only_of_what_it_took_and_forgets_what_became_glibc_s() {
        std::thread::spawn(|| {
            hold(0x1000);
            hold(0x2000);
            assert!(!let_go(0x3000), "never taken");
            assert!(std::thread::spawn(|| !let_go(0x1000)).join().unwrap(), "another thread's");
            assert!(let_go(0x2000) && !let_go(0x2000), "once");
            forget(0x1000);
            assert!(!let_go(0x1000));
            // More than HELD at once: the rest go the slow way.
            (1..=HELD + 2).for_each(|i| hold(i * 0x100));
            let known = (1..=HELD + 2).filter(|&i| let_go(i * 0x100)).count();
            assert_eq!(known, HELD);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn each_thread_starts_with_nothing_held() {
        hold(0x4000);
        let theirs = std::thread::spawn(|| mine().iter().all(|h| h.load(Relaxed) == 0)).join().unwrap();
        assert!(theirs, "a new thread's entries are zero");
        assert!(let_go(0x4000));
    }
}
