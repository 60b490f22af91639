//! `sysv`: one semaphore of a System V set, initialised to 1, used as a lock.
//!
//! | semval | meaning |
//! |------|---------|
//! | 1 | unlocked |
//! | 0 | locked |
//!
//! Origin: System V IPC (1983), as lockscale used it: one set as large as
//! the system allows (the largest power of two up to SEMMSL), created
//! IPC_PRIVATE with mode 0600, and the lock file's name hashed to pick the
//! semaphore, so unrelated lock files would spread over the set. The hash
//! is SipHash-1-3 with fixed keys (std's DefaultHasher); lockscale used
//! SpookyHash, and any good hash serves. The run's coordinator creates and
//! removes the set; the lock only uses its id, so it also works in worker
//! processes.
//!
//! Known failure mode: no user-space fast path at all (a semop syscall per
//! lock and per unlock, under the set's kernel lock), and the set is a
//! kernel object that outlives a killed process (`ipcs -s` shows it;
//! `contend cleanup` removes what a killed run left).

use crate::sys::sysv_sem::Sem;
use crate::{Caps, LockConfig, LockStats, RawLock, TryLock};
use std::hash::{DefaultHasher, Hash, Hasher};

/// A SysV semaphore used as a lock.
#[derive(Debug)]
pub struct SysvSem {
    sem: Sem,
}

/// The semaphore a lock file's name maps to in a set of `size` (a power of
/// two).
pub fn index_for(file_name: &[u8], size: u16) -> u16 {
    let mut h = DefaultHasher::new();
    file_name.hash(&mut h);
    (h.finish() & u64::from(size.max(1) - 1)) as u16
}

// SAFETY: semval 1 admits one thread between the -1 and +1 operations;
// semop is a syscall, a full barrier.
unsafe impl RawLock for SysvSem {
    type Node = ();
    const CAPS: Caps =
        Caps { try_lock: true, process_shared: true, needs_file: true, needs_sem_set: true, ..Caps::PLAIN };

    fn new(config: &LockConfig) -> Self {
        Self::try_new(config).unwrap_or_else(|e| panic!("{e}"))
    }

    fn try_new(config: &LockConfig) -> Result<Self, String> {
        let (id, size) =
            config.sysv_set.ok_or("sysv needs the run's semaphore set (LockConfig::sysv_set)")?;
        let file = config.lock_file.ok_or("sysv needs the run's lock file (LockConfig::lock_file)")?;
        let index = index_for(file.file_name(), size);
        Sem::init(id, index, 1)
            .map(|sem| Self { sem })
            .map_err(|e| format!("setting semaphore {index} of set {id}: {e}"))
    }

    #[inline]
    fn lock(&self, _node: &(), _stats: &mut LockStats) {
        self.sem.wait();
    }

    #[inline]
    unsafe fn unlock(&self, _node: &(), _stats: &mut LockStats) {
        self.sem.post();
    }
}

// SAFETY: semop(-1, IPC_NOWAIT) success is a wait.
unsafe impl TryLock for SysvSem {
    #[inline]
    fn try_lock(&self, _node: &(), _stats: &mut LockStats) -> bool {
        self.sem.try_wait()
    }
}

// SAFETY: the semaphore is named by a global id and index.
unsafe impl crate::ProcessShared for SysvSem {}
