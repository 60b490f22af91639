//! The system limits on how many threads contend may start.

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
}

impl Limits {
    /// Reads the limits now.
    pub fn read() -> Self {
        let threads_max = std::fs::read_to_string("/proc/sys/kernel/threads-max")
            .ok()
            .and_then(|s| s.trim().parse().ok());
        let nproc = getrlimit(Resource::RLIMIT_NPROC)
            .ok()
            .map(|(soft, _)| soft)
            .filter(|&soft| soft != RLIM_INFINITY);
        Limits {
            threads_max,
            nproc,
            nproc_enforced: !nix::unistd::geteuid().is_root(),
        }
    }

    /// Checks that `threads` workers (plus the coordinator) can exist.
    pub fn check_threads(&self, threads: u64) -> Result<(), String> {
        if let Some(max) = self.threads_max {
            if threads + 1 > max {
                return Err(format!(
                    "{threads} threads exceed the system limit kernel.threads-max = {max} \
                     (raise it with: sysctl kernel.threads-max=N)"
                ));
            }
        }
        if let (Some(max), true) = (self.nproc, self.nproc_enforced) {
            if threads + 1 > max {
                return Err(format!(
                    "{threads} threads exceed RLIMIT_NPROC = {max} for this user \
                     (raise it with: ulimit -u N)"
                ));
            }
        }
        Ok(())
    }

    /// Checks that `workers` threads can each open the lock file (plus a
    /// margin for the descriptors contend itself holds).
    pub fn check_files(&self, workers: u64) -> Result<(), String> {
        let soft = getrlimit(Resource::RLIMIT_NOFILE)
            .map(|(soft, _)| soft)
            .unwrap_or(RLIM_INFINITY);
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
        format!(
            "limits: kernel.threads-max = {}, RLIMIT_NPROC = {}{}",
            show(self.threads_max),
            show(self.nproc),
            if self.nproc_enforced {
                ""
            } else {
                " (not enforced for root)"
            }
        )
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
        };
        assert!(l.check_threads(10).is_ok());
        assert!(l.check_threads(60).unwrap_err().contains("RLIMIT_NPROC = 50"));
        assert!(l
            .check_threads(200)
            .unwrap_err()
            .contains("kernel.threads-max = 100"));
        let root = Limits {
            nproc_enforced: false,
            ..l
        };
        assert!(root.check_threads(60).is_ok());
    }
}
