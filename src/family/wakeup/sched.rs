//! Scheduling policy for measured threads (`--policy`, `--priority`) and
//! `--mlock`: checked up front on a throwaway thread, so a missing
//! permission is one clear error before anything starts, then applied by
//! each worker to itself.

use locks::sys::sched::{set_current_thread, Policy};
use serde::Serialize;

/// The policy and priorities the measured threads run with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Sched {
    /// `other`, `fifo` or `rr`.
    pub policy: &'static str,
    /// 0 for `other`, 1..=99 for the real-time policies: side A's (the
    /// thread that posts first and times the round trip), and B's unless
    /// `priority_b` differs.
    pub priority: i32,
    /// Side B's (the replying thread's) priority. semtest runs it one
    /// level above A, so that A's post preempts A at once and B replies
    /// before A can sleep.
    pub priority_b: i32,
}

impl Sched {
    /// The default: SCHED_OTHER.
    pub const OTHER: Sched = Sched { policy: "other", priority: 0, priority_b: 0 };

    /// Validates a policy name and priorities: A's (None: the policy's
    /// default, 50 for the real-time ones, the middle of their range) and
    /// B's (None: the same as A's).
    pub fn new(policy: &str, priority: Option<i32>, priority_b: Option<i32>) -> Result<Self, String> {
        let a = Self::one(policy, priority)?;
        let b = match priority_b {
            None => a.priority,
            Some(n) => Self::one(policy, Some(n))?.priority,
        };
        Ok(Sched { priority_b: b, ..a })
    }

    /// The policy with B's priority, for side B's threads.
    pub fn side_b(self) -> Sched {
        Sched { priority: self.priority_b, ..self }
    }

    /// "50", or "50/51" when the sides differ.
    pub fn priorities(self) -> String {
        if self.priority == self.priority_b {
            self.priority.to_string()
        } else {
            format!("{}/{}", self.priority, self.priority_b)
        }
    }

    fn one(policy: &str, priority: Option<i32>) -> Result<Self, String> {
        let (name, p) = match policy {
            "other" => ("other", Policy::Other),
            "fifo" => ("fifo", Policy::Fifo),
            "rr" => ("rr", Policy::RoundRobin),
            other => return Err(format!("unknown --policy `{other}` (expected other, fifo or rr)")),
        };
        let (lo, hi) = p.priority_range();
        let priority = match (p, priority) {
            (Policy::Other, Some(n)) if n != 0 => {
                return Err(format!(
                "--priority {n} needs --policy fifo or rr (SCHED_OTHER has only priority 0; use nice for it)"
            ))
            }
            (Policy::Other, _) => 0,
            (_, None) => 50,
            (_, Some(n)) => n,
        };
        if !(lo..=hi).contains(&priority) {
            return Err(format!("--priority {priority} is outside {lo}..={hi} for --policy {name}"));
        }
        Ok(Sched { policy: name, priority, priority_b: priority })
    }

    fn raw(self) -> Policy {
        match self.policy {
            "fifo" => Policy::Fifo,
            "rr" => Policy::RoundRobin,
            _ => Policy::Other,
        }
    }

    /// Whether this is a real-time policy.
    pub fn realtime(self) -> bool {
        self.raw() != Policy::Other
    }

    /// Applies the policy to the calling thread (nothing for `other`, so an
    /// unprivileged default run never touches the scheduler).
    pub fn apply(self) -> std::io::Result<()> {
        if self.realtime() {
            set_current_thread(self.raw(), self.priority)
        } else {
            Ok(())
        }
    }

    /// Tries the policy on a short-lived thread; the error says what
    /// permission is missing.
    pub fn probe(self) -> Result<(), String> {
        if !self.realtime() {
            return Ok(());
        }
        // The higher of the two priorities is the one a limit refuses.
        let highest = Sched { priority: self.priority.max(self.priority_b), ..self };
        let tried = std::thread::spawn(move || highest.apply())
            .join()
            .map_err(|_| "the scheduling probe thread panicked".to_string())?;
        tried.map_err(|e| {
            let rtprio = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_RTPRIO)
                .map(|(soft, _)| soft.to_string())
                .unwrap_or_else(|_| "unknown".into());
            if e.raw_os_error() == Some(nix::errno::Errno::EPERM as i32) {
                format!(
                    "--policy {} --priority {} is not permitted: it needs root or CAP_SYS_NICE, or \
                     `ulimit -r` (RLIMIT_RTPRIO, now {rtprio}) of at least {} ({e})",
                    self.policy,
                    self.priorities(),
                    highest.priority
                )
            } else {
                format!("setting --policy {} --priority {}: {e}", self.policy, self.priorities())
            }
        })
    }
}

/// Whether `--mlock` is safe to use: with a finite RLIMIT_MEMLOCK (and no
/// CAP_IPC_LOCK, which root has), mlockall(MCL_FUTURE) succeeds and then
/// makes every allocation past the limit fail, which aborts the run
/// halfway. Refuse that up front.
pub fn can_lock_memory() -> Result<(), String> {
    use nix::sys::resource::{getrlimit, Resource, RLIM_INFINITY};
    if nix::unistd::geteuid().is_root() {
        return Ok(());
    }
    match getrlimit(Resource::RLIMIT_MEMLOCK) {
        Ok((soft, _)) if soft == RLIM_INFINITY => Ok(()),
        Ok((soft, _)) => Err(format!(
            "--mlock needs root or CAP_IPC_LOCK, or `ulimit -l unlimited` (now {} KiB): under a \
             limit, locking future memory makes later allocations fail mid-run",
            soft / 1024
        )),
        Err(e) => Err(format!("--mlock: reading RLIMIT_MEMLOCK: {e}")),
    }
}

/// Locks all current and future memory of this process (mlockall), so
/// no page fault lands inside a measured round trip. Forked workers must
/// call it again: memory locks are not inherited across fork.
pub fn lock_memory() -> Result<(), String> {
    use nix::sys::mman::{mlockall, MlockAllFlags};
    mlockall(MlockAllFlags::MCL_CURRENT | MlockAllFlags::MCL_FUTURE).map_err(|e| {
        format!(
            "--mlock: mlockall failed: {e} (it needs root or CAP_IPC_LOCK, or a large enough `ulimit -l`)"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_and_priorities_are_validated() {
        assert_eq!(Sched::new("other", None, None).unwrap(), Sched::OTHER);
        assert_eq!(Sched::new("fifo", None, None).unwrap().priority, 50);
        assert_eq!(Sched::new("rr", Some(99), None).unwrap().priority, 99);
        assert!(Sched::new("fifo", Some(0), None).unwrap_err().contains("outside 1..=99"));
        assert!(Sched::new("other", Some(5), None).unwrap_err().contains("needs --policy fifo"));
        assert!(Sched::new("batch", None, None).unwrap_err().contains("unknown --policy"));
        assert!(Sched::OTHER.probe().is_ok());
        // Per side: B one level above A, as semtest runs its replier.
        let s = Sched::new("fifo", Some(50), Some(51)).unwrap();
        assert_eq!((s.priority, s.priority_b, s.side_b().priority), (50, 51, 51));
        assert_eq!(s.priorities(), "50/51");
        assert_eq!(Sched::new("fifo", Some(60), None).unwrap().priority_b, 60);
        assert!(Sched::new("fifo", Some(50), Some(100)).is_err());
        assert!(Sched::new("other", None, Some(3)).is_err());
    }
}
