//! CPU time, context switches and memory of worker processes, from
//! /proc/PID/stat and /proc/PID/status: forked workers are not in the
//! coordinator's getrusage(RUSAGE_SELF), and RUSAGE_CHILDREN only counts
//! them once reaped, which would include the warm-up and the drain.

use super::rusage::ProcessUsage;
use nix::unistd::Pid;

/// Summed counters of a set of processes at one moment.
#[derive(Debug, Default, Clone, Copy)]
pub struct ChildrenSnapshot {
    user_ticks: u64,
    sys_ticks: u64,
    voluntary: u64,
    involuntary: u64,
}

fn ticks_per_second() -> f64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .map_or(100.0, |t| t as f64)
}

/// A field of /proc/PID/status, in its unit (kB for memory).
fn status_field(status: &str, name: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|rest| rest.trim_start_matches(':').split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

impl ChildrenSnapshot {
    /// Reads every pid now; processes that vanished count as zero.
    pub fn read(pids: &[Pid]) -> Self {
        let mut s = Self::default();
        for pid in pids {
            if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                // Fields resume after the ')' closing the command name:
                // utime is field 14, stime 15 (indexes 11 and 12 here).
                if let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) {
                    let f: Vec<&str> = rest.split_whitespace().collect();
                    s.user_ticks += f.get(11).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
                    s.sys_ticks += f.get(12).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
                }
            }
            if let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
                s.voluntary += status_field(&status, "voluntary_ctxt_switches").unwrap_or(0);
                s.involuntary += status_field(&status, "nonvoluntary_ctxt_switches").unwrap_or(0);
            }
        }
        s
    }

    /// Usage between `self` (earlier) and `later`.
    pub fn until(&self, later: &Self) -> ProcessUsage {
        let hz = ticks_per_second();
        ProcessUsage {
            user_s: later.user_ticks.saturating_sub(self.user_ticks) as f64 / hz,
            sys_s: later.sys_ticks.saturating_sub(self.sys_ticks) as f64 / hz,
            voluntary_context_switches: later.voluntary.saturating_sub(self.voluntary),
            involuntary_context_switches: later.involuntary.saturating_sub(self.involuntary),
        }
    }
}

/// Resident set sizes (kB) of the given processes: mean and max.
pub fn rss_kib(pids: &[Pid]) -> (f64, u64) {
    let rss: Vec<u64> = pids
        .iter()
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/status")).ok())
        .filter_map(|s| status_field(&s, "VmRSS"))
        .collect();
    let mean = if rss.is_empty() {
        0.0
    } else {
        rss.iter().sum::<u64>() as f64 / rss.len() as f64
    };
    (mean, rss.iter().copied().max().unwrap_or(0))
}

/// This process's peak resident set size (VmHWM), kB.
pub fn own_peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| status_field(&s, "VmHWM"))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_fields_parse() {
        let s = "Name:\tx\nVmHWM:\t  1234 kB\nvoluntary_ctxt_switches:\t7\n";
        assert_eq!(status_field(s, "VmHWM"), Some(1234));
        assert_eq!(status_field(s, "voluntary_ctxt_switches"), Some(7));
        assert_eq!(status_field(s, "VmRSS"), None);
    }

    #[test]
    fn own_process_is_readable() {
        let me = Pid::this();
        let a = ChildrenSnapshot::read(&[me]);
        let b = ChildrenSnapshot::read(&[me]);
        assert!(a.until(&b).user_s >= 0.0);
        assert!(own_peak_rss_kib() > 0);
        assert!(rss_kib(&[me]).1 > 0);
    }
}
