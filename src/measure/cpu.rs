//! System-wide CPU time split from /proc/stat, as mpstat reports it.
//!
//! The kernel accumulates time per state in USER_HZ ticks (10 ms); the delta
//! over a window divided by its total gives the percentages. Columns are
//! grouped the way a reader of the futex-scalability tables expects:
//! %usr = user + nice, %sys = system + irq + softirq, %idle = idle + iowait,
//! and %steal on its own because on a virtual machine it is time the
//! hypervisor took away.

use serde::Serialize;

/// Cumulative ticks read from the `cpu` line of /proc/stat, and the system's
/// context-switch count from its `ctxt` line.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CpuTicks {
    user: u64,
    system: u64,
    idle: u64,
    steal: u64,
    ctxt: u64,
}

/// The CPU split of one window, in percent of all CPUs' time.
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct CpuSplit {
    /// user + nice.
    pub usr_pct: f64,
    /// system + irq + softirq.
    pub sys_pct: f64,
    /// idle + iowait.
    pub idle_pct: f64,
    /// Time stolen by the hypervisor.
    pub steal_pct: f64,
    /// Context switches on the whole system during the window.
    pub system_context_switches: u64,
}

/// Below this much CPU time in a window (CPUs x seconds), /proc/stat's
/// 10 ms ticks are too coarse to judge steal: 0.5 CPU-seconds is 50 ticks,
/// a resolution of 2%.
const SCREEN_MIN_CPU_S: f64 = 0.5;

impl CpuSplit {
    /// CPU busy time the system saw in a window of `window_s` beyond the
    /// `own_cpu_s` our workers used, % of all `cpus` CPUs' time: other
    /// processes' load. None when it cannot be told.
    pub fn other_load_pct(&self, window_s: f64, own_cpu_s: f64, cpus: usize) -> Option<f64> {
        let capacity = window_s * cpus as f64;
        (capacity > 0.0 && own_cpu_s.is_finite()).then(|| {
            let busy = capacity * (self.usr_pct + self.sys_pct) / 100.0;
            100.0 * (busy - own_cpu_s) / capacity
        })
    }

    /// What `--max-steal` screens on: the larger of the hypervisor's steal
    /// and other processes' load over a window, % of all CPUs' time; None
    /// when the window is too short for the tick counts to tell (a 20 ms
    /// allocator child spans a tick or two, and one tick reads as 25%).
    pub fn disturbance_pct(&self, window_s: f64, own_cpu_s: f64) -> Option<f64> {
        let cpus = crate::measure::env::cpus_online();
        if window_s * (cpus as f64) < SCREEN_MIN_CPU_S {
            return None;
        }
        let other = self.other_load_pct(window_s, own_cpu_s, cpus);
        Some(self.steal_pct.max(other.unwrap_or(0.0)))
    }
}

/// One run's window, for judging several short runs together: each alone
/// spans too few ticks, their sum may not.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    /// Its length, s.
    pub window_s: f64,
    /// The CPU time the run itself used, s.
    pub own_cpu_s: f64,
    /// The machine's split over it.
    pub split: CpuSplit,
}

impl Window {
    /// [`CpuSplit::disturbance_pct`] over the windows together: steal and
    /// other processes' CPU time summed, over their summed capacity. None
    /// when even together they are too short to tell.
    pub fn pooled_disturbance_pct(windows: &[Window]) -> Option<f64> {
        let cpus = crate::measure::env::cpus_online() as f64;
        let capacity: f64 = windows.iter().map(|w| w.window_s * cpus).sum();
        if capacity < SCREEN_MIN_CPU_S {
            return None;
        }
        let steal: f64 = windows.iter().map(|w| w.window_s * cpus * w.split.steal_pct / 100.0).sum();
        let other: f64 = windows
            .iter()
            .map(|w| w.window_s * cpus * (w.split.usr_pct + w.split.sys_pct) / 100.0 - w.own_cpu_s)
            .sum();
        Some(100.0 * steal.max(other) / capacity)
    }
}

impl CpuTicks {
    /// Reads /proc/stat now.
    pub fn read() -> std::io::Result<Self> {
        Self::parse(&std::fs::read_to_string("/proc/stat")?).ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidData, "unexpected /proc/stat layout")
        })
    }

    /// Parses the text of /proc/stat.
    pub fn parse(text: &str) -> Option<Self> {
        let mut ticks = CpuTicks::default();
        let mut seen_cpu = false;
        for line in text.lines() {
            let mut fields = line.split_ascii_whitespace();
            match fields.next() {
                Some("cpu") => {
                    let v: Vec<u64> = fields.map(|f| f.parse().unwrap_or(0)).collect();
                    let at = |i: usize| v.get(i).copied().unwrap_or(0);
                    // user nice system idle iowait irq softirq steal guest guest_nice;
                    // guest time is already included in user.
                    ticks.user = at(0) + at(1);
                    ticks.system = at(2) + at(5) + at(6);
                    ticks.idle = at(3) + at(4);
                    ticks.steal = at(7);
                    seen_cpu = v.len() >= 4;
                }
                Some("ctxt") => ticks.ctxt = fields.next()?.parse().ok()?,
                _ => {}
            }
        }
        seen_cpu.then_some(ticks)
    }

    /// The split between `self` (earlier) and `later`.
    pub fn split_until(&self, later: &CpuTicks) -> CpuSplit {
        let d = |a: u64, b: u64| b.saturating_sub(a) as f64;
        let user = d(self.user, later.user);
        let system = d(self.system, later.system);
        let idle = d(self.idle, later.idle);
        let steal = d(self.steal, later.steal);
        let total = user + system + idle + steal;
        let pct = |x: f64| if total > 0.0 { 100.0 * x / total } else { 0.0 };
        CpuSplit {
            usr_pct: pct(user),
            sys_pct: pct(system),
            idle_pct: pct(idle),
            steal_pct: pct(steal),
            system_context_switches: later.ctxt.saturating_sub(self.ctxt),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4\nctxt 1000\n";
    const AFTER: &str = "cpu  160 10 80 900 60 5 5 30 7 0\ncpu0 1 2 3 4\nctxt 1600\n";

    #[test]
    fn split_groups_columns_like_mpstat() {
        let a = CpuTicks::parse(BEFORE).unwrap();
        let b = CpuTicks::parse(AFTER).unwrap();
        let s = a.split_until(&b);
        // deltas: user+nice 70, system+irq+softirq 40, idle+iowait 110, steal 30 => 250
        assert!((s.usr_pct - 28.0).abs() < 1e-9);
        assert!((s.sys_pct - 16.0).abs() < 1e-9);
        assert!((s.idle_pct - 44.0).abs() < 1e-9);
        assert!((s.steal_pct - 12.0).abs() < 1e-9);
        assert_eq!(s.system_context_switches, 600);
    }

    #[test]
    fn garbage_is_rejected_and_empty_windows_are_zero() {
        assert_eq!(CpuTicks::parse("nothing here"), None);
        let a = CpuTicks::parse(BEFORE).unwrap();
        assert_eq!(a.split_until(&a).usr_pct, 0.0);
    }

    #[test]
    fn reads_this_machine() {
        assert!(CpuTicks::read().is_ok());
    }
}
