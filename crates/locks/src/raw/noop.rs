//! `noop`: no lock at all, for measuring what the harness itself costs.
//!
//! | word | meaning |
//! |------|---------|
//! | (none) | lock and unlock do nothing |
//!
//! Origin: the "empty benchmark" every harness needs. Failure mode: it
//! provides no mutual exclusion, so the CLI refuses it with more than one
//! worker.

use crate::{Caps, LockConfig, LockStats, RawLock, TryLock};

/// A lock that does nothing; see the module docs.
#[derive(Debug, Default)]
pub struct NoLock;

// SAFETY: `Caps::exclusive` is false, which the trait allows; callers use it
// with a single worker only.
unsafe impl RawLock for NoLock {
    type Node = ();
    const CAPS: Caps = Caps {
        spin: false,
        try_lock: false,
        process_shared: true,
        counters: true,
        exclusive: false,
        ..Caps::PLAIN
    };

    fn new(_config: &LockConfig) -> Self {
        NoLock
    }

    #[inline(always)]
    fn lock(&self, _node: &(), _stats: &mut LockStats) {}

    #[inline(always)]
    unsafe fn unlock(&self, _node: &(), _stats: &mut LockStats) {}
}

// SAFETY: plain atomics with no pointers; atomics in shared memory work
// across processes as they do across threads.
unsafe impl crate::ProcessShared for NoLock {}

// SAFETY: as for `RawLock`: it excludes nothing, and says so
// (`exclusive: false`). Offered so that the interposer's test mode can
// show that its checks catch a lock that does not exclude.
unsafe impl TryLock for NoLock {
    #[inline(always)]
    fn try_lock(&self, _node: &(), _stats: &mut LockStats) -> bool {
        true
    }
}
