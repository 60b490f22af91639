//! The calling thread's identity without TLS: its thread pointer, one
//! register read. General-dynamic TLS, the only model stable Rust gives a
//! shared library, costs a call to `__tls_get_addr` per access, which is
//! too much for the interposer's path of every lock.

/// The calling thread's thread pointer: unique among live threads (glibc
/// reuses a dead thread's, with its stack, for a later thread).
#[inline(always)]
pub fn pointer() -> usize {
    let tp: usize;
    // SAFETY: reads the thread pointer (x86_64: the TCB's self pointer at
    // fs:0, which glibc sets for every thread); no memory is written and
    // no flags change.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        core::arch::asm!("mov {}, qword ptr fs:[0]", out(reg) tp, options(nostack, readonly, preserves_flags));
    }
    // SAFETY: reads the EL0 thread pointer register; no memory access.
    #[cfg(target_arch = "aarch64")]
    unsafe {
        core::arch::asm!("mrs {}, tpidr_el0", out(reg) tp, options(nostack, nomem, preserves_flags));
    }
    tp
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_thread_has_its_own_and_keeps_it() {
        let mine = super::pointer();
        assert_ne!(mine, 0);
        assert_eq!(super::pointer(), mine);
        let other = std::thread::spawn(super::pointer).join().unwrap();
        assert_ne!(other, mine);
    }
}
