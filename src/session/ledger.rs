//! The ledger: what a run created that outlives a process (SysV semaphore
//! sets, temporary directories), written to a small file in a per-user
//! runtime directory while the run lasts (see [`crate::session::ledger_dir`] for
//! why that directory can be trusted). A normal exit, an error or a
//! SIGINT/SIGTERM removes both the resources and the record; a SIGKILL
//! leaves the record behind, and `contend cleanup` uses it to remove what
//! the killed run left.

use crate::session::ledger_dir::{self, TrustedDir};
use rustix::fs::{openat, renameat, unlinkat, AtFlags, Mode, OFlags};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// A directory a run created, with what proves it is the same one later:
/// its device and inode at creation (a path can be replaced, an inode
/// cannot be forged).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct CreatedDir {
    /// Where it was made.
    pub path: PathBuf,
    /// st_dev at creation.
    pub dev: u64,
    /// st_ino at creation.
    pub ino: u64,
}

impl CreatedDir {
    /// Records `path` as it is now (without following a symlink).
    pub fn of(path: &Path) -> std::io::Result<Self> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::symlink_metadata(path)?;
        Ok(Self { path: path.to_path_buf(), dev: m.dev(), ino: m.ino() })
    }
}

/// A SysV set a run created, with its size as a check against a recycled
/// id (ids carry a sequence number, so reuse is rare already).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct CreatedSet {
    /// The kernel id.
    pub id: i32,
    /// Semaphores in it.
    pub nsems: u16,
}

/// One run's record.
#[derive(Debug, Default, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// The coordinator's pid.
    pub pid: i32,
    /// Its start time (clock ticks since boot, /proc/PID/stat field 22), so
    /// a recycled pid is not mistaken for the run.
    pub start_ticks: u64,
    /// SysV semaphore sets.
    pub sem_sets: Vec<CreatedSet>,
    /// Temporary directories.
    pub dirs: Vec<CreatedDir>,
    /// `contend run`: the program running now (pid and start time), for
    /// `cleanup` to end if contend and its keeper both died. Processes the
    /// program started are found by the run directory in their
    /// environment (`CONTEND_RUN_DIR`), which is under one of `dirs`.
    #[serde(default)]
    pub programs: Vec<RecordedProcess>,
}

/// A process a run started, named for ever by its pid and start time.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct RecordedProcess {
    /// Its pid.
    pub pid: i32,
    /// Its start time, clock ticks since boot.
    pub start_ticks: u64,
}

/// Start time of `pid` in clock ticks since boot, if it is alive.
pub fn start_ticks(pid: i32) -> Option<u64> {
    crate::measure::children::stat_fields(pid)?.get(19)?.parse().ok()
}

/// The open record of this process.
#[derive(Debug)]
pub struct Ledger {
    name: String,
    dir: Option<&'static TrustedDir>,
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
            name: format!("{pid}-{n}"),
            dir: None,
            record: Record { pid, start_ticks: start_ticks(pid).unwrap_or(0), ..Record::default() },
        }
    }

    /// Records a SysV set.
    pub fn add_sem_set(&mut self, id: i32, nsems: u16) -> std::io::Result<()> {
        self.record.sem_sets.push(CreatedSet { id, nsems });
        self.save()
    }

    /// Records a temporary directory this run just created.
    pub fn add_dir(&mut self, dir: &Path) -> std::io::Result<()> {
        self.record.dirs.push(CreatedDir::of(dir)?);
        self.save()
    }

    /// Writes the record: a new file made with O_EXCL|O_NOFOLLOW inside
    /// the trusted directory, then renamed over the last version, so a
    /// reader never sees half a record and nothing planted is followed.
    fn save(&mut self) -> std::io::Result<()> {
        let dir = match self.dir {
            Some(dir) => dir,
            None => *self.dir.insert(ledger_dir::for_writing().map_err(std::io::Error::other)?),
        };
        // Said with the directory: a full disk there is the usual reason.
        self.write_in(dir).map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", dir.path.display())))
    }

    fn write_in(&self, dir: &TrustedDir) -> std::io::Result<()> {
        let dir = &dir.fd;
        let tmp = format!("{}.tmp", self.name);
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = match openat(dir, &tmp, flags, Mode::RUSR | Mode::WUSR) {
            Err(rustix::io::Errno::EXIST) => {
                // Left by an earlier process with this pid: ours to replace.
                unlinkat(dir, &tmp, AtFlags::empty())?;
                openat(dir, &tmp, flags, Mode::RUSR | Mode::WUSR)?
            }
            other => other?,
        };
        std::fs::File::from(fd).write_all(&serde_json::to_vec(&self.record)?)?;
        renameat(dir, &tmp, dir, format!("{}.json", self.name))?;
        Ok(())
    }

    /// Records the program running now (None: none is).
    pub fn set_program(&mut self, pid: Option<i32>) -> std::io::Result<()> {
        self.record.programs = pid
            .and_then(|pid| Some(RecordedProcess { pid, start_ticks: start_ticks(pid)? }))
            .into_iter()
            .collect();
        self.save()
    }

    /// Removes the record (the resources themselves are gone).
    pub fn close(&mut self) {
        if let Some(dir) = self.dir {
            let _ = unlinkat(&dir.fd, format!("{}.json", self.name), AtFlags::empty());
        }
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
