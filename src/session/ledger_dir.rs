//! The ledger's directory, and why it can be trusted. Records there tell
//! `contend cleanup` what to delete, so whoever can write there can make a
//! user delete their own files; the directory must therefore be this
//! user's alone. A directory is trusted only after it was opened without
//! following a symlink (O_DIRECTORY|O_NOFOLLOW) and the open descriptor
//! shows this effective uid as owner and no access for group or others.
//! Every later file operation is relative to that descriptor (openat,
//! renameat, unlinkat), so a rename of the path in between cannot redirect
//! it.
//!
//! Where: `$XDG_RUNTIME_DIR/contend`, else `/run/user/UID/contend`, else
//! `${TMPDIR:-/tmp}/contend-UID`. The last sits in a world-writable
//! directory where anyone may have created that name first; if what is
//! there fails the checks, the run uses a private directory beside it
//! (`contend-UID.XXXXXX`): the first trusted one already there, else a
//! fresh one made by mkdtemp, so that runs do not each leave another
//! (with another copy of the interposer). It says so, with the command
//! that repairs the usual place; cleanup looks in those too, each checked
//! the same way, and removes the spare ones once they hold no record.

use rustix::fs::{fstat, mkdirat, openat, statat, AtFlags, Mode, OFlags, CWD};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// A directory verified to be this user's alone, held open.
#[derive(Debug)]
pub struct TrustedDir {
    /// The open directory: every operation goes through it.
    pub fd: OwnedFd,
    /// Its path, for messages.
    pub path: PathBuf,
}

impl TrustedDir {
    /// The names of its entries (those that are UTF-8; not `.` and `..`),
    /// read through the descriptor, as every other operation on it is.
    pub fn names(&self) -> Vec<String> {
        let Ok(entries) = rustix::fs::Dir::read_from(&self.fd) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| e.file_name().to_str().ok().map(str::to_owned))
            .filter(|n| n != "." && n != "..")
            .collect()
    }
}

/// This process's effective uid, the owner every trusted file must have.
pub(crate) fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Opens `path` as a directory without following a symlink and checks
/// that this user owns it and nobody else can enter it.
pub fn open_trusted(path: &Path) -> Result<TrustedDir, String> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = openat(CWD, path, flags, Mode::empty()).map_err(|e| match e {
        rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR => {
            format!("{} is a symlink or not a directory", path.display())
        }
        e => format!("{}: {e}", path.display()),
    })?;
    let st = fstat(&fd).map_err(|e| format!("{}: {e}", path.display()))?;
    if st.st_uid != euid() {
        return Err(format!(
            "{} is owned by uid {}, not by this user (uid {})",
            path.display(),
            st.st_uid,
            euid()
        ));
    }
    if st.st_mode & 0o077 != 0 {
        return Err(format!(
            "{} has mode {:04o}: others can write or read it (must be 0700)",
            path.display(),
            st.st_mode & 0o7777
        ));
    }
    Ok(TrustedDir { fd, path: path.to_path_buf() })
}

/// Creates `path` with mode 0700 if it does not exist, then opens it as
/// [`open_trusted`] does.
fn create_trusted(path: &Path) -> Result<TrustedDir, String> {
    match mkdirat(CWD, path, Mode::RWXU) {
        Ok(()) | Err(rustix::io::Errno::EXIST) => open_trusted(path),
        Err(e) => Err(format!("creating {}: {e}", path.display())),
    }
}

/// The place records belong, before any check: the runtime directory's
/// `contend`, or `contend-UID` in the temporary directory (then `true`).
fn preferred() -> (PathBuf, bool) {
    let uid = euid();
    let runtime = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute() && p.is_dir())
        .or_else(|| Some(PathBuf::from(format!("/run/user/{uid}"))).filter(|p| p.is_dir()));
    match runtime {
        Some(dir) => (dir.join("contend"), false),
        None => (temp_base().join(format!("contend-{uid}")), true),
    }
}

/// `$TMPDIR` if it names an absolute directory, else /tmp.
pub fn temp_base() -> PathBuf {
    std::env::var_os("TMPDIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute() && p.is_dir())
        .unwrap_or_else(|| PathBuf::from("/tmp"))
}

/// The directory this process writes its records into, created if
/// needed and checked once per process. When the usual place is refused,
/// a warning says why and where the records go instead.
pub fn for_writing() -> Result<&'static TrustedDir, String> {
    static DIR: std::sync::OnceLock<Result<TrustedDir, String>> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let (dir, warning) = choose()?;
        if let Some(w) = warning {
            // Seen at once, not at the end: it is about someone tampering
            // with this user's files.
            eprintln!("warning: {w}");
        }
        Ok(dir)
    })
    .as_ref()
    .map_err(Clone::clone)
}

fn choose() -> Result<(TrustedDir, Option<String>), String> {
    let (path, in_temp) = preferred();
    match create_trusted(&path) {
        Ok(dir) => Ok((dir, None)),
        Err(why) if in_temp => {
            let reused = fallbacks(&path).into_iter().find_map(|p| open_trusted(&p).ok());
            let dir = match reused {
                Some(dir) => dir,
                None => {
                    let template = path.with_file_name(format!("contend-{}.XXXXXX", euid()));
                    let fresh = nix::unistd::mkdtemp(&template)
                        .map_err(|e| format!("{why}; and creating {}: {e}", template.display()))?;
                    open_trusted(&fresh)?
                }
            };
            let warning = format!(
                "not trusting the ledger directory: {why}; this run's cleanup record (and the interposer \
                 copy) are in {} instead, reused by later runs (`contend cleanup` looks there too). To \
                 repair it: {}",
                dir.path.display(),
                repair(&path)
            );
            Ok((dir, Some(warning)))
        }
        Err(why) => Err(why),
    }
}

/// The fallback directories beside `path` (`contend-UID.XXXXXX`), by name.
fn fallbacks(path: &Path) -> Vec<PathBuf> {
    let prefix = format!("contend-{}.", euid());
    let parent = path.parent().unwrap_or(Path::new("/tmp"));
    let mut found: Vec<PathBuf> = std::fs::read_dir(parent)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_name().to_str().is_some_and(|n| n.starts_with(&prefix)))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// The one command that makes `path` usable again, for the warning.
fn repair(path: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let shown = path.display();
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.uid() == euid() && m.is_dir() => format!("chmod 700 {shown}"),
        Ok(m) if m.uid() == euid() => format!("rm {shown} (it is not a directory)"),
        Ok(m) if euid() == 0 => {
            format!("rm -r -- {shown} (uid {} put it there; rm follows no link inside it)", m.uid())
        }
        Ok(m) => format!(
            "it belongs to uid {}: ask root to remove it, or export XDG_RUNTIME_DIR=DIR, a directory of \
             yours that only you can enter",
            m.uid()
        ),
        Err(e) => format!("{shown}: {e}"),
    }
}

/// Every directory cleanup should read: the usual one and, in the
/// temporary directory, the fresh ones made when it was refused. Each is
/// checked; refused ones come back as the reason, never read.
pub fn for_cleanup() -> Vec<Result<TrustedDir, String>> {
    let (path, in_temp) = preferred();
    let mut found = Vec::new();
    if statat(CWD, &path, AtFlags::SYMLINK_NOFOLLOW).is_ok() {
        found.push(open_trusted(&path));
    }
    if in_temp {
        found.extend(fallbacks(&path).iter().map(|p| open_trusted(p)));
    }
    found
}

/// The fallback directories that are this user's and hold no record, not
/// written for an hour (a run writes its interposer copy there before its
/// record): spare, for cleanup to remove.
pub fn spare_fallbacks() -> Vec<TrustedDir> {
    let (path, in_temp) = preferred();
    if !in_temp {
        return Vec::new();
    }
    let idle = |dir: &TrustedDir| {
        fstat(&dir.fd).is_ok_and(|st| {
            let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(st.st_mtime.max(0) as u64);
            at.elapsed().is_ok_and(|age| age > std::time::Duration::from_secs(3600))
        })
    };
    fallbacks(&path)
        .iter()
        .filter_map(|p| open_trusted(p).ok())
        .filter(|dir| idle(dir) && !dir.names().iter().any(|n| n.ends_with(".json")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn only_a_private_directory_of_ours_is_trusted() {
        let base = tempfile::tempdir().unwrap();
        let private = base.path().join("private");
        assert!(create_trusted(&private).is_ok());
        let open = base.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(open_trusted(&open).unwrap_err().contains("mode 0777"));
        let link = base.path().join("link");
        std::os::unix::fs::symlink(&private, &link).unwrap();
        assert!(open_trusted(&link).unwrap_err().contains("symlink"));
    }
}
