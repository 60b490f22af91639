//! A robust, process-shared pthread mutex survives a worker process that
//! dies holding it: the next locker gets EOWNERDEAD, recovers it, and the
//! lock keeps working. A plain shared mutex shows why that matters.

use locks::raw::{SharedPthreadMutex, SharedPthreadRobust};
use locks::sys::process::fork_worker;
use locks::sys::shm::Arena;
use locks::{LockConfig, LockStats, ProcessShared, RawLock, TryLock};

/// Forks a child that takes the lock in `arena` and exits without
/// releasing it; waits for the child.
fn die_holding<L: ProcessShared<Node = ()>>(arena: &Arena<L, (), ()>) {
    let pid = fork_worker(|| {
        let mut stats = LockStats::default();
        arena.lock().lock(&(), &mut stats);
        0 // exits holding the lock
    })
    .expect("fork");
    let mut status = 0;
    // SAFETY: waiting for our own child, with a valid status pointer.
    let r = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(r, pid);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
}

#[test]
fn robust_mutex_recovers_from_a_dead_owner() {
    let arena = Arena::<SharedPthreadRobust, (), ()>::shared(&LockConfig::default(), (), 0, || ()).unwrap();
    die_holding(&arena);
    let mut stats = LockStats::default();
    arena.lock().with(&(), &mut stats, || ());
    assert_eq!(stats.counts().recoveries, 1, "the owner's death is reported once");
    arena.lock().with(&(), &mut stats, || ());
    assert_eq!(stats.counts().recoveries, 1, "and the lock is consistent again");
}

#[test]
fn a_plain_mutex_stays_held_by_the_dead() {
    let arena = Arena::<SharedPthreadMutex, (), ()>::shared(&LockConfig::default(), (), 0, || ()).unwrap();
    die_holding(&arena);
    let mut stats = LockStats::default();
    assert!(!arena.lock().try_lock(&(), &mut stats), "nobody will ever release it");
}
