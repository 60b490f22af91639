//! Where the measured loops sit in the binary: their own section,
//! `contend_measured`, starting on a page boundary.
//!
//! Why: at four threads and hold 0 the futex lock's rate moved by 10%
//! when an unrelated function was added elsewhere (docs/results/
//! placement.md): the linker had shifted the worker loop, and the lock's
//! contended path it calls, within their cache lines, and the loop's
//! fetch and branch-prediction behaviour changed with them. In a section
//! of their own the measured functions keep their offsets within a page
//! whatever the rest of the program grows or shrinks by, so two builds
//! differ in their measured code only when that code differs.
//!
//! What carries `#[link_section = "contend_measured"]`: the lock family's
//! worker (every lock's loop, with the lock's inlined fast paths) and the
//! out-of-line paths of our own locks (the `locks` crate's docs,
//! Placement). The hold and idle loops read the clock inline. What does
//! not: code of other crates called in the loop (parking_lot's and std's
//! slow paths) and calls into libc (pthread locks, syscalls), whose
//! addresses a change in contend still moves or never moved;
//! scripts/experiments/placement.py lists the calls that leave the
//! section. The name is a C identifier so the linker defines
//! `__start_contend_measured` and `__stop_contend_measured`, which the
//! tests use to check that the section is page-aligned and that the
//! functions are in it.

// The section's first (and only) alignment request: 4096 bytes. The
// functions placed in it by `#[link_section]` follow in the order the
// compiler emits them, each at its own 16-byte alignment. The `R` flag
// (SHF_GNU_RETAIN) keeps this empty piece from --gc-sections: nothing
// refers to it, and where the compiler splits the crate into several
// objects (the dev profile's codegen units) the linker dropped it with
// its alignment, so the section started wherever it fell. With one unit
// (release) it shares the functions' piece and was kept anyway.
// (global_asm! is unsafe code to the lint; this one emits no
// instructions.)
#[allow(unsafe_code)]
mod alignment {
    std::arch::global_asm!(".pushsection contend_measured,\"axR\",@progbits", ".p2align 12", ".popsection",);
}

/// The measured section's addresses, first to past-the-end, from the
/// linker's start and stop symbols: for the tests that check what is in it.
#[cfg(test)]
pub fn bounds() -> std::ops::Range<usize> {
    #[allow(unsafe_code)] // the linker's start and stop symbols are extern statics
    mod symbols {
        unsafe extern "C" {
            pub static __start_contend_measured: u8;
            pub static __stop_contend_measured: u8;
        }
    }
    // Only the symbols' addresses are taken; nothing is read.
    let start = std::ptr::addr_of!(symbols::__start_contend_measured) as usize;
    let stop = std::ptr::addr_of!(symbols::__stop_contend_measured) as usize;
    start..stop
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_measured_section_starts_on_a_page() {
        let section = super::bounds();
        assert!(!section.is_empty());
        assert_eq!(section.start % 4096, 0, "section at {:#x}", section.start);
    }
}
