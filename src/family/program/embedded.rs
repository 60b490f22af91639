//! The interposer contend carries inside its own binary (build.rs builds
//! it), so that an installed contend needs nothing beside it. LD_PRELOAD
//! takes a path, so the first `contend run` of a version writes the copy
//! out, into this user's private ledger directory (session::ledger_dir:
//! opened without following symlinks, owned by this user, mode 0700),
//! named by a hash of its bytes; later runs reuse it after checking it
//! byte for byte. The file is created with O_EXCL|O_NOFOLLOW under a
//! temporary name and renamed into place, so no reader sees half of it.
//!
//! Copies other versions wrote more than a day before are removed when a
//! new one is written.
//!
//! Because the directory is private, a process the program starts under
//! another user (`setpriv --reuid`) cannot load it, and the run names
//! that process as never loaded; give such a run `--interposer` with a
//! copy that user can read.

use crate::session::ledger_dir::{for_writing, TrustedDir};
use rustix::fs::{
    fstat, fstatvfs, openat, renameat, statat, unlinkat, AtFlags, FileType, Mode, OFlags, StatVfsMountFlags,
};
use std::io::{Read, Write};
use std::path::PathBuf;

/// The interposer's bytes, as built for this contend.
static LIBRARY: &[u8] = include_bytes!(env!("CONTEND_INTERPOSER_SO"));

/// The copy's file name: the hash of its bytes, so each version has its own.
fn file_name() -> String {
    format!("libcontend_interpose-{}.so", env!("CONTEND_INTERPOSER_HASH"))
}

/// The path of the interposer copy, written if it is missing or differs.
pub fn installed() -> Result<PathBuf, String> {
    let dir = for_writing()?;
    install_in(dir)
}

fn install_in(dir: &TrustedDir) -> Result<PathBuf, String> {
    let name = file_name();
    let path = dir.path.join(&name);
    let fail =
        |what: &str, e: &dyn std::fmt::Display| format!("{what} the interposer copy {}: {e}", path.display());
    let vfs = fstatvfs(&dir.fd).map_err(|e| fail("checking the directory of", &e))?;
    if vfs.f_flag.contains(StatVfsMountFlags::NOEXEC) {
        return Err(format!(
            "{} is on a noexec file system, where the loader cannot map the interposer: set \
             XDG_RUNTIME_DIR or TMPDIR to a directory that allows it, or give --interposer FILE.so",
            dir.path.display()
        ));
    }
    if matches_copy(dir, &name).map_err(|e| fail("reading", &e))? {
        return Ok(path);
    }
    let tmp = format!("{name}.{}.tmp", std::process::id());
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mode = Mode::RUSR | Mode::WUSR | Mode::XUSR;
    let fd = match openat(&dir.fd, &tmp, flags, mode) {
        // Left by an earlier process with this pid: ours to replace.
        Err(rustix::io::Errno::EXIST) => {
            unlinkat(&dir.fd, &tmp, AtFlags::empty()).map_err(|e| fail("replacing", &e))?;
            openat(&dir.fd, &tmp, flags, mode)
        }
        other => other,
    }
    .map_err(|e| fail("writing", &e))?;
    let written = std::fs::File::from(fd)
        .write_all(LIBRARY)
        .and_then(|()| renameat(&dir.fd, &tmp, &dir.fd, &name).map_err(std::io::Error::from));
    if let Err(e) = written {
        let _ = unlinkat(&dir.fd, &tmp, AtFlags::empty());
        return Err(format!(
            "{} (free space there, point XDG_RUNTIME_DIR at another directory only you can enter, or \
             give --interposer FILE.so)",
            fail("writing", &e)
        ));
    }
    prune_old_versions(dir, &name);
    Ok(path)
}

/// Removes the copies other versions of contend wrote more than a day ago
/// (each rebuild during development is a version): a run still using one
/// loaded it when its program started.
fn prune_old_versions(dir: &TrustedDir, keep: &str) {
    let day = std::time::Duration::from_secs(24 * 3600);
    let copy =
        |name: &str| name != keep && name.starts_with("libcontend_interpose-") && name.ends_with(".so");
    for name in dir.names().into_iter().filter(|n| copy(n)) {
        let old = statat(&dir.fd, &name, AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|st| {
            let written = std::time::UNIX_EPOCH + std::time::Duration::from_secs(st.st_mtime.max(0) as u64);
            written.elapsed().is_ok_and(|age| age > day)
        });
        if old {
            let _ = unlinkat(&dir.fd, &name, AtFlags::empty());
        }
    }
}

/// Whether `name` in `dir` is a regular file of ours, writable by nobody
/// else, holding exactly the interposer's bytes. A symlink or anything
/// else there reads as "no" and is replaced by the rename.
fn matches_copy(dir: &TrustedDir, name: &str) -> std::io::Result<bool> {
    let fd = match openat(&dir.fd, name, OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::LOOP) => return Ok(false),
        Err(e) => return Err(e.into()),
    };
    let st = fstat(&fd)?;
    let ours = FileType::from_raw_mode(st.st_mode) == FileType::RegularFile
        && st.st_uid == crate::session::ledger_dir::euid()
        && st.st_mode & 0o022 == 0
        && st.st_size == LIBRARY.len() as i64;
    if !ours {
        return Ok(false);
    }
    let mut bytes = Vec::with_capacity(LIBRARY.len());
    std::fs::File::from(fd).read_to_end(&mut bytes)?;
    Ok(bytes == LIBRARY)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::ledger_dir::open_trusted;
    use std::os::unix::fs::PermissionsExt;

    fn private_dir() -> (tempfile::TempDir, TrustedDir) {
        let base = tempfile::tempdir().unwrap();
        std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let dir = open_trusted(base.path()).unwrap();
        (base, dir)
    }

    #[test]
    fn the_copy_is_written_once_and_replaced_when_it_differs() {
        let (_base, dir) = private_dir();
        let path = install_in(&dir).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), LIBRARY);
        assert!(LIBRARY.starts_with(b"\x7fELF"));
        let written = std::fs::metadata(&path).unwrap().modified().unwrap();
        // Reused as it is.
        assert_eq!(install_in(&dir).unwrap(), path);
        assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), written);
        // A copy that was changed is replaced.
        std::fs::write(&path, b"not the interposer").unwrap();
        install_in(&dir).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), LIBRARY);
        // A symlink planted under its name is replaced, not followed.
        let elsewhere = dir.path.join("elsewhere");
        std::fs::write(&elsewhere, b"kept").unwrap();
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
        install_in(&dir).unwrap();
        assert_eq!(std::fs::read(&elsewhere).unwrap(), b"kept");
        assert!(!std::fs::symlink_metadata(&path).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&path).unwrap(), LIBRARY);
    }

    #[test]
    fn other_versions_copies_older_than_a_day_go_when_a_copy_is_written() {
        let (_base, dir) = private_dir();
        let aged = |name: &str, age_s: u64| {
            let f = std::fs::File::create(dir.path.join(name)).unwrap();
            f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(age_s)).unwrap();
        };
        aged("libcontend_interpose-0000000000000001.so", 2 * 24 * 3600);
        aged("libcontend_interpose-0000000000000002.so", 3600);
        aged("record.json", 2 * 24 * 3600);
        install_in(&dir).unwrap();
        let mut left = dir.names();
        left.sort();
        assert_eq!(
            left,
            ["libcontend_interpose-0000000000000002.so".to_string(), file_name(), "record.json".into()]
        );
    }
}
