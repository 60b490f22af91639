//! Where the processes of a `contend run` leave their reports, made so
//! that no other user can read them or redirect a write.
//!
//! One private directory per invocation (mkdtemp: a random name, mode
//! 0700, entered in the ledger so `contend cleanup` removes it after a
//! SIGKILL), opened without following a symlink and checked as the
//! ledger's own directory is. Each execution of the program gets a fresh
//! subdirectory, made through the parent's descriptor, whose path and
//! identity (device, inode, owner) are passed in the environment:
//! `CONTEND_RUN_DIR` and `CONTEND_RUN_DIR_ID=DEV:INO:UID`. The interposer
//! opens the path without following a symlink, writes only if what it
//! opened has that identity and mode 0700, and creates its report inside
//! with O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600, relative to that descriptor
//! (crates/interpose/src/report.rs). A process that outlives the run and
//! exits later finds the directory gone: one recreated at the same path by
//! someone else has another owner or inode, and is refused. Captured
//! output (`--metric`) is made the same way. Everything here is read back
//! through the directory's descriptor, without following symlinks.

use crate::session::ledger_dir::{self, TrustedDir};
use crate::session::resources::Resources;
use anyhow::{anyhow, Context, Result};
use locks::in_mutex::input;
use rustix::fs::{fstat, mkdirat, openat, Dir, FileType, Mode, OFlags};
use std::ffi::OsString;
use std::io::Read;
use std::path::PathBuf;

/// A report larger than this is not read (the interposer writes a few
/// hundred bytes per mutex, and at most 4097 mutexes).
const MAX_REPORT: u64 = 16 << 20;

/// The run's private directory, removed (and its ledger entry closed) on
/// drop.
pub struct RunDir {
    dir: TrustedDir,
    next: u32,
    // Last: dropped after the descriptor above.
    resources: Resources,
}

impl RunDir {
    /// Makes the directory in `$TMPDIR` (else /tmp).
    pub fn create() -> Result<Self> {
        let mut resources = Resources::new();
        let path = resources.scratch_dir(&ledger_dir::temp_base())?;
        let dir = ledger_dir::open_trusted(&path).map_err(|e| anyhow!("the run's directory: {e}"))?;
        Ok(Self { dir, next: 0, resources })
    }

    /// Its path.
    pub fn path(&self) -> &std::path::Path {
        &self.dir.path
    }

    /// Records the program running now in the ledger, so that `contend
    /// cleanup` ends it should contend and its keeper both die (None: it
    /// ended).
    pub fn running(&mut self, pid: Option<i32>) -> Result<()> {
        self.resources.program(pid)
    }

    /// A new file in it, this user's only, opened for appending: where
    /// every execution's output is gathered (`--output FILE`).
    pub fn create_file(&self, name: &str) -> Result<std::fs::File> {
        let flags = OFlags::RDWR
            | OFlags::APPEND
            | OFlags::CREATE
            | OFlags::EXCL
            | OFlags::NOFOLLOW
            | OFlags::CLOEXEC;
        let fd = openat(&self.dir.fd, name, flags, Mode::RUSR | Mode::WUSR)
            .with_context(|| format!("creating {}/{name}", self.dir.path.display()))?;
        Ok(fd.into())
    }

    /// A fresh subdirectory for one execution.
    pub fn execution(&mut self) -> Result<ExecDir> {
        let name = format!("exec-{}", self.next);
        self.next += 1;
        mkdirat(&self.dir.fd, name.as_str(), Mode::RWXU).with_context(|| format!("creating {name}"))?;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = openat(&self.dir.fd, name.as_str(), flags, Mode::empty())
            .with_context(|| format!("opening {name}"))?;
        let st = fstat(&fd)?;
        Ok(ExecDir {
            dir: TrustedDir { fd, path: self.dir.path.join(&name) },
            id: input::write_dir_id(st.st_dev, st.st_ino, st.st_uid),
        })
    }
}

/// One execution's directory.
pub struct ExecDir {
    dir: TrustedDir,
    id: String,
}

impl ExecDir {
    /// What the interposer needs to find it, for the program's environment.
    pub fn env(&self) -> [(OsString, OsString); 2] {
        [
            (input::DIR.name.into(), self.dir.path.clone().into_os_string()),
            (input::DIR_ID.name.into(), self.id.clone().into()),
        ]
    }

    /// A new file in it, readable and writable by this user only, for the
    /// program's captured output.
    pub fn create(&self, name: &str) -> Result<std::fs::File> {
        let flags = OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = openat(&self.dir.fd, name, flags, Mode::RUSR | Mode::WUSR)
            .with_context(|| format!("creating {}/{name}", self.dir.path.display()))?;
        Ok(fd.into())
    }

    /// The regular files whose names start with `prefix`, read (symlinks
    /// and anything else are skipped), by name.
    pub fn read_files(&self, prefix: &str) -> Result<Vec<(String, Vec<u8>)>> {
        let mut out = Vec::new();
        let entries = Dir::read_from(&self.dir.fd).context("listing the run's directory")?;
        for e in entries.flatten() {
            let Ok(name) = e.file_name().to_str().map(str::to_owned) else { continue };
            if !name.starts_with(prefix) {
                continue;
            }
            let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
            let Ok(fd) = openat(&self.dir.fd, name.as_str(), flags, Mode::empty()) else { continue };
            let regular =
                fstat(&fd).is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile);
            if !regular {
                continue;
            }
            let mut bytes = Vec::new();
            std::fs::File::from(fd).take(MAX_REPORT).read_to_end(&mut bytes)?;
            out.push((name, bytes));
        }
        out.sort();
        Ok(out)
    }

    /// Its path, for messages.
    pub fn path(&self) -> PathBuf {
        self.dir.path.clone()
    }
}

impl Drop for ExecDir {
    fn drop(&mut self) {
        // Inside the run's private directory: only this user's processes
        // could have put anything here, and remove_dir_all follows no
        // symlink.
        let _ = std::fs::remove_dir_all(&self.dir.path);
    }
}
