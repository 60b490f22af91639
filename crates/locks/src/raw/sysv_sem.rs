//! `sysv`: a System V semaphore set of one, initialised to 1, used as a lock.
//!
//! | semval | meaning |
//! |------|---------|
//! | 1 | unlocked |
//! | 0 | locked |
//!
//! Origin: System V IPC (1983), still the lock of choice in some databases
//! and in lockscale's process experiments. Every operation, contended or
//! not, is a semop(2) syscall that takes the set's kernel lock.
//!
//! Known failure mode: no user-space fast path at all (a syscall per lock
//! and unlock), and the set is a kernel object that outlives a killed
//! process (contend removes it on drop; `ipcs -s` shows leftovers).

use crate::sys::sysv_sem::SysvSemaphore;
use crate::{Caps, LockConfig, LockStats, RawLock, TryLock};

/// A SysV semaphore used as a lock.
#[derive(Debug)]
pub struct SysvSem {
    sem: SysvSemaphore,
}

// SAFETY: semval 1 admits one thread between the -1 and +1 operations;
// semop is a syscall, a full barrier.
unsafe impl RawLock for SysvSem {
    type Node = ();
    const CAPS: Caps = Caps {
        try_lock: true,
        ..Caps::PLAIN
    };

    fn new(config: &LockConfig) -> Self {
        Self::try_new(config).unwrap_or_else(|e| panic!("{e}"))
    }

    fn try_new(_config: &LockConfig) -> Result<Self, String> {
        SysvSemaphore::new(1)
            .map(|sem| Self { sem })
            .map_err(|e| format!("semget(IPC_PRIVATE) failed: {e} (see kernel.sem, the SEMMNI limit)"))
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
