//! The processes a program started, found from /proc and signalled
//! without hitting a stranger; and those that carry a run's mark in their
//! environment, for `contend cleanup`.
//!
//! The keeper (`keeper.rs`) is a child subreaper, so a descendant whose
//! parent exits (a daemon that double-forks, a `setsid` child) becomes the
//! keeper's child instead of init's: every process the program started is
//! either the keeper's child or below one, and [`descendants`] finds them
//! all by following parent links. A pid read from /proc may die and be
//! reused before it is signalled, so each is opened as a pidfd and its
//! start time checked against the scan's before the signal is sent
//! through the pidfd.

use crate::measure::children::stat_fields;
use nix::sys::signal::Signal;
use std::collections::HashMap;

/// A process seen in /proc: its pid and start time (clock ticks since
/// boot), which together name one process for ever.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    /// Its pid.
    pub pid: i32,
    /// /proc/PID/stat field 22.
    pub start: u64,
}

/// (parent, start time) of every living process now, by pid (a zombie
/// is dead: its parent or the keeper reaps it).
fn table() -> HashMap<i32, (i32, u64)> {
    let mut t = HashMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else { return t };
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        let Some(f) = stat_fields(pid).filter(|f| f.first().is_some_and(|s| s != "Z")) else { continue };
        let ppid = f.get(1).and_then(|v| v.parse().ok());
        let start = f.get(19).and_then(|v| v.parse().ok());
        if let (Some(ppid), Some(start)) = (ppid, start) {
            t.insert(pid, (ppid, start));
        }
    }
    t
}

/// Every process below `root` (children, their children, ...), not `root`.
pub fn descendants(root: i32) -> Vec<Seen> {
    let t = table();
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for (&pid, &(ppid, _)) in &t {
        children.entry(ppid).or_default().push(pid);
    }
    let mut out = Vec::new();
    let mut todo = vec![root];
    while let Some(p) = todo.pop() {
        for &c in children.get(&p).map(Vec::as_slice).unwrap_or_default() {
            out.push(Seen { pid: c, start: t[&c].1 });
            todo.push(c);
        }
    }
    out.sort_by_key(|s| s.pid);
    out
}

/// Sends `sig` to `p` if it is still the process the scan saw. True if
/// the signal was sent.
pub fn signal(p: Seen, sig: Signal) -> bool {
    use rustix::process::{pidfd_open, pidfd_send_signal, Pid, PidfdFlags};
    let Some(pid) = Pid::from_raw(p.pid) else { return false };
    let Ok(fd) = pidfd_open(pid, PidfdFlags::empty()) else { return false };
    // The pidfd now pins one process: if it is the one scanned, its start
    // time is the scan's.
    let same = stat_fields(p.pid).and_then(|f| f.get(19)?.parse::<u64>().ok()) == Some(p.start);
    let Some(sig) = rustix::process::Signal::from_named_raw(sig as i32) else { return false };
    same && pidfd_send_signal(&fd, sig).is_ok()
}

/// Every living process whose initial environment holds `mark` (a
/// `NAME=VALUE` prefix) and that this user may read: what a `contend run`
/// started carries its run directory in `CONTEND_RUN_DIR`, even after the
/// keeper that was its parent is gone.
pub fn marked(mark: &str) -> Vec<Seen> {
    let mut out = Vec::new();
    let me = std::process::id() as i32;
    for (pid, (_, start)) in table() {
        if pid == me {
            continue;
        }
        let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else { continue };
        if env.split(|&b| b == 0).any(|kv| kv.starts_with(mark.as_bytes())) {
            out.push(Seen { pid, start });
        }
    }
    out.sort_by_key(|s| s.pid);
    out
}

/// Sends `sig` to every descendant of `root`; returns how many got it.
pub fn signal_all(root: i32, sig: Signal) -> usize {
    descendants(root).into_iter().filter(|&p| signal(p, sig)).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_processes_below_are_found_and_a_stale_one_is_not_signalled() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & sleep 30 & wait"])
            .spawn()
            .expect("sh runs");
        let sh = child.id() as i32;
        // Bounded by work: sh starts its two sleeps within a few scans.
        let mut found = Vec::new();
        for _ in 0..2000 {
            found = descendants(sh);
            if found.len() >= 2 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(found.len(), 2, "the two sleeps below sh: {found:?}");
        assert!(
            descendants(std::process::id() as i32).iter().any(|s| s.pid == found[0].pid),
            "grandchildren too"
        );
        // A stale start time is not the same process: nothing is sent.
        let stale = Seen { pid: found[0].pid, start: found[0].start + 1 };
        assert!(!signal(stale, Signal::SIGKILL));
        assert_eq!(signal_all(sh, Signal::SIGKILL), 2);
        child.wait().unwrap();
    }
}
