//! The process's own CPU time and context switches (getrusage RUSAGE_SELF,
//! which sums all threads, live and exited).

use nix::sys::resource::{getrusage, Usage, UsageWho};
use nix::sys::time::TimeValLike;
use serde::Serialize;

/// A getrusage snapshot.
#[derive(Debug, Clone, Copy)]
pub struct RusageSnapshot {
    user_us: i64,
    sys_us: i64,
    voluntary: i64,
    involuntary: i64,
}

/// The process's usage over a window.
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ProcessUsage {
    /// CPU seconds, user + system.
    pub cpu_s: f64,
    /// User CPU seconds (NaN when too small to split; see `children`).
    pub user_s: f64,
    /// System CPU seconds (NaN when too small to split).
    pub sys_s: f64,
    /// Voluntary context switches (the thread blocked: futex wait, sleep).
    pub voluntary_context_switches: u64,
    /// Involuntary context switches (the scheduler preempted the thread).
    pub involuntary_context_switches: u64,
}

impl ProcessUsage {
    /// All context switches.
    pub fn context_switches(&self) -> u64 {
        self.voluntary_context_switches + self.involuntary_context_switches
    }
}

impl RusageSnapshot {
    /// Reads the usage of this process now.
    pub fn read() -> nix::Result<Self> {
        let u: Usage = getrusage(UsageWho::RUSAGE_SELF)?;
        Ok(Self {
            user_us: u.user_time().num_microseconds(),
            sys_us: u.system_time().num_microseconds(),
            voluntary: u.voluntary_context_switches(),
            involuntary: u.involuntary_context_switches(),
        })
    }

    /// Usage between `self` (earlier) and `later`.
    pub fn until(&self, later: &RusageSnapshot) -> ProcessUsage {
        let d = |a: i64, b: i64| b.saturating_sub(a).max(0);
        let (user_s, sys_s) =
            (d(self.user_us, later.user_us) as f64 / 1e6, d(self.sys_us, later.sys_us) as f64 / 1e6);
        ProcessUsage {
            cpu_s: user_s + sys_s,
            user_s,
            sys_s,
            voluntary_context_switches: d(self.voluntary, later.voluntary) as u64,
            involuntary_context_switches: d(self.involuntary, later.involuntary) as u64,
        }
    }
}
