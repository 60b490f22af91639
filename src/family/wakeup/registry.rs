//! The wake-up primitives `contend wakeup --primitive NAME` can run, each
//! monomorphized for threads and, where the primitive allows it, for
//! processes (with the process-shared form of the primitive).

use crate::family::wakeup::point::WakeupPoint;
use crate::family::wakeup::workload::{self, WakeupContext, WakeupSample};
use anyhow::Result;
use locks::sys::futex::{PrivateFutex, SharedFutex};
use locks::sys::futex2::{self, Futex2Private, Futex2Shared};
use locks::wake::*;

/// Runs one point with a particular channel type.
pub type RunFn = fn(&WakeupPoint, &WakeupContext) -> Result<WakeupSample>;

/// One primitive the CLI knows.
#[derive(Debug)]
pub struct PrimitiveEntry {
    /// CLI name.
    pub name: &'static str,
    /// One line on what a post and a wait are.
    pub about: &'static str,
    /// In threads.
    pub run: RunFn,
    /// In processes, when the primitive works across them.
    pub run_procs: Option<RunFn>,
    /// Why not, when it does not.
    pub why_not_procs: &'static str,
    /// Whether it can run on this machine, and if not why.
    pub available: fn() -> Result<(), String>,
    /// Whether it needs the run's SysV semaphore set.
    pub needs_sem_set: bool,
}

fn always() -> Result<(), String> {
    Ok(())
}

const fn both<T: Channel, P: Channel>(name: &'static str, about: &'static str) -> PrimitiveEntry {
    // Checked when the table is built: a primitive that cannot cross
    // processes must not get a process form.
    assert!(P::PROCESS_SHARED, "process form of a primitive that is not process-shared");
    PrimitiveEntry {
        name,
        about,
        run: workload::run::<T>,
        run_procs: Some(workload::run_procs::<P>),
        why_not_procs: "",
        available: always,
        needs_sem_set: false,
    }
}

/// Every primitive, in `contend list primitives` order.
pub static PRIMITIVES: &[PrimitiveEntry] = &[
    both::<PosixSemChannel, PosixSemChannel>(
        "posix-sem",
        "unnamed POSIX semaphore: sem_post / sem_wait (pshared between processes)",
    ),
    PrimitiveEntry {
        needs_sem_set: true,
        ..both::<SysvSemChannel, SysvSemChannel>(
            "sysv-sem",
            "SysV semaphore: semop +1 / semop -1 (svsematest)",
        )
    },
    both::<FutexChannel<PrivateFutex>, FutexChannel<SharedFutex>>(
        "futex",
        "a word per direction: store + FUTEX_WAKE / FUTEX_WAIT (private ops in threads, shared in processes)",
    ),
    PrimitiveEntry {
        available: futex2::available,
        ..both::<FutexChannel<Futex2Private>, FutexChannel<Futex2Shared>>(
            "futex2",
            "as futex, with the futex_wake / futex_wait syscalls of Linux 6.7+",
        )
    },
    both::<EventFdChannel, EventFdChannel>("eventfd", "eventfd counter: write 1 / read"),
    both::<PipeChannel, PipeChannel>("pipe", "a pipe per direction: write one byte / read it"),
    both::<CondChannel, CondChannel>(
        "condvar",
        "pthread mutex + condition variable + flag: signal with the mutex held / wait until set",
    ),
    PrimitiveEntry {
        name: "mutex-handoff",
        about: "a locked pthread mutex: unlock by the poster / lock by the waiter (ptsematest)",
        run: workload::run::<HandoffChannel>,
        run_procs: None,
        why_not_procs: "unlocks a mutex another thread locked, which glibc tolerates for a \
                        default mutex within one process only",
        available: always,
        needs_sem_set: false,
    },
];

/// The entry called `name`.
pub fn find(name: &str) -> Option<&'static PrimitiveEntry> {
    PRIMITIVES.iter().find(|p| p.name == name)
}

/// Parses a primitive name for clap, listing the known ones on a miss.
pub fn parse_primitive(name: &str) -> Result<&'static str, String> {
    find(name).map(|p| p.name).ok_or_else(|| {
        format!(
            "unknown primitive `{name}`{} (known: {})",
            crate::model::value::suggest::did_you_mean(name, PRIMITIVES.iter().map(|p| p.name)),
            PRIMITIVES.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
        )
    })
}

/// The primitives that run with --procs, comma separated.
pub fn names_with_procs() -> String {
    PRIMITIVES.iter().filter(|p| p.run_procs.is_some()).map(|p| p.name).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_parse() {
        for (i, p) in PRIMITIVES.iter().enumerate() {
            assert_eq!(parse_primitive(p.name), Ok(p.name));
            assert!(PRIMITIVES[i + 1..].iter().all(|q| q.name != p.name));
            assert_eq!(p.run_procs.is_none(), !p.why_not_procs.is_empty(), "{}", p.name);
        }
        assert!(parse_primitive("smoke-signal").unwrap_err().contains("posix-sem"));
        assert!(!names_with_procs().contains("mutex-handoff"));
    }
}
