//! The system limits on how many threads contend may start, all checked
//! before a run: kernel.threads-max, kernel.pid_max (every thread takes a
//! pid, and on small systems pid_max is the lower of the two), the
//! cgroup's pids.max, and RLIMIT_NPROC.

use nix::sys::resource::{getrlimit, Resource, RLIM_INFINITY};

/// Thread-count limits of this system and user.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// kernel.threads-max: threads on the whole system.
    pub threads_max: Option<u64>,
    /// RLIMIT_NPROC soft limit: processes + threads of this user (not
    /// enforced for root), `None` when unlimited.
    pub nproc: Option<u64>,
    /// Whether RLIMIT_NPROC applies to us.
    pub nproc_enforced: bool,
    /// kernel.pid_max and the tasks alive now on the whole system
    /// (/proc/loadavg): free pids are the difference.
    pub pid_max: Option<(u64, u64)>,
    /// This cgroup's pids.max and pids.current, when it sets a limit.
    pub cgroup_pids: Option<(u64, u64)>,
}

/// RLIMIT_AS, when set: each thread's stack is mapped from it, so a
/// low one refuses threads with the same EAGAIN as a thread limit.
fn address_space() -> String {
    match getrlimit(Resource::RLIMIT_AS) {
        Ok((soft, _)) if soft != RLIM_INFINITY => {
            format!(", RLIMIT_AS = {} MiB (each thread maps a stack; ulimit -v)", soft >> 20)
        }
        _ => String::new(),
    }
}

fn read_u64(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// pids.max and pids.current of this process's cgroup (v2, or the v1
/// pids controller), when a limit is set.
fn cgroup_pids() -> Option<(u64, u64)> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let dir = cgroups.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        if controllers.split(',').any(|c| c == "pids") {
            Some(format!("/sys/fs/cgroup/pids{path}"))
        } else if controllers.is_empty() {
            Some(format!("/sys/fs/cgroup{path}"))
        } else {
            None
        }
    })?;
    let max = read_u64(&format!("{dir}/pids.max"))?;
    Some((max, read_u64(&format!("{dir}/pids.current")).unwrap_or(0)))
}

impl Limits {
    /// Reads the limits now.
    pub fn read() -> Self {
        let threads_max =
            std::fs::read_to_string("/proc/sys/kernel/threads-max").ok().and_then(|s| s.trim().parse().ok());
        let nproc = getrlimit(Resource::RLIMIT_NPROC)
            .ok()
            .map(|(soft, _)| soft)
            .filter(|&soft| soft != RLIM_INFINITY);
        let tasks = std::fs::read_to_string("/proc/loadavg").ok().and_then(|s| {
            let field = s.split_whitespace().nth(3)?;
            field.split_once('/')?.1.parse().ok()
        });
        Limits {
            threads_max,
            nproc,
            nproc_enforced: !nix::unistd::geteuid().is_root(),
            pid_max: read_u64("/proc/sys/kernel/pid_max").map(|max| (max, tasks.unwrap_or(0))),
            cgroup_pids: cgroup_pids(),
        }
    }

    /// Checks that `threads` worker threads (plus the coordinator) can
    /// exist.
    pub fn check_threads(&self, threads: u64) -> Result<(), String> {
        self.check_tasks(threads, "threads")
    }

    /// Checks that `n` workers, threads or processes as `noun` says (each
    /// a task: the same limits apply), plus the coordinator, can exist.
    pub fn check_tasks(&self, n: u64, noun: &str) -> Result<(), String> {
        let threads = n;
        if let Some(max) = self.threads_max {
            if threads + 1 > max {
                return Err(format!(
                    "{threads} {noun} exceed the system limit kernel.threads-max = {max} \
                     (raise it with: sysctl kernel.threads-max=N)"
                ));
            }
        }
        if let Some((max, used)) = self.pid_max {
            if threads + used >= max {
                return Err(format!(
                    "{threads} {noun} need as many pids, but kernel.pid_max = {max} and {used} \
                     tasks exist already (raise it with: sysctl kernel.pid_max=N)"
                ));
            }
        }
        if let Some((max, used)) = self.cgroup_pids {
            if threads + used > max {
                return Err(format!(
                    "{threads} {noun} exceed this cgroup's pids.max = {max} ({used} tasks in it already)"
                ));
            }
        }
        if let (Some(max), true) = (self.nproc, self.nproc_enforced) {
            if threads + 1 > max {
                return Err(format!(
                    "{threads} {noun} exceed RLIMIT_NPROC = {max} for this user \
                     (raise it with: ulimit -u N)"
                ));
            }
        }
        Ok(())
    }

    /// Checks that `workers` threads can each open the lock file (plus a
    /// margin for the descriptors contend itself holds).
    pub fn check_files(&self, workers: u64) -> Result<(), String> {
        let soft = getrlimit(Resource::RLIMIT_NOFILE).map(|(soft, _)| soft).unwrap_or(RLIM_INFINITY);
        if soft != RLIM_INFINITY && workers + 64 > soft {
            return Err(format!(
                "{workers} threads each need a descriptor for the lock file, but RLIMIT_NOFILE is {soft} \
                 (raise it with: ulimit -n {})",
                workers + 64
            ));
        }
        Ok(())
    }

    /// One line naming the limits, for error messages.
    pub fn describe(&self) -> String {
        let show = |v: Option<u64>| v.map_or("unlimited".to_string(), |v| v.to_string());
        let pair = |v: Option<(u64, u64)>| {
            v.map_or("unlimited".to_string(), |(max, used)| format!("{max} ({used} in use)"))
        };
        format!(
            "limits: kernel.threads-max = {}, kernel.pid_max = {}, cgroup pids.max = {}, RLIMIT_NPROC = {}{}",
            show(self.threads_max),
            pair(self.pid_max),
            pair(self.cgroup_pids),
            show(self.nproc),
            if self.nproc_enforced { "" } else { " (not enforced for root)" }
        ) + &address_space()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_checked_and_named() {
        let l = Limits {
            threads_max: Some(100),
            nproc: Some(50),
            nproc_enforced: true,
            pid_max: None,
            cgroup_pids: None,
        };
        assert!(l.check_threads(10).is_ok());
        assert!(l.check_threads(60).unwrap_err().contains("RLIMIT_NPROC = 50"));
        assert!(l.check_threads(200).unwrap_err().contains("kernel.threads-max = 100"));
        let root = Limits { nproc_enforced: false, ..l };
        assert!(root.check_threads(60).is_ok());
        let pids = Limits { pid_max: Some((32768, 100)), threads_max: None, ..root };
        assert!(pids.check_threads(32668).unwrap_err().contains("kernel.pid_max = 32768"));
        let cgroup = Limits { cgroup_pids: Some((64, 10)), threads_max: None, ..root };
        assert!(cgroup.check_threads(60).unwrap_err().contains("pids.max = 64"));
        assert!(cgroup.check_threads(50).is_ok());
        assert!(cgroup.check_tasks(60, "processes").unwrap_err().starts_with("60 processes exceed"));
    }
}
