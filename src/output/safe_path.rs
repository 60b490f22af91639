//! Where a path the user named really leads, resolved as a careful root
//! would: every symlink on the way must belong to contend's effective user
//! or to root, else the path is refused and the link's owner named. The
//! kernel protects only sticky world-writable directories this way
//! (fs.protected_symlinks, protected_fifos); an export can go anywhere,
//! including a directory another user can write (their home, a shared
//! results directory), where a planted link would make root replace a file
//! or overwrite a device of the link's choosing.
//!
//! The result is a path with no symlink left in it; its directory is then
//! opened with `RESOLVE_NO_SYMLINKS`, so a directory swapped for a link
//! after the check makes the open fail instead of following it.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// Symlinks followed in one resolution before it is called a loop (the
/// kernel's own limit).
const MAX_LINKS: usize = 40;

/// Whether contend, running as `euid`, writes through what `uid` owns:
/// its own things and root's.
pub fn trusted(uid: u32) -> bool {
    uid == 0 || uid == rustix::process::geteuid().as_raw()
}

/// `uid`'s name with the number, for messages.
pub fn owner(uid: u32) -> String {
    match nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid)) {
        Ok(Some(u)) => format!("{} (uid {uid})", u.name),
        _ => format!("uid {uid}"),
    }
}

/// Who contend runs as, for messages.
pub fn me() -> String {
    owner(rustix::process::geteuid().as_raw())
}

/// The paths that name the process's own standard streams and open
/// descriptors: written as they are, whoever owns what they lead to (the
/// user's terminal under sudo is theirs, and it is the user's own stream).
pub fn own_stream(path: &Path) -> bool {
    let text = path.as_os_str().to_string_lossy();
    matches!(text.as_ref(), "/dev/stdout" | "/dev/stderr")
        || ["/dev/fd/", "/proc/self/fd/"].iter().any(|p| {
            text.strip_prefix(p).is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// `path` with every symlink resolved, each checked to belong to the user
/// or root. The last component need not exist (a new file); every other
/// must. The error says which link, whose, and where it leads.
pub fn resolve(path: &Path) -> Result<PathBuf, String> {
    let start = if path.is_absolute() {
        PathBuf::from("/")
    } else {
        std::env::current_dir().map_err(|e| format!("the current directory: {e}"))?
    };
    let mut todo: Vec<OsString> = components(path);
    todo.reverse();
    let mut at = start;
    let mut links = 0;
    while let Some(part) = todo.pop() {
        match part.to_str() {
            Some(".") => continue,
            Some("..") => {
                at.pop();
                continue;
            }
            _ => {}
        }
        let next = at.join(&part);
        let meta = match std::fs::symlink_metadata(&next) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && todo.is_empty() => return Ok(next),
            Err(e) => return Err(format!("{}: {e}", next.display())),
        };
        if !meta.file_type().is_symlink() {
            at = next;
            continue;
        }
        let target = std::fs::read_link(&next).map_err(|e| format!("{}: {e}", next.display()))?;
        if !trusted(meta.uid()) {
            return Err(format!(
                "{} is a symlink owned by {}, not by you ({}) or root; contend does not follow another \
                 user's link to write (it leads to {}: name that path if it is what you mean)",
                next.display(),
                owner(meta.uid()),
                me(),
                target.display()
            ));
        }
        links += 1;
        if links > MAX_LINKS {
            return Err(format!("{}: too many levels of symbolic links", path.display()));
        }
        if target.is_absolute() {
            at = PathBuf::from("/");
        }
        let mut more = components(&target);
        more.reverse();
        todo.extend(more);
    }
    Ok(at)
}

/// A path's parts, as names (`..` and `.` kept, the root dropped).
fn components(path: &Path) -> Vec<OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::RootDir | Component::Prefix(_) => None,
            Component::CurDir => Some(".".into()),
            Component::ParentDir => Some("..".into()),
            Component::Normal(n) => Some(n.to_os_string()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_links_resolve_through_and_parts_may_be_missing_only_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(real.join("d")).unwrap();
        std::os::unix::fs::symlink("d", real.join("l")).unwrap();
        std::os::unix::fs::symlink(real.join("d/f"), real.join("abs")).unwrap();
        assert_eq!(resolve(&real.join("l/new.json")).unwrap(), real.join("d/new.json"));
        assert_eq!(resolve(&real.join("abs")).unwrap(), real.join("d/f"));
        assert_eq!(resolve(&real.join("d/../l/./x")).unwrap(), real.join("d/x"));
        assert!(resolve(&real.join("missing/x")).unwrap_err().contains("No such file"));
        std::os::unix::fs::symlink("loop", real.join("loop")).unwrap();
        assert!(resolve(&real.join("loop")).unwrap_err().contains("too many levels"));
    }

    #[test]
    fn the_process_own_streams_are_known_by_name() {
        for p in ["/dev/stdout", "/dev/stderr", "/dev/fd/1", "/proc/self/fd/12"] {
            assert!(own_stream(Path::new(p)), "{p}");
        }
        for p in ["/dev/fd/", "/dev/fd/x", "/dev/sda", "/proc/1/fd/1", "out.json"] {
            assert!(!own_stream(Path::new(p)), "{p}");
        }
    }
}
