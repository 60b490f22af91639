//! The ledger: what a run created that outlives a process (SysV semaphore
//! sets, temporary directories), written to a small file in a per-user
//! runtime directory while the run lasts. A normal exit, an error or a
//! SIGINT/SIGTERM removes both the resources and the record; a SIGKILL
//! leaves the record behind, and `contend cleanup` uses it to remove what
//! the killed run left.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// One run's record.
#[derive(Debug, Default, Clone, Serialize, Deserialize, PartialEq)]
pub struct Record {
    /// The coordinator's pid.
    pub pid: i32,
    /// Its start time (clock ticks since boot, /proc/PID/stat field 22), so
    /// a recycled pid is not mistaken for the run.
    pub start_ticks: u64,
    /// SysV semaphore set ids.
    pub sem_sets: Vec<i32>,
    /// Temporary directories.
    pub dirs: Vec<PathBuf>,
}

/// Where records live: $XDG_RUNTIME_DIR/contend, else /run/user/UID/contend,
/// else /tmp/contend-UID; created with mode 0700.
pub fn directory() -> PathBuf {
    let uid = nix::unistd::geteuid();
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .or_else(|| Some(PathBuf::from(format!("/run/user/{uid}"))).filter(|p| p.is_dir()));
    match base {
        Some(dir) => dir.join("contend"),
        None => PathBuf::from(format!("/tmp/contend-{uid}")),
    }
}

/// Start time of `pid` in clock ticks since boot, if it is alive.
pub fn start_ticks(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may contain spaces; fields resume after ')'.
    let rest = stat.rsplit_once(')')?.1;
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// The open record of this process.
#[derive(Debug)]
pub struct Ledger {
    path: PathBuf,
    record: Record,
}

impl Ledger {
    /// Starts a record for this process (written on the first resource).
    /// Each ledger has its own file, so several in one process (the tests
    /// run many) never overwrite each other.
    pub fn new() -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let pid = std::process::id() as i32;
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        Self {
            path: directory().join(format!("{pid}-{n}.json")),
            record: Record {
                pid,
                start_ticks: start_ticks(pid).unwrap_or(0),
                ..Record::default()
            },
        }
    }

    /// Records a SysV set.
    pub fn add_sem_set(&mut self, id: i32) -> std::io::Result<()> {
        self.record.sem_sets.push(id);
        self.save()
    }

    /// Records a temporary directory.
    pub fn add_dir(&mut self, dir: &Path) -> std::io::Result<()> {
        self.record.dirs.push(dir.to_path_buf());
        self.save()
    }

    fn save(&self) -> std::io::Result<()> {
        use std::os::unix::fs::DirBuilderExt;
        let dir = self.path.parent().expect("ledger path has a parent");
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        let tmp = self.path.with_extension("tmp");
        std::fs::write(&tmp, serde_json::to_vec(&self.record)?)?;
        std::fs::rename(tmp, &self.path)
    }

    /// Removes the record (the resources themselves are gone).
    pub fn close(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Default for Ledger {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_start_time_is_readable() {
        assert!(start_ticks(std::process::id() as i32).is_some());
        assert_eq!(start_ticks(i32::MAX), None);
    }
}
