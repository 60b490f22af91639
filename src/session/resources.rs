//! What a run creates outside its own memory, owned in one place: the
//! private lock directory and lock file (for file locks and sysv), and the
//! SysV semaphore set. Dropping it removes everything; each resource is
//! entered in the ledger first, so a killed run can be cleaned up later.

use crate::session::ledger::Ledger;
use anyhow::{anyhow, Context, Result};
use locks::sys::lockfile::InlinePath;
use locks::sys::sysv_sem::{semmsl, SemSet};
use std::path::{Path, PathBuf};

/// Where lock files go when --lock-dir is not given: tmpfs, so the
/// filesystem is not what is measured.
pub const DEFAULT_LOCK_DIR: &str = "/dev/shm";

/// What a failed ledger write says: where, and what to do about it.
const LEDGER: &str = "writing the cleanup ledger (free space there, or point XDG_RUNTIME_DIR at another \
                      directory only you can enter)";

/// Prefix of every directory contend creates (cleanup removes only these).
pub const DIR_PREFIX: &str = "contend-";

/// The resources of one sweep.
#[derive(Debug, Default)]
pub struct Resources {
    ledger: Ledger,
    dir: Option<PathBuf>,
    file: Option<PathBuf>,
    sem_set: Option<SemSet>,
}

impl Resources {
    /// Nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Creates the run's private directory (mkdtemp, mode 0700) under
    /// `base`, once, and returns it. Worker processes of `contend wakeup`
    /// leave their records there.
    pub fn scratch_dir(&mut self, base: &Path) -> Result<PathBuf> {
        self.scratch_dir_for(base, "")
    }

    /// [`Self::scratch_dir`], with `flag` (the one that chose `base`, if
    /// any) named when the directory cannot be made there.
    fn scratch_dir_for(&mut self, base: &Path, flag: &str) -> Result<PathBuf> {
        if let Some(dir) = &self.dir {
            return Ok(dir.clone());
        }
        let template = base.join(format!("{DIR_PREFIX}XXXXXX"));
        let dir = nix::unistd::mkdtemp(&template)
            .with_context(|| format!("creating a private directory in {}{flag}", base.display()))?;
        // Owned before anything else can fail, so drop removes it.
        self.dir = Some(dir.clone());
        self.ledger.add_dir(&dir).context(LEDGER)?;
        Ok(dir)
    }

    /// Creates a private directory (mkdtemp, mode 0700) under `base` holding
    /// an empty lock file, once.
    pub fn lock_file(&mut self, base: &Path) -> Result<InlinePath> {
        if self.file.is_none() {
            let dir = self.scratch_dir_for(base, " (choose another with --lock-dir)")?;
            let file = dir.join("contend.lock");
            std::fs::File::create(&file).with_context(|| format!("creating {}", file.display()))?;
            self.file = Some(file);
        }
        let file = self.file.as_deref().expect("created above");
        InlinePath::new(file).map_err(|e| anyhow!("{e} (choose a shorter --lock-dir)"))
    }

    /// Creates the SysV set once: as many semaphores as the system allows
    /// in one set, rounded down to a power of two (lockscale's choice).
    pub fn sem_set(&mut self) -> Result<(i32, u16)> {
        if self.sem_set.is_none() {
            let msl = semmsl().context("reading SEMMSL from /proc/sys/kernel/sem")?;
            if msl == 0 {
                return Err(anyhow!(
                    "SEMMSL is 0: no SysV semaphores allowed (raise it: sysctl kernel.sem=\"32000 ...\")"
                ));
            }
            let size = 1u32 << (31 - msl.min(u32::from(u16::MAX)).leading_zeros());
            let set = SemSet::create(size as u16).with_context(|| {
                format!("creating a SysV semaphore set of {size} (limits: kernel.sem, SEMMNI/SEMMNS)")
            })?;
            self.ledger.add_sem_set(set.id(), set.size()).context(LEDGER)?;
            self.sem_set = Some(set);
        }
        let set = self.sem_set.as_ref().expect("created above");
        Ok((set.id(), set.size()))
    }

    /// The SysV set's id, if one was made.
    pub fn sem_set_id(&self) -> Option<i32> {
        self.sem_set.as_ref().map(SemSet::id)
    }

    /// Records the program `contend run` runs now, for `cleanup` (None:
    /// it ended).
    pub fn program(&mut self, pid: Option<i32>) -> Result<()> {
        self.ledger.set_program(pid).context(LEDGER)
    }

    /// The lock directory, if one was made.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }
}

impl Drop for Resources {
    fn drop(&mut self) {
        self.sem_set = None;
        if let Some(dir) = self.dir.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
        self.ledger.close();
    }
}
