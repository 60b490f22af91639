//! CPU time, context switches and memory of worker processes, from /proc:
//! forked workers are not in the coordinator's getrusage(RUSAGE_SELF), and
//! RUSAGE_CHILDREN only counts them once reaped, which would include the
//! warm-up and the drain.
//!
//! CPU time: /proc/PID/stat counts user and system time in clock ticks
//! (10 ms), truncated per process, so 1000 workers using 1 ms each sum to
//! 0. The total therefore comes from /proc/PID/schedstat (run time in
//! nanoseconds), and the user/system split from the summed ticks, the way
//! the kernel itself splits precise run time. When no worker accrued a
//! single tick the split is unknown and reported as NaN, never as 0.

use crate::measure::rusage::ProcessUsage;
use nix::unistd::Pid;

/// Summed counters of a set of processes at one moment.
#[derive(Debug, Default, Clone, Copy)]
pub struct ChildrenSnapshot {
    runtime_ns: u64,
    user_ticks: u64,
    sys_ticks: u64,
    voluntary: u64,
    involuntary: u64,
}

/// The fields of /proc/PID/stat after the command name (field 2, which
/// may hold spaces and parentheses, so the split is at the last ')'):
/// index 0 is the state (field 3), index 19 the start time (field 22).
/// None when the process is gone.
pub fn stat_fields(pid: i32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    Some(rest.split_whitespace().map(str::to_owned).collect())
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
            if let Ok(sched) = std::fs::read_to_string(format!("/proc/{pid}/schedstat")) {
                s.runtime_ns +=
                    sched.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            }
            // utime is field 14, stime 15 (indexes 11 and 12 here).
            if let Some(f) = stat_fields(pid.as_raw()) {
                s.user_ticks += f.get(11).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
                s.sys_ticks += f.get(12).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
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
        let cpu_s = later.runtime_ns.saturating_sub(self.runtime_ns) as f64 / 1e9;
        let user = later.user_ticks.saturating_sub(self.user_ticks) as f64;
        let sys = later.sys_ticks.saturating_sub(self.sys_ticks) as f64;
        let user_share = if user + sys > 0.0 { user / (user + sys) } else { f64::NAN };
        ProcessUsage {
            cpu_s,
            user_s: cpu_s * user_share,
            sys_s: cpu_s * (1.0 - user_share),
            voluntary_context_switches: later.voluntary.saturating_sub(self.voluntary),
            involuntary_context_switches: later.involuntary.saturating_sub(self.involuntary),
        }
    }
}

/// Resident set sizes (kB) of the given processes: mean and max; None
/// when none could be read.
pub fn rss_kib(pids: &[Pid]) -> Option<(f64, u64)> {
    let rss: Vec<u64> = pids
        .iter()
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/status")).ok())
        .filter_map(|s| status_field(&s, "VmRSS"))
        .collect();
    let max = rss.iter().copied().max()?;
    Some((rss.iter().sum::<u64>() as f64 / rss.len() as f64, max))
}

/// This process's peak resident set size (VmHWM), kB; None if unreadable.
pub fn own_peak_rss_kib() -> Option<u64> {
    std::fs::read_to_string("/proc/self/status").ok().and_then(|s| status_field(&s, "VmHWM"))
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
    fn split_follows_ticks_and_total_follows_runtime() {
        let a = ChildrenSnapshot::default();
        let b = ChildrenSnapshot { runtime_ns: 2_000_000_000, user_ticks: 30, sys_ticks: 10, ..a };
        let u = a.until(&b);
        assert!(
            (u.cpu_s - 2.0).abs() < 1e-12 && (u.user_s - 1.5).abs() < 1e-12 && (u.sys_s - 0.5).abs() < 1e-12
        );
        // Below tick resolution: the total is known, the split is not.
        let c = ChildrenSnapshot { runtime_ns: 1_000_000, ..a };
        let u = a.until(&c);
        assert!((u.cpu_s - 0.001).abs() < 1e-12 && u.user_s.is_nan() && u.sys_s.is_nan());
    }

    #[test]
    fn own_process_is_readable() {
        let me = Pid::this();
        // A busy process, as a worker is: its CPU time must show as
        // positive (not merely not negative) once it has run.
        let mut busy = std::process::Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap();
        let pid = Pid::from_raw(busy.id() as i32);
        let a = ChildrenSnapshot::read(&[pid]);
        let mut usage = a.until(&a);
        for _ in 0..1000 {
            std::thread::sleep(std::time::Duration::from_millis(10));
            usage = a.until(&ChildrenSnapshot::read(&[pid]));
            if usage.cpu_s > 0.0 && usage.user_s > 0.0 {
                break;
            }
        }
        let _ = busy.kill();
        let _ = busy.wait();
        assert!(usage.cpu_s > 0.0 && usage.user_s > 0.0, "{usage:?}");
        assert!(own_peak_rss_kib().is_some_and(|kib| kib > 0));
        assert!(rss_kib(&[me]).is_some_and(|(_, max)| max > 0));
        assert_eq!(rss_kib(&[Pid::from_raw(i32::MAX)]), None);
    }
}
