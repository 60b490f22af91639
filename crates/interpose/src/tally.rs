//! How many acquisitions went to the swapped lock and how many to glibc's
//! mutex, in every mode: the report that says a lock ran must be able to
//! say it was used (a program that re-execs itself with LD_PRELOAD
//! cleared, or takes no pthread mutex at all, runs no swapped lock).
//!
//! Counted per thread, with no atomic read-modify-write on the path: each
//! thread owns a slot of a static table, found by hashing its thread
//! pointer (one register read: `fs:0` on x86_64, `tpidr_el0` on aarch64),
//! and adds to it with a plain load and store. A thread that exits leaves
//! its counts in its slot; glibc reuses a dead thread's stack, and with it
//! its thread pointer, so the next thread there goes on adding to the same
//! slot (the counts are totals, so that is harmless). A thread that finds
//! no slot within [`PROBES`] adds to a shared overflow slot atomically.
//! No allocation, no TLS access (general-dynamic TLS costs a call per
//! access in a preloaded library; the initial-exec TLS of `held.rs` cannot
//! be summed over threads at exit), and no destructor.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};

/// Slots: threads alive at once, or whose stacks glibc did not reuse.
const SLOTS: usize = 1024;
/// Slots tried before the overflow slot.
const PROBES: usize = 16;

/// One thread's counts, alone in its cache line.
#[repr(align(64))]
struct Slot {
    /// The owner's thread pointer (0: free).
    owner: AtomicUsize,
    swapped: AtomicU64,
    glibc: AtomicU64,
    /// The thread is walking its stack (crate::stack).
    walking: AtomicBool,
}

impl Slot {
    // Only the initializer of the statics' elements.
    #[allow(clippy::declare_interior_mutable_const)]
    const EMPTY: Slot = Slot {
        owner: AtomicUsize::new(0),
        swapped: AtomicU64::new(0),
        glibc: AtomicU64::new(0),
        walking: AtomicBool::new(false),
    };
}

static TABLE: [Slot; SLOTS] = [const { Slot::EMPTY }; SLOTS];
static OVERFLOW: Slot = Slot::EMPTY;

use locks::sys::thread::pointer as thread_pointer;

#[inline(always)]
fn home(tp: usize) -> usize {
    (tp.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 54) % SLOTS
}

/// The calling thread's slot.
#[inline(always)]
fn slot() -> &'static Slot {
    let tp = thread_pointer();
    let s = &TABLE[home(tp)];
    if s.owner.load(Relaxed) == tp {
        return s;
    }
    claim(tp)
}

#[cold]
fn claim(tp: usize) -> &'static Slot {
    let start = home(tp);
    for i in 0..PROBES {
        let s = &TABLE[(start + i) % SLOTS];
        match s.owner.load(Relaxed) {
            o if o == tp => return s,
            0 if s.owner.compare_exchange(0, tp, Relaxed, Relaxed).is_ok() => return s,
            _ => {}
        }
    }
    &OVERFLOW
}

#[inline(always)]
fn add(s: &'static Slot, field: &'static AtomicU64) {
    if std::ptr::eq(s, &OVERFLOW) {
        field.fetch_add(1, Relaxed);
    } else {
        // Only the owning thread writes its slot.
        field.store(field.load(Relaxed).wrapping_add(1), Relaxed);
    }
}

/// One acquisition by the swapped lock.
#[inline(always)]
pub fn swapped() {
    let s = slot();
    add(s, &s.swapped);
}

/// One acquisition of `m` by the plain swapped lock, remembered until its
/// unlock (`held.rs`); called just before the lock is taken (it cannot
/// fail), so that none of this lengthens the critical section.
#[inline(always)]
pub fn swapped_holding(m: usize) {
    swapped();
    crate::held::hold(m);
}

/// One acquisition of glibc's mutex through the interposer.
#[inline(always)]
pub fn glibc() {
    let s = slot();
    add(s, &s.glibc);
}

/// While alive, the calling thread is walking its stack.
pub struct Walking(&'static Slot);

impl Drop for Walking {
    fn drop(&mut self) {
        self.0.walking.store(false, Relaxed);
    }
}

/// Marks the calling thread as walking its stack; None if it already is
/// (a lock taken inside the unwinder) or has no slot of its own.
pub fn walking() -> Option<Walking> {
    let s = slot();
    if std::ptr::eq(s, &OVERFLOW) || s.walking.load(Relaxed) {
        return None;
    }
    s.walking.store(true, Relaxed);
    Some(Walking(s))
}

/// (swapped, glibc) acquisitions of this process so far.
pub fn totals() -> (u64, u64) {
    TABLE
        .iter()
        .chain([&OVERFLOW])
        .fold((0, 0), |(a, b), s| (a + s.swapped.load(Relaxed), b + s.glibc.load(Relaxed)))
}

/// A forked child counts from zero: its parent reports what came before.
pub fn clear_in_child() {
    for s in TABLE.iter().chain([&OVERFLOW]) {
        s.swapped.store(0, Relaxed);
        s.glibc.store(0, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_count_apart_and_the_totals_add_up() {
        let (s0, g0) = totals();
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..10_000 {
                        swapped();
                    }
                    glibc();
                });
            }
        });
        let (s1, g1) = totals();
        assert_eq!(s1 - s0, 80_000);
        // Other tests of this harness lock glibc mutexes meanwhile.
        assert!(g1 - g0 >= 8);
        assert_ne!(thread_pointer(), 0);
        let other = std::thread::spawn(thread_pointer).join().unwrap();
        assert_ne!(other, thread_pointer(), "each live thread has its own pointer");
    }
}
