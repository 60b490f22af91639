//! pthread rwlocks and spinlocks: always glibc's (nothing swaps them), and
//! with `--profile` counted per lock like the mutexes: acquisitions,
//! contended ones (the try-lock that comes first failed), the program's
//! own failed try-locks, and the wait (total and largest), with readers
//! and writers apart (a spinlock counts as a writer: it is exclusive).
//!
//! What differs from a mutex's profile, and why:
//! - Readers hold a rwlock together, so its counts are atomic adds, not a
//!   holder's plain stores: a profiled read lock adds an atomic add to a
//!   line the readers share (they already share the rwlock's own).
//! - No holds, stacks of contended acquisitions or holders: a read hold
//!   has no one owner to charge, and unlocks are not interposed (glibc's
//!   are called directly). A lock is named by the stack of its first
//!   acquisition.
//!
//! Only EBUSY from the try-lock first means "held: wait"; any other
//! result (EDEADLK for a write lock its holder asks again, EAGAIN at the
//! readers' limit, EINVAL) is the call's own and is returned unchanged.

use crate::glibc::real;
use crate::stack::{self, Frames};
use libc::{c_int, clockid_t, pthread_rwlock_t, pthread_spinlock_t, timespec};
use locks::sys::clock::monotonic_ns as now;
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering::Relaxed};

/// Records in the table.
pub const SLOTS: usize = 1024;

/// What kind of lock a record counts.
pub const RWLOCK: u8 = 1;
/// See [`RWLOCK`].
pub const SPINLOCK: u8 = 2;

/// One side's counts (readers, or writers).
pub struct Side {
    pub acquisitions: AtomicU64,
    pub contended: AtomicU64,
    pub try_failed: AtomicU64,
    pub wait_ns: AtomicU64,
    pub max_wait_ns: AtomicU64,
}

impl Side {
    #[allow(clippy::declare_interior_mutable_const)]
    const EMPTY: Side = Side {
        acquisitions: AtomicU64::new(0),
        contended: AtomicU64::new(0),
        try_failed: AtomicU64::new(0),
        wait_ns: AtomicU64::new(0),
        max_wait_ns: AtomicU64::new(0),
    };

    fn clear(&self) {
        for f in [&self.acquisitions, &self.contended, &self.try_failed, &self.wait_ns, &self.max_wait_ns] {
            f.store(0, Relaxed);
        }
    }
}

/// One rwlock's or spinlock's counts.
pub struct Record {
    /// Its address (0: free).
    pub key: AtomicUsize,
    /// [`RWLOCK`] or [`SPINLOCK`].
    pub kind: AtomicU8,
    /// The return address of its first acquisition.
    pub site: AtomicUsize,
    /// The stack of its first acquisition.
    pub first_stack: Frames,
    /// Readers (rwlocks only).
    pub read: Side,
    /// Writers, and a spinlock's holders.
    pub write: Side,
}

impl Record {
    #[allow(clippy::declare_interior_mutable_const)]
    const EMPTY: Record = Record {
        key: AtomicUsize::new(0),
        kind: AtomicU8::new(0),
        site: AtomicUsize::new(0),
        first_stack: Frames::EMPTY,
        read: Side::EMPTY,
        write: Side::EMPTY,
    };
}

impl crate::slots::Slot for Record {
    fn key(&self) -> &AtomicUsize {
        &self.key
    }
}

/// The table's records without its overflow record.
#[inline(always)]
fn slots() -> &'static [Record; SLOTS] {
    TABLE.first_chunk().expect("the table holds SLOTS records and one more")
}

/// The records, then the overflow record (locks that found no slot,
/// counted together).
pub static TABLE: [Record; SLOTS + 1] = [const { Record::EMPTY }; SLOTS + 1];

/// The record of the lock at `key`, claimed for it if new.
fn record(key: usize, kind: u8, site: usize) -> &'static Record {
    match crate::slots::find(slots(), key).map(|(i, new)| (&TABLE[i], new)) {
        Some((r, true)) => {
            r.kind.store(kind, Relaxed);
            r.site.store(site, Relaxed);
            if site != 0 {
                r.first_stack.store(&stack::capture(site));
            }
            r
        }
        Some((r, false)) => r,
        None => &TABLE[SLOTS],
    }
}

/// A profiled blocking acquisition: `try_first`, and on EBUSY `blocking`,
/// timed; counted on `side` when it acquired.
fn acquire(side: &Side, try_first: impl FnOnce() -> c_int, blocking: impl FnOnce() -> c_int) -> c_int {
    let first = try_first();
    if first != libc::EBUSY {
        if first == 0 {
            side.acquisitions.fetch_add(1, Relaxed);
        }
        return first;
    }
    let t0 = now();
    let rc = blocking();
    if rc == 0 {
        let w = now().saturating_sub(t0);
        side.acquisitions.fetch_add(1, Relaxed);
        side.contended.fetch_add(1, Relaxed);
        side.wait_ns.fetch_add(w, Relaxed);
        side.max_wait_ns.fetch_max(w, Relaxed);
    }
    rc
}

/// A profiled try-lock by the program.
fn try_acquire(side: &Side, try_lock: impl FnOnce() -> c_int) -> c_int {
    let rc = try_lock();
    match rc {
        0 => side.acquisitions.fetch_add(1, Relaxed),
        libc::EBUSY => side.try_failed.fetch_add(1, Relaxed),
        _ => 0,
    };
    rc
}

/// Which rwlock call: the side and how it waits.
#[derive(Clone, Copy)]
pub enum RwCall {
    /// rdlock / wrlock.
    Lock,
    /// tryrdlock / trywrlock.
    Try,
    /// timedrdlock / timedwrlock (CLOCK_REALTIME).
    Timed(*const timespec),
    /// clockrdlock / clockwrlock.
    Clock(clockid_t, *const timespec),
}

/// A pthread_rwlock_{,try,timed,clock}{rd,wr}lock call: glibc's, counted
/// when `profile`.
///
/// # Safety
/// `rw` points at a live, initialized rwlock; a deadline points at a
/// timespec (glibc checks it).
pub unsafe fn rwlock(
    rw: *mut pthread_rwlock_t,
    write: bool,
    call: RwCall,
    site: usize,
    profile: bool,
) -> c_int {
    let g = real();
    // SAFETY: the caller's contract, passed on to glibc.
    let call_glibc = |call: RwCall| unsafe {
        match (call, write) {
            (RwCall::Lock, false) => (g.rwlock_rdlock)(rw),
            (RwCall::Lock, true) => (g.rwlock_wrlock)(rw),
            (RwCall::Try, false) => (g.rwlock_tryrdlock)(rw),
            (RwCall::Try, true) => (g.rwlock_trywrlock)(rw),
            (RwCall::Timed(t), false) => (g.rwlock_timedrdlock)(rw, t),
            (RwCall::Timed(t), true) => (g.rwlock_timedwrlock)(rw, t),
            (RwCall::Clock(c, t), false) => (g.rwlock_clockrdlock)(rw, c, t),
            (RwCall::Clock(c, t), true) => (g.rwlock_clockwrlock)(rw, c, t),
        }
    };
    if !profile {
        return call_glibc(call);
    }
    let r = record(rw as usize, RWLOCK, site);
    let side = if write { &r.write } else { &r.read };
    match call {
        RwCall::Try => try_acquire(side, || call_glibc(RwCall::Try)),
        // glibc refuses a clock it cannot wait on before it looks at the
        // lock; so does this, before the try-lock.
        RwCall::Clock(c, _) if c != libc::CLOCK_REALTIME && c != libc::CLOCK_MONOTONIC => libc::EINVAL,
        blocking => acquire(side, || call_glibc(RwCall::Try), || call_glibc(blocking)),
    }
}

/// pthread_spin_lock (`try_only`: pthread_spin_trylock): glibc's, counted
/// when `profile`.
///
/// # Safety
/// `s` points at a live, initialized spinlock.
pub unsafe fn spin(s: *mut pthread_spinlock_t, try_only: bool, site: usize, profile: bool) -> c_int {
    let g = real();
    // SAFETY: the caller's contract, passed on to glibc.
    let (try_lock, lock) = unsafe { (|| (g.spin_trylock)(s), || (g.spin_lock)(s)) };
    if !profile {
        return if try_only { try_lock() } else { lock() };
    }
    let r = record(s as usize, SPINLOCK, site);
    if try_only {
        try_acquire(&r.write, try_lock)
    } else {
        acquire(&r.write, try_lock, lock)
    }
}

/// A forked child profiles itself from zero.
pub fn clear_in_child() {
    for r in TABLE.iter().filter(|r| r.key.load(Relaxed) != 0).chain([&TABLE[SLOTS]]) {
        r.read.clear();
        r.write.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_try_first_waits_and_counts_and_other_errors_pass_through() {
        let side = Side::EMPTY;
        assert_eq!(acquire(&side, || 0, || unreachable!()), 0);
        assert_eq!(acquire(&side, || libc::EBUSY, || 0), 0);
        assert_eq!(acquire(&side, || libc::EBUSY, || libc::EDEADLK), libc::EDEADLK);
        assert_eq!(acquire(&side, || libc::EAGAIN, || unreachable!()), libc::EAGAIN);
        assert_eq!(side.acquisitions.load(Relaxed), 2);
        assert_eq!(side.contended.load(Relaxed), 1);
        assert_eq!(try_acquire(&side, || libc::EBUSY), libc::EBUSY);
        assert_eq!(try_acquire(&side, || 0), 0);
        assert_eq!((side.acquisitions.load(Relaxed), side.try_failed.load(Relaxed)), (3, 1));
    }
}
