//! The environment a result came from, carried in every export so a number
//! can be traced to the machine, kernel and build that produced it.

use crate::measure::kernel_choices::KernelChoices;
use serde::Serialize;
use std::path::Path;

/// Facts about the machine and the tool.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Environment {
    /// `uname -r`.
    pub kernel: String,
    /// `uname -v`.
    pub kernel_build: String,
    /// First "model name" of /proc/cpuinfo.
    pub cpu_model: String,
    /// Number of online CPUs.
    pub cpus_online: usize,
    /// /sys/devices/system/cpu/online, e.g. "0-1".
    pub cpus_online_list: String,
    /// CPUs this process may run on (its affinity mask).
    pub cpus_allowed: usize,
    /// Current clocksource (tsc, kvm-clock, ...): it decides what a clock
    /// read costs.
    pub clocksource: String,
    /// Whether SMT (hyper-threading) is active: two workers on sibling
    /// threads share a core.
    pub smt_active: Option<bool>,
    /// cpufreq governor of CPU 0, `None` where the kernel exposes no
    /// cpufreq (typical in virtual machines).
    pub governor: Option<String>,
    /// Transparent huge pages mode (the bracketed choice of
    /// /sys/kernel/mm/transparent_hugepage/enabled).
    pub transparent_hugepages: Option<String>,
    /// The cpuidle driver (`haltpoll` on a KVM guest that may poll before
    /// it halts an idle vCPU), `None` where the kernel has none.
    pub cpuidle_driver: Option<String>,
    /// The haltpoll driver's polling window, ns: how long an idle vCPU
    /// polls before it halts. At 0 it halts at once, and waking a thread
    /// on it goes through the hypervisor. `None` where the module is
    /// absent (bare metal, or a guest without it).
    pub guest_halt_poll_ns: Option<u64>,
    /// What waking a sleeping thread on another CPU cost the waker, ns:
    /// FUTEX_WAKE of a thread asleep on a futex, the waker and the sleeper
    /// pinned to two CPUs, median of 40, measured once at start-up. Every
    /// sleeping wait costs an unlock this much; `adaptive`'s budgets are
    /// multiples of it. `None` where it could not be measured (adaptive
    /// then assumes 5 µs).
    pub wake_cost_ns: Option<u64>,
    /// How `wake_cost_ns` was measured: its spread and placement.
    pub wake_cost_detail: Option<WakeCostDetail>,
    /// What the kernel decided: preemption model, futex hash, rseq
    /// time-slice extension.
    pub kernel_choices: KernelChoices,
    /// glibc version.
    pub glibc: String,
    /// contend's version.
    pub tool_version: String,
    /// The git commit contend was built from.
    pub git_hash: String,
    /// The command line, as given.
    pub command_line: Vec<String>,
}

/// The samples behind the wake cost.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct WakeCostDetail {
    /// 25th percentile of the samples, ns.
    pub p25_ns: u64,
    /// 75th percentile of the samples, ns.
    pub p75_ns: u64,
    /// Wakes timed.
    pub samples: usize,
    /// The waker's and the sleeper's CPU; `None` where fewer than two CPUs
    /// were allowed and the scheduler placed them (then a wake on the
    /// waker's own CPU, which needs no interrupt, may be in the samples).
    pub cpus: Option<[usize; 2]>,
}

impl WakeCostDetail {
    fn of(c: locks::sys::wake_cost::WakeCost) -> Self {
        Self {
            p25_ns: c.quartiles.0.as_nanos() as u64,
            p75_ns: c.quartiles.1.as_nanos() as u64,
            samples: c.samples,
            cpus: c.cpus.map(|(waker, sleeper)| [waker, sleeper]),
        }
    }
}

/// A sysfs value, trimmed, or "unknown" where the file does not exist.
fn read_trimmed(path: impl AsRef<Path>) -> String {
    read_optional(path).unwrap_or_else(|| "unknown".into())
}

/// A sysfs value, trimmed, or `None` where the file does not exist.
fn read_optional(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// The cpufreq governor of CPU 0, if the kernel exposes one.
pub fn governor() -> Option<String> {
    read_optional("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
}

/// The `[chosen]` word of a sysfs choice list like "always [madvise] never".
fn bracketed(text: &str) -> Option<String> {
    let start = text.find('[')? + 1;
    let end = start + text[start..].find(']')?;
    Some(text[start..end].to_string())
}

/// Counts the CPUs in a list like "0-3,8,10-11".
pub fn count_cpu_list(list: &str) -> usize {
    list.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|range| match range.trim().split_once('-') {
            Some((a, b)) => match (a.parse::<usize>(), b.parse::<usize>()) {
                (Ok(a), Ok(b)) if b >= a => b - a + 1,
                _ => 0,
            },
            None => usize::from(range.trim().parse::<usize>().is_ok()),
        })
        .sum()
}

/// Number of online CPUs.
pub fn cpus_online() -> usize {
    let n = count_cpu_list(&read_trimmed("/sys/devices/system/cpu/online"));
    if n > 0 {
        n
    } else {
        cpus_allowed()
    }
}

/// Number of CPUs this process may run on (its affinity mask; a program
/// it starts inherits it).
pub fn cpus_allowed() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

impl Environment {
    /// Reads the environment now.
    pub fn capture() -> Self {
        let uts = nix::sys::utsname::uname().ok();
        let field = |f: fn(&nix::sys::utsname::UtsName) -> &std::ffi::OsStr| {
            uts.as_ref().map_or_else(|| "unknown".into(), |u| f(u).to_string_lossy().into_owned())
        };
        let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|info| {
                info.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        let wake = locks::sys::wake_cost::estimate();
        Environment {
            kernel: field(|u| u.release()),
            kernel_build: field(|u| u.version()),
            cpu_model,
            cpus_online: cpus_online(),
            cpus_online_list: read_trimmed("/sys/devices/system/cpu/online"),
            cpus_allowed: cpus_allowed(),
            clocksource: read_trimmed("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
            smt_active: read_optional("/sys/devices/system/cpu/smt/active").map(|s| s == "1"),
            governor: governor(),
            transparent_hugepages: read_optional("/sys/kernel/mm/transparent_hugepage/enabled")
                .and_then(|s| bracketed(&s)),
            cpuidle_driver: read_optional("/sys/devices/system/cpu/cpuidle/current_driver"),
            guest_halt_poll_ns: read_optional("/sys/module/haltpoll/parameters/guest_halt_poll_ns")
                .and_then(|s| s.parse().ok()),
            wake_cost_ns: wake.map(|c| c.median.as_nanos() as u64),
            wake_cost_detail: wake.map(WakeCostDetail::of),
            // After the wake cost, whose helper thread made this process
            // a threaded one (the kernel's default futex hash comes with
            // the second thread).
            kernel_choices: KernelChoices::capture(),
            glibc: locks::sys::libc_info::glibc_version(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            git_hash: env!("CONTEND_GIT_HASH").into(),
            // args_os: an argument that is not UTF-8 (passed to `contend run`'s
            // program) is recorded lossily, not a panic.
            command_line: std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_count() {
        assert_eq!(count_cpu_list("0-1"), 2);
        assert_eq!(count_cpu_list("0-3,8,10-11"), 7);
        assert_eq!(count_cpu_list("5"), 1);
        assert_eq!(count_cpu_list(""), 0);
        assert_eq!(count_cpu_list("garbage"), 0);
    }

    #[test]
    fn sysfs_choices() {
        assert_eq!(bracketed("always [madvise] never\n").as_deref(), Some("madvise"));
        assert_eq!(bracketed("no choice"), None);
    }

    #[test]
    fn capture_fills_the_basics() {
        let e = Environment::capture();
        assert!(e.cpus_online >= 1);
        assert!(!e.glibc.is_empty());
        assert_ne!(e.kernel, "unknown");
        // A test process can start the helper thread, so it is measured;
        // and a futex wake never costs nothing, nor a second.
        let wake = e.wake_cost_ns.expect("measured");
        assert!(wake > 0 && wake < 1_000_000_000);
        let detail = e.wake_cost_detail.expect("measured");
        assert!(detail.p25_ns <= wake && wake <= detail.p75_ns);
    }
}
