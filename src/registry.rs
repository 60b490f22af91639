//! The lock registry: every lock `contend lock --lock NAME` can run.
//!
//! Adding a lock is one line here (plus its file in crates/locks): `entry`
//! records its capabilities and monomorphizes the workload for it.

use crate::spec::Point;
use crate::workloads::lock::{self, RunContext};
use crate::workloads::lock_sample::LockSample;
use anyhow::Result;
use locks::raw::{FutexMutex, NoLock, PthreadMutex, Seed};
use locks::{Caps, RawLock};

/// Runs one point with a particular lock type.
pub type RunFn = fn(&Point, &RunContext) -> Result<LockSample>;

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
    /// The workload monomorphized for it.
    pub run: RunFn,
}

const fn entry<L: RawLock>(name: &'static str, family: &'static str, about: &'static str) -> LockEntry {
    LockEntry {
        name,
        family,
        about,
        caps: L::CAPS,
        run: lock::run::<L>,
    }
}

/// Every lock, in the order `contend list locks` shows them.
pub static LOCKS: &[LockEntry] = &[
    entry::<Seed>(
        "seed",
        "futex",
        "futex-scalability.c's lock: CAS retries, FUTEX_WAIT, FUTEX_WAKE on every unlock",
    ),
    entry::<FutexMutex>(
        "futex",
        "futex",
        "Drepper's 3-state mutex with a spin budget; wakes only when waiters may exist",
    ),
    entry::<PthreadMutex>("pthread", "library", "glibc's default pthread_mutex_t"),
    entry::<NoLock>(
        "noop",
        "baseline",
        "no lock at all: measures the harness itself (one worker only)",
    ),
];

/// Looks a lock up by CLI name.
pub fn find(name: &str) -> Option<&'static LockEntry> {
    LOCKS.iter().find(|e| e.name == name)
}

/// The known names, comma separated, for error messages.
pub fn names() -> String {
    LOCKS.iter().map(|e| e.name).collect::<Vec<_>>().join(", ")
}

/// The names of the locks that accept a spin budget.
pub fn spin_names() -> String {
    LOCKS
        .iter()
        .filter(|e| e.caps.spin)
        .map(|e| e.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parses a lock name (clap value parser), listing the known ones on error.
pub fn parse_lock(name: &str) -> Result<&'static str, String> {
    find(name.trim())
        .map(|e| e.name)
        .ok_or_else(|| format!("unknown lock `{}`; known locks: {}", name.trim(), names()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_parse() {
        for (i, e) in LOCKS.iter().enumerate() {
            assert!(
                LOCKS[i + 1..].iter().all(|o| o.name != e.name),
                "{} twice",
                e.name
            );
            assert_eq!(parse_lock(e.name), Ok(e.name));
        }
        assert!(parse_lock("nope").unwrap_err().contains("known locks: seed"));
    }
}
