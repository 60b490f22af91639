//! Semantic checks every lock with a capability must pass, written once and
//! monomorphized per lock, so the conformance suite can run them for every
//! registry entry.

use crate::{LockConfig, LockStats, TryLock};

/// try-lock semantics: succeeds on a free lock, fails from another thread
/// while held, and succeeds again after the unlock.
pub fn try_semantics<L: TryLock>(config: &LockConfig) -> Result<(), String> {
    let lock = L::try_new(config)?;
    let node = L::Node::default();
    let mut stats = LockStats::default();
    if !lock.try_lock(&node, &mut stats) {
        return Err("try_lock failed on a free lock".into());
    }
    let stolen = std::thread::scope(|s| {
        s.spawn(|| {
            let other = L::Node::default();
            let mut stats = LockStats::default();
            let got = lock.try_lock(&other, &mut stats);
            if got {
                // SAFETY: this thread just acquired it (wrongly) with `other`.
                unsafe { lock.unlock(&other, &mut stats) };
            }
            got
        })
        .join()
        .unwrap_or(true)
    });
    // SAFETY: acquired by this thread with `node` above.
    unsafe { lock.unlock(&node, &mut stats) };
    if stolen {
        return Err("try_lock succeeded in a second thread while the lock was held".into());
    }
    if !lock.try_lock(&node, &mut stats) {
        return Err("try_lock failed after the lock was released".into());
    }
    // SAFETY: acquired just above with `node`.
    unsafe { lock.unlock(&node, &mut stats) };
    // And the blocking path still works afterwards.
    lock.with(&node, &mut stats, || ());
    Ok(())
}
