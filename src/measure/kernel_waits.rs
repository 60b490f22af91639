//! Where a program blocked in the kernel: its FUTEX_WAIT calls (and
//! FUTEX_LOCK_PI, the PI mutexes' wait) counted per process and futex
//! address, from the `syscalls:sys_enter_futex` tracepoint sampled on
//! every CPU for the process tree started after [`KernelWaits::open`]
//! (`locks::sys::perf_ring`). A glibc mutex's futex word is its first
//! word, so a mutex's count is the entry at its own address: every time
//! glibc put a thread to sleep on it, including the re-acquisition at the
//! end of a condition wait, which happens inside glibc where the
//! interposer cannot time it.
//!
//! Needs what the futex counts need (tracefs and the right to open
//! tracepoint events: root, CAP_PERFMON or a low perf_event_paranoid).
//! While a syscall tracepoint is enabled every syscall of every task takes
//! the kernel's tracing path, so the counting is part of the profile's
//! cost, which docs/experiments/run.md measures.

use locks::sys::perf_ring::TracepointSampler;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// futex ops that put the caller to sleep on its address: FUTEX_WAIT (0),
/// FUTEX_WAIT_BITSET (9), FUTEX_LOCK_PI (6), FUTEX_LOCK_PI2 (13), each
/// with or without FUTEX_PRIVATE_FLAG (128) and FUTEX_CLOCK_REALTIME
/// (256).
fn sleeping_ops() -> Vec<u64> {
    let mut ops = Vec::new();
    for cmd in [0u64, 9, 6, 13] {
        for flags in [0, 128, 256, 384] {
            ops.push(cmd | flags);
        }
    }
    ops
}

/// The tracepoint filter that keeps only [`sleeping_ops`] (the kernel's
/// filter language has no bit masks with comparison, so each op is named).
fn filter() -> String {
    sleeping_ops().iter().map(|op| format!("op == {op}")).collect::<Vec<_>>().join(" || ")
}

/// Where `sys_enter_futex` keeps `uaddr`: its offset in the raw record.
fn uaddr_offset(format: &str) -> Option<usize> {
    let line = format.lines().find(|l| l.contains(" uaddr;"))?;
    let offset = line.split("offset:").nth(1)?.split(';').next()?;
    offset.trim().parse().ok()
}

/// Sleeping futex calls per (process, address), and the samples lost.
#[derive(Debug, Default, Clone)]
pub struct Waits {
    /// Calls per (pid, futex address).
    pub by_address: HashMap<(u32, u64), u64>,
    /// Calls the kernel could not record (its buffers were full): when
    /// non-zero the counts are lower bounds.
    pub lost: u64,
}

/// Counting in progress: the sampler, drained by a thread of its own.
pub struct KernelWaits {
    shared: Arc<Mutex<(TracepointSampler, Waits)>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
    drainer: Option<std::thread::JoinHandle<()>>,
    offset: usize,
}

/// How often the buffers are drained: 512 KiB per CPU hold about 16,000
/// calls, so this keeps up with 1.6 million sleeping futex calls a second
/// per CPU.
const DRAIN_EVERY: Duration = Duration::from_millis(10);

impl KernelWaits {
    /// Starts counting for the calling thread and every task it starts
    /// from now on. The error says why it cannot.
    pub fn open() -> Result<Self, String> {
        let root = crate::measure::tracefs::root()?;
        let dir = root.join("events/syscalls/sys_enter_futex");
        let read = |f: &str| std::fs::read_to_string(dir.join(f));
        let id: u64 = read("id")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .ok_or_else(|| format!("{} has no id (no syscall tracepoints in this kernel?)", dir.display()))?;
        let offset = read("format")
            .ok()
            .as_deref()
            .and_then(uaddr_offset)
            .ok_or_else(|| format!("{}/format does not say where uaddr is", dir.display()))?;
        let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
        let cpus = cpu_list(&online).ok_or_else(|| format!("cannot read the online CPUs ({online:?})"))?;
        let sampler = TracepointSampler::open(id, &filter(), cpus).map_err(|e| {
            format!(
                "sampling the futex syscall tracepoint failed: {e} (needs root or CAP_PERFMON, or \
                 sysctl kernel.perf_event_paranoid=-1)"
            )
        })?;
        let shared = Arc::new(Mutex::new((sampler, Waits::default())));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let drainer = {
            let (shared, stop) = (Arc::clone(&shared), Arc::clone(&stop));
            std::thread::Builder::new()
                .name("contend-futex-waits".into())
                .spawn(move || {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        std::thread::sleep(DRAIN_EVERY);
                        drain(&shared, offset);
                    }
                })
                .map_err(|e| format!("starting the thread that reads the futex samples: {e}"))?
        };
        Ok(Self { shared, stop, drainer: Some(drainer), offset })
    }

    /// Stops the drainer thread (once; finish and drop both call it).
    fn stop_draining(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(d) = self.drainer.take() {
            let _ = d.join();
        }
    }

    /// Stops counting and returns the counts.
    pub fn finish(mut self) -> Waits {
        self.stop_draining();
        drain(&self.shared, self.offset);
        let mut guard = self.shared.lock().unwrap_or_else(|p| p.into_inner());
        let lost = guard.0.lost;
        let mut waits = std::mem::take(&mut guard.1);
        waits.lost = lost;
        waits
    }
}

impl Drop for KernelWaits {
    fn drop(&mut self) {
        self.stop_draining();
    }
}

/// Counts the samples written since the last drain.
fn drain(shared: &Mutex<(TracepointSampler, Waits)>, offset: usize) {
    let mut guard = shared.lock().unwrap_or_else(|p| p.into_inner());
    let (sampler, waits) = &mut *guard;
    sampler.drain(|s| {
        if let Some(b) = s.raw.get(offset..offset + 8) {
            let uaddr = u64::from_ne_bytes(b.try_into().expect("8 bytes"));
            *waits.by_address.entry((s.pid, uaddr)).or_default() += 1;
        }
    });
}

/// The CPUs of a sysfs CPU list (`0-3,6`).
fn cpu_list(text: &str) -> Option<Vec<i32>> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        cpus.extend(lo.parse::<i32>().ok()?..=hi.parse::<i32>().ok()?);
    }
    (!cpus.is_empty()).then_some(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_names_every_sleeping_op_and_no_wake() {
        let f = filter();
        for op in ["op == 128", "op == 0", "op == 137", "op == 393", "op == 134", "op == 141"] {
            assert!(f.split(" || ").any(|p| p == op), "{op} missing from {f}");
        }
        for wake in ["op == 1", "op == 129", "op == 10", "op == 7"] {
            assert!(!f.split(" || ").any(|p| p == wake), "{wake} in {f}");
        }
    }

    #[test]
    fn cpu_lists_read_as_sysfs_writes_them() {
        assert_eq!(cpu_list("0-1\n"), Some(vec![0, 1]));
        assert_eq!(cpu_list("0,2-3,7"), Some(vec![0, 2, 3, 7]));
        assert_eq!(cpu_list(""), None);
        assert_eq!(cpu_list("x"), None);
    }

    #[test]
    fn uaddr_is_found_in_the_format() {
        let format = "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n\
                      \tfield:u32 * uaddr;\toffset:16;\tsize:8;\tsigned:0;\n\
                      \tfield:u32 * uaddr2;\toffset:48;\tsize:8;\tsigned:0;\n";
        assert_eq!(uaddr_offset(format), Some(16));
        assert_eq!(uaddr_offset("nothing"), None);
    }
}
