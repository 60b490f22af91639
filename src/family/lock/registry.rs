//! The lock registry: every lock `contend lock --lock NAME` can run.
//!
//! Adding a lock is one entry here (plus its file in crates/locks):
//! `entry` records its capabilities and monomorphizes the workload for it;
//! `tried` also registers its try-lock check; `procs` names the type to use
//! in shared memory for `--procs`; `needs` names a probe for whether this
//! machine can run it.

use crate::family::lock::workload::{self, RunContext};
use crate::model::lock::LockSample;
use crate::model::lock::Point;
use anyhow::Result;
use locks::raw::*;
use locks::{Caps, LockConfig, ProcessShared, RawLock, RawRwLock, TryLock};

/// Runs one point with a particular lock type.
pub type RunFn = fn(&Point, &RunContext) -> Result<LockSample>;
/// A check that passes or says what failed.
pub type CheckFn = fn() -> Result<(), String>;
/// A check of a lock built with the given configuration.
pub type ConfigCheckFn = fn(&LockConfig) -> Result<(), String>;

/// One lock the CLI knows.
#[derive(Debug)]
pub struct LockEntry {
    /// CLI name.
    pub name: &'static str,
    /// Family, for `contend list locks`.
    pub family: &'static str,
    /// One line on what it is.
    pub about: &'static str,
    /// What it supports.
    pub caps: Caps,
    /// The workload monomorphized for it, in threads.
    pub run: RunFn,
    /// The workload in worker processes, for locks that work across them.
    pub run_procs: Option<RunFn>,
    /// Whether it can run on this machine, and if not why.
    pub available: CheckFn,
    /// Its try-lock semantics check, for locks that offer try-lock.
    pub try_check: Option<ConfigCheckFn>,
    /// A deliberately broken lock that exists to test contend itself;
    /// conformance skips it and `list` says so.
    pub test_only: bool,
}

fn always() -> Result<(), String> {
    Ok(())
}

const fn entry<L: RawLock>(name: &'static str, family: &'static str, about: &'static str) -> LockEntry {
    LockEntry {
        name,
        family,
        about,
        caps: L::CAPS,
        run: workload::run::<L>,
        run_procs: None,
        available: always,
        try_check: None,
        test_only: false,
    }
}

const fn tried<L: TryLock>(name: &'static str, family: &'static str, about: &'static str) -> LockEntry {
    LockEntry { try_check: Some(locks::check::try_semantics::<L>), ..entry::<L>(name, family, about) }
}

/// A reader-writer lock: its workload draws reads and writes (`--read`).
const fn rw<L: RawRwLock + TryLock>(name: &'static str, about: &'static str) -> LockEntry {
    LockEntry { run: workload::run_rw::<L>, ..tried::<L>(name, "rwlock", about) }
}

impl LockEntry {
    const fn needs(self, available: CheckFn) -> Self {
        LockEntry { available, ..self }
    }

    /// Marks a lock that exists only to test contend.
    const fn test_only(self) -> Self {
        LockEntry { test_only: true, ..self }
    }

    /// Runs `--procs` with `S`, the lock's shared-memory form.
    const fn procs<S: ProcessShared>(self) -> Self {
        LockEntry { run_procs: Some(workload::run_procs::<S>), ..self }
    }
}

/// Every lock, in the order `contend list locks` shows them.
pub static LOCKS: &[LockEntry] = &[
    tried::<Seed>(
        "seed",
        "futex",
        "futex-scalability.c's lock: CAS retries, FUTEX_WAIT, FUTEX_WAKE on every unlock",
    )
    .procs::<SharedSeed>(),
    tried::<FutexMutex>(
        "futex",
        "futex",
        "Drepper's 3-state mutex with a spin budget; wakes only when waiters may exist",
    )
    .procs::<SharedFutexMutex>(),
    tried::<Futex2Mutex>(
        "futex2",
        "futex",
        "the 3-state mutex over futex_wait(2)/futex_wake(2) (Linux 6.7+)",
    )
    .procs::<SharedFutex2Mutex>()
    .needs(locks::sys::futex2::available),
    tried::<PiFutex>(
        "pi",
        "futex",
        "FUTEX_LOCK_PI/FUTEX_UNLOCK_PI: owner TID in the word, the kernel's rt_mutex spins",
    )
    .procs::<SharedPiFutex>(),
    tried::<Adaptive>(
        "adaptive",
        "futex",
        "3-state mutex with the FUTEX_LOCK RFC's waiting policies (--spinners none|one|many)",
    )
    .procs::<SharedAdaptive>(),
    tried::<Tas>("tas", "spin", "test-and-set spinlock").procs::<Tas>(),
    tried::<Ttas>("ttas", "spin", "test-and-test-and-set spinlock").procs::<Ttas>(),
    tried::<Backoff>("backoff", "spin", "TTAS with bounded exponential backoff").procs::<Backoff>(),
    tried::<PthreadSpin>(
        "pthread-spin",
        "spin",
        "glibc's x86-64 pthread_spin_lock: lock dec, then pause until free",
    )
    .procs::<PthreadSpin>(),
    tried::<YieldSpin>("yield", "spin", "TTAS that calls sched_yield while the lock is taken")
        .procs::<YieldSpin>(),
    tried::<Ticket>("ticket", "spin", "ticket lock: FIFO, all waiters spin on one line").procs::<Ticket>(),
    tried::<Mcs>("mcs", "spin", "MCS queue lock: FIFO, each waiter spins on its own node"),
    entry::<Clh>("clh", "spin", "CLH queue lock: FIFO, waiters spin on the predecessor's node"),
    tried::<PthreadMutex>("pthread", "library", "glibc's default pthread_mutex_t")
        .procs::<SharedPthreadMutex>(),
    tried::<PthreadAdaptive>(
        "pthread-adaptive",
        "library",
        "glibc PTHREAD_MUTEX_ADAPTIVE_NP: spins a moving-average budget, then sleeps",
    )
    .procs::<SharedPthreadAdaptive>(),
    tried::<PthreadPi>(
        "pthread-pi",
        "library",
        "glibc PTHREAD_PRIO_INHERIT mutex (FUTEX_LOCK_PI underneath)",
    )
    .procs::<SharedPthreadPi>(),
    tried::<PthreadRobust>(
        "pthread-robust",
        "library",
        "glibc PTHREAD_MUTEX_ROBUST: a holder's death gives the next locker EOWNERDEAD",
    )
    .procs::<SharedPthreadRobust>(),
    tried::<StdMutex>("std", "library", "Rust's std::sync::Mutex (futex, 3-state, short spin)"),
    tried::<ParkingLot>(
        "parking_lot",
        "library",
        "parking_lot::Mutex: one byte, global parking lot, eventual fairness",
    ),
    rw::<FutexRw>(
        "futex-rw",
        "contend's reader-count rwlock on one futex word: readers enter whenever no writer is inside",
    ),
    rw::<PthreadRw>("pthread-rw", "glibc's default pthread_rwlock_t: prefers readers"),
    rw::<PthreadRwWriter>(
        "pthread-rw-writer",
        "glibc pthread_rwlock_t, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP: waiting writers block readers",
    ),
    rw::<StdRw>("std-rw", "Rust's std::sync::RwLock (futex, writer-preferring, short spin)"),
    rw::<ParkingLotRw>(
        "parking_lot-rw",
        "parking_lot::RwLock: task-fair (readers wait behind a waiting writer), eventual fairness",
    ),
    tried::<PosixSem>("posix-sem", "semaphore", "POSIX sem_t initialised to 1").procs::<SharedPosixSem>(),
    tried::<SysvSem>(
        "sysv",
        "semaphore",
        "one semaphore of a SysV set (largest power of two <= SEMMSL), picked by the lock file's name",
    )
    .procs::<SysvSem>(),
    tried::<Flock>(
        "flock",
        "file",
        "flock(2) LOCK_EX on the lock file, one open file description per worker",
    )
    .procs::<Flock>(),
    tried::<OfdLock>(
        "fcntl",
        "file",
        "fcntl F_OFD_SETLKW on the whole lock file (open-file-description lock)",
    )
    .procs::<OfdLock>(),
    entry::<Lockf>("lockf", "file", "lockf(3)/F_SETLKW classic POSIX record lock: per process, --procs only")
        .procs::<Lockf>(),
    entry::<LostWake>(
        "lost-wake",
        "test",
        "TEST ONLY: hands the lock to a sleeper and never wakes it (proves the stall watchdog)",
    )
    .test_only(),
    tried::<Called<Adaptive>>(
        "adaptive-called",
        "baseline",
        "adaptive behind an indirect call, not inlined: a swapped lock's call (interposer-cost.py)",
    ),
    entry::<NoLock>("noop", "baseline", "no lock at all: measures the harness itself (one worker only)")
        .procs::<NoLock>(),
];

/// Looks a lock up by CLI name.
pub fn find(name: &str) -> Option<&'static LockEntry> {
    LOCKS.iter().find(|e| e.name == name)
}

/// The names offered to users, comma separated, for error messages (the
/// test-only locks are accepted but never offered).
pub fn names() -> String {
    offered().collect::<Vec<_>>().join(", ")
}

/// The names users are offered: every lock but the test-only ones.
pub fn offered() -> impl Iterator<Item = &'static str> {
    LOCKS.iter().filter(|e| !e.test_only).map(|e| e.name)
}

/// The names of the locks with a capability, comma separated.
pub fn names_with(has: impl Fn(&Caps) -> bool) -> String {
    LOCKS.iter().filter(|e| has(&e.caps)).map(|e| e.name).collect::<Vec<_>>().join(", ")
}

/// Parses a lock name (clap value parser), listing the known ones on error.
pub fn parse_lock(name: &str) -> Result<&'static str, String> {
    find(name.trim()).map(|e| e.name).ok_or_else(|| {
        format!(
            "unknown lock `{}`{}; known locks: {}",
            name.trim(),
            crate::model::value::suggest::did_you_mean(name, offered()),
            names()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_parse() {
        for (i, e) in LOCKS.iter().enumerate() {
            assert!(LOCKS[i + 1..].iter().all(|o| o.name != e.name), "{} twice", e.name);
            assert_eq!(parse_lock(e.name), Ok(e.name));
            assert_eq!(e.try_check.is_some(), e.caps.try_lock, "{}: try capability", e.name);
        }
        assert!(parse_lock("nope").unwrap_err().contains("known locks: seed"));
        assert!(parse_lock("Futex").unwrap_err().contains("did you mean `futex`?"));
        assert!(!parse_lock("nope").unwrap_err().contains("lost-wake"), "test-only locks are not offered");
    }

    #[test]
    fn capability_lists() {
        assert_eq!(names_with(|c| c.spinners), "adaptive");
        assert_eq!(names_with(|c| c.spin), "seed, futex, futex2, futex-rw");
        assert_eq!(names_with(|c| c.rw), "futex-rw, pthread-rw, pthread-rw-writer, std-rw, parking_lot-rw");
    }
}
