//! tracefs: finding (or, as root, mounting) it, and the outlier tracer of
//! `contend wakeup --trace-threshold`. A round trip above the threshold
//! writes a tag to `trace_marker`, so it sits in the ftrace buffer next to
//! whatever the kernel traced at that moment; with `--trace-stop` the first
//! one also writes 0 to `tracing_on`, freezing the buffer on what led up to
//! it (cyclictest's -b). `tracing_on` and any events we enabled are put
//! back when the run ends, except a stop made on purpose.

use serde::Serialize;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

const MOUNTS: &[&str] = &["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// The scheduler events `--trace-sched` enables for the run.
const SCHED_EVENTS: &[&str] = &["sched_switch", "sched_wakeup", "sched_waking", "sched_migrate_task"];

/// The tracefs mount point, mounting it at /sys/kernel/tracing if we are
/// root and it is not mounted. The error says what to do.
pub fn root() -> Result<PathBuf, String> {
    let mounted = |p: &Path| p.join("trace_marker").exists() || p.join("events").is_dir();
    if let Some(dir) = MOUNTS.iter().map(Path::new).find(|p| mounted(p)) {
        return Ok(dir.to_path_buf());
    }
    // Mounted but closed to us (tracefs is mode 0700) reads the same as
    // absent; tell the two apart so the advice is right.
    let denied = MOUNTS
        .iter()
        .map(Path::new)
        .find(|p| std::fs::read_dir(p).is_err_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied));
    if let Some(dir) = denied {
        return Err(format!(
            "{} is not readable by this user (run as root, or grant access to tracefs \
             and set kernel.perf_event_paranoid=-1)",
            dir.display()
        ));
    }
    if !nix::unistd::geteuid().is_root() {
        return Err("tracefs is not mounted and we are not root to mount it \
                    (as root: mount -t tracefs nodev /sys/kernel/tracing)"
            .into());
    }
    let target = Path::new(MOUNTS[0]);
    nix::mount::mount(Some("nodev"), target, Some("tracefs"), nix::mount::MsFlags::empty(), None::<&str>)
        .map_err(|e| format!("tracefs is not mounted and mounting it at {} failed: {e}", target.display()))?;
    if mounted(target) {
        Ok(target.to_path_buf())
    } else {
        Err(format!("mounted tracefs at {} but it looks empty", target.display()))
    }
}

/// What `--trace-threshold` asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct TraceSpec {
    /// Tag round trips longer than this, ns.
    pub threshold_ns: u64,
    /// Turn tracing off at the first tagged round trip.
    pub stop: bool,
    /// Enable the scheduler's switch/wakeup/migrate events for the run.
    pub sched_events: bool,
}

/// The open tracer of one run: shared by reference with worker threads,
/// inherited (same descriptors) by worker processes.
#[derive(Debug)]
pub struct Tracer {
    root: PathBuf,
    spec: TraceSpec,
    marker: File,
    tracing_on: File,
    was_on: bool,
    /// Events we switched on, to switch off again.
    enabled: Vec<PathBuf>,
    /// Set by the worker that stopped tracing (threads); processes report
    /// through their results instead.
    stopped: AtomicBool,
}

/// What the tracer did, for the report.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TraceReport {
    /// The tracefs directory; the buffer is `trace` in it.
    pub tracefs: String,
    /// Round trips tagged.
    pub tagged: u64,
    /// Whether tracing was stopped at the first tag.
    pub stopped: bool,
}

impl Tracer {
    /// Opens trace_marker and tracing_on, turns tracing on (remembering
    /// whether it was), and enables the scheduler events if asked.
    pub fn open(spec: TraceSpec) -> Result<Self, String> {
        let root = root().map_err(|why| format!("--trace-threshold needs tracefs: {why}"))?;
        let open_w = |name: &str| {
            OpenOptions::new()
                .write(true)
                .open(root.join(name))
                .map_err(|e| format!("opening {}: {e}", root.join(name).display()))
        };
        let marker = open_w("trace_marker")?;
        let was_on =
            std::fs::read_to_string(root.join("tracing_on")).map(|s| s.trim() == "1").unwrap_or(false);
        let mut tracer = Self {
            root: root.clone(),
            spec,
            marker,
            tracing_on: open_w("tracing_on")?,
            was_on,
            enabled: Vec::new(),
            stopped: AtomicBool::new(false),
        };
        if spec.sched_events {
            for event in SCHED_EVENTS {
                let enable = root.join("events/sched").join(event).join("enable");
                let on = std::fs::read_to_string(&enable).map(|s| s.trim() == "1");
                match on {
                    Ok(true) => {}
                    Ok(false) => {
                        std::fs::write(&enable, "1").map_err(|e| format!("enabling sched:{event}: {e}"))?;
                        tracer.enabled.push(enable);
                    }
                    Err(e) => return Err(format!("no sched:{event} event ({}): {e}", enable.display())),
                }
            }
        }
        tracer.tracing_on.write_at(b"1", 0).map_err(|e| format!("turning tracing on: {e}"))?;
        Ok(tracer)
    }

    /// The threshold, ns.
    pub fn threshold_ns(&self) -> u64 {
        self.spec.threshold_ns
    }

    /// Tags one slow round trip; with `--trace-stop`, the first tag also
    /// stops tracing. Returns whether this call stopped it. Called from the
    /// measured loop only for outliers, so its cost is off the fast path.
    pub fn tag(&self, pair: usize, cpu_a: i32, cpu_b: i32, latency_ns: u64, iteration: u64) -> bool {
        let line = format!(
            "contend-wakeup: pair {pair} cpu {cpu_a} (B on {cpu_b}) round trip {latency_ns} ns \
             iteration {iteration}\n"
        );
        let _ = (&self.marker).write_all(line.as_bytes());
        if self.spec.stop && !self.stopped.swap(true, Ordering::Relaxed) {
            let _ = self.tracing_on.write_at(b"0", 0);
            return true;
        }
        false
    }

    /// Whether a thread of this process stopped tracing.
    pub fn stopped_here(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }

    /// Where to read the buffer.
    pub fn buffer(&self) -> PathBuf {
        self.root.join("trace")
    }

    /// The tracefs directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Puts tracing back as it was: events we enabled are disabled, and
    /// tracing_on is restored unless `stopped` on purpose (then the buffer
    /// stays frozen for the user to read).
    pub fn restore(&mut self, stopped: bool) {
        for enable in self.enabled.drain(..) {
            let _ = std::fs::write(enable, "0");
        }
        if !stopped {
            let _ = self.tracing_on.write_at(if self.was_on { b"1" } else { b"0" }, 0);
        }
    }
}
