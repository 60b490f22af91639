//! What the kernel decided that bears on locks, for the environment
//! block: the preemption model (none, voluntary, full, lazy), the
//! process's private futex hash, and whether rseq time-slice extension
//! exists. Each says where it was read, or why it could not be.

use serde::Serialize;
use std::io::Read;

/// The kernel's choices.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct KernelChoices {
    /// none, voluntary, full or lazy (with ` (PREEMPT_RT)` on a real-time
    /// kernel); `None` when nothing readable says.
    pub preemption: Option<String>,
    /// Where `preemption` was read, or why it could not be.
    pub preemption_source: String,
    /// The private futex hash this process got from the kernel (Linux
    /// 6.17: PR_FUTEX_HASH), buckets; 0 while it uses the global hash;
    /// `None` where the kernel has no private hash.
    pub futex_hash_slots: Option<u32>,
    /// Why `futex_hash_slots` is absent, or what it means.
    pub futex_hash_note: String,
    /// Whether rseq time-slice extension exists (Linux 7.0:
    /// PR_RSEQ_SLICE_EXTENSION), which lets a lock holder ask not to be
    /// preempted for a few µs.
    pub slice_extension: bool,
    /// Why it is absent, or its state.
    pub slice_extension_note: String,
}

impl KernelChoices {
    /// Reads them for this process (call it once threads exist: the
    /// kernel gives a process its private futex hash with its second
    /// thread).
    pub fn capture() -> Self {
        let (preemption, preemption_source) = preemption();
        let (futex_hash_slots, futex_hash_note) = match locks::sys::kernel_knobs::futex_hash_slots() {
            Ok(0) => (Some(0), "the global hash (no private hash: one thread, or set so)".to_string()),
            Ok(n) => {
                (Some(n), format!("a private hash of {n} buckets, the kernel's default for this process"))
            }
            Err(e) if e.raw_os_error() == Some(nix::libc::EINVAL) => {
                (None, "this kernel has no private futex hash (PR_FUTEX_HASH, Linux 6.17)".to_string())
            }
            Err(e) => (None, format!("PR_FUTEX_HASH_GET_SLOTS failed: {e}")),
        };
        let (slice_extension, slice_extension_note) = match locks::sys::kernel_knobs::slice_extension() {
            Ok(on) => (true, format!("available ({} for contend's threads)", if on { "on" } else { "off" })),
            Err(e) if e.raw_os_error() == Some(nix::libc::EINVAL) => (
                false,
                "this kernel has no rseq time-slice extension (PR_RSEQ_SLICE_EXTENSION, Linux 7.0)"
                    .to_string(),
            ),
            // ENOTSUPP (524): built in but turned off on the command line.
            Err(e) => (false, format!("present but unusable here: {e}")),
        };
        Self {
            preemption,
            preemption_source,
            futex_hash_slots,
            futex_hash_note,
            slice_extension,
            slice_extension_note,
        }
    }
}

const SCHED_PREEMPT: &str = "/sys/kernel/debug/sched/preempt";

/// The preemption model and where it was read: debugfs (the model in
/// force, on a kernel that can switch), else `preempt=` on the command
/// line, else the kernel configuration (the model built in).
fn preemption() -> (Option<String>, String) {
    let mut tried = Vec::new();
    match std::fs::read_to_string(SCHED_PREEMPT) {
        // "none voluntary (full) lazy": the one in force is in brackets.
        Ok(text) => {
            if let Some(model) = text.split_whitespace().find_map(|w| w.strip_prefix('(')?.strip_suffix(')'))
            {
                return (Some(model.to_string()), SCHED_PREEMPT.into());
            }
            tried.push(format!("{SCHED_PREEMPT} unreadable as a model list"));
        }
        Err(e) => tried.push(format!("{SCHED_PREEMPT}: {e}")),
    }
    let cmdline = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
    if let Some(model) = cmdline.split_whitespace().find_map(|w| w.strip_prefix("preempt=")) {
        return (Some(model.to_string()), "preempt= on /proc/cmdline".into());
    }
    match kernel_config() {
        Some((config, from)) => match model_in(&config) {
            Some(model) => {
                let dynamic = config.lines().any(|l| l == "CONFIG_PREEMPT_DYNAMIC=y");
                let how =
                    if dynamic { ", switchable at boot (PREEMPT_DYNAMIC), no preempt= given" } else { "" };
                (Some(model), format!("{from}{how}; {}", tried.join("; ")))
            }
            None => (None, format!("{from} names no preemption model")),
        },
        None => {
            tried.push("no /proc/config.gz or /boot/config-RELEASE".into());
            (None, tried.join("; "))
        }
    }
}

/// The model a kernel configuration builds.
fn model_in(config: &str) -> Option<String> {
    let set = |name: &str| config.lines().any(|l| l == format!("CONFIG_{name}=y"));
    let model = [
        ("PREEMPT_LAZY", "lazy"),
        ("PREEMPT", "full"),
        ("PREEMPT_VOLUNTARY", "voluntary"),
        ("PREEMPT_NONE", "none"),
    ]
    .iter()
    .find(|(name, _)| set(name))
    .map(|(_, model)| model.to_string())?;
    Some(if set("PREEMPT_RT") { format!("{model} (PREEMPT_RT)") } else { model })
}

/// The running kernel's configuration and where it came from.
fn kernel_config() -> Option<(String, String)> {
    if let Ok(file) = std::fs::File::open("/proc/config.gz") {
        let mut text = String::new();
        if flate2::read::GzDecoder::new(file).read_to_string(&mut text).is_ok() {
            return Some((text, "/proc/config.gz".into()));
        }
    }
    let release = nix::sys::utsname::uname().ok()?.release().to_string_lossy().into_owned();
    let path = format!("/boot/config-{release}");
    std::fs::read_to_string(&path).ok().map(|t| (t, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configured_model_is_the_one_set() {
        assert_eq!(model_in("CONFIG_PREEMPT_NONE=y\n# CONFIG_PREEMPT is not set\n").as_deref(), Some("none"));
        assert_eq!(model_in("CONFIG_PREEMPT=y\nCONFIG_PREEMPT_RT=y\n").as_deref(), Some("full (PREEMPT_RT)"));
        assert_eq!(model_in("CONFIG_PREEMPT_LAZY=y\n").as_deref(), Some("lazy"));
        assert_eq!(model_in("CONFIG_PREEMPTION=y\n"), None);
    }

    #[test]
    fn capture_says_where_each_answer_came_from() {
        let k = KernelChoices::capture();
        assert!(!k.preemption_source.is_empty());
        assert!(!k.futex_hash_note.is_empty() && !k.slice_extension_note.is_empty());
    }
}
