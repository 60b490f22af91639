//! What the file locks (`flock`, `fcntl`, `lockf`) share: the lock holds
//! the lock file's path inline (so it can sit in shared memory), and each
//! worker's node opens its own file description on first use, so workers
//! conflict exactly as separate programs would. With
//! [`crate::LockConfig::reopen`] the node opens the file before every
//! acquisition and closes it after the release, as lockscale does (an
//! open and a close per critical section, in the measured cycle).

use crate::sys::lockfile::{FileNode, InlinePath};
use crate::{Caps, LockConfig, LockStats, RawLock, TryLock};
use std::marker::PhantomData;

/// The system calls of one kind of file lock.
pub trait FileLockKind: Send + Sync + 'static {
    /// The lock's capabilities.
    const CAPS: Caps;
    /// Blocks until the lock is taken on `fd`.
    fn lock(fd: libc::c_int);
    /// Releases it.
    fn unlock(fd: libc::c_int);
    /// Takes it if free.
    fn try_lock(fd: libc::c_int) -> bool;
}

/// A file lock of kind `K` on the run's lock file.
pub struct FileLock<K> {
    path: InlinePath,
    reopen: bool,
    kind: PhantomData<K>,
}

impl<K> FileLock<K> {
    fn path_from(config: &LockConfig) -> Result<InlinePath, String> {
        config
            .lock_file
            .ok_or_else(|| "file locks need the run's lock file (LockConfig::lock_file)".to_string())
    }
}

// SAFETY: exclusion is the kernel's: K's lock call returns only when this
// worker's file description holds the lock, and the kernel orders it
// against the previous holder's unlock (a syscall, a full barrier).
unsafe impl<K: FileLockKind> RawLock for FileLock<K> {
    type Node = FileNode;
    const CAPS: Caps = K::CAPS;

    fn new(config: &LockConfig) -> Self {
        Self::try_new(config).unwrap_or_else(|e| panic!("{e}"))
    }

    fn try_new(config: &LockConfig) -> Result<Self, String> {
        Ok(Self { path: Self::path_from(config)?, reopen: config.reopen, kind: PhantomData })
    }

    #[inline]
    fn lock(&self, node: &FileNode, _stats: &mut LockStats) {
        K::lock(node.fd(&self.path));
    }

    #[inline]
    unsafe fn unlock(&self, node: &FileNode, _stats: &mut LockStats) {
        K::unlock(node.fd(&self.path));
        if self.reopen {
            node.close();
        }
    }
}

// SAFETY: K's try call takes the same kernel lock as its blocking call.
unsafe impl<K: FileLockKind> TryLock for FileLock<K> {
    #[inline]
    fn try_lock(&self, node: &FileNode, _stats: &mut LockStats) -> bool {
        let taken = K::try_lock(node.fd(&self.path));
        if !taken && self.reopen {
            node.close();
        }
        taken
    }
}

// SAFETY: the path is inline and every process opens its own descriptor.
unsafe impl<K: FileLockKind> crate::ProcessShared for FileLock<K> {}

/// The capabilities every file lock shares.
pub(crate) const FILE_CAPS: Caps =
    Caps { try_lock: true, process_shared: true, needs_file: true, released_on_death: true, ..Caps::PLAIN };
