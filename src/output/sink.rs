//! Where exports go, checked before anything is measured: a path that
//! cannot be written (a missing directory, a directory, no permission) is
//! a usage error found in a millisecond, not after a ten-minute sweep whose
//! results it would then lose. `-` is stdout for every export (and then
//! the terminal table is left out, so the stream stays machine-readable).
//!
//! Another user's link is never followed, and another user's FIFO or
//! device never written ([`super::safe_path`]): root's export into a
//! directory someone else can write cannot be turned against a file, a
//! device or a reader of their choosing. Refused with exit 2, naming the
//! owner. The process's own streams (`/dev/stdout`, `/dev/fd/N`) are
//! written as they are.
//!
//! A regular file is written whole or not at all: the export goes to a
//! temporary file beside it (`.contend-PID-N.NAME`), made and renamed
//! through a descriptor of the directory that holds the name (opened with
//! no symlink allowed on the way), so a run killed with SIGKILL leaves the
//! old file (or none), never an empty or half-written one, and a link
//! planted in the meantime is replaced, not followed. An existing file of
//! the user's keeps its permissions (and the user's own symlink stays a
//! symlink: the file it names is replaced). A FIFO or device of the user's
//! or root's is opened up front, as it is (that open may block until a
//! FIFO has a reader, and a signal ends it as it would any program), and
//! written directly. Writing to a FIFO, a device or stdout can block for
//! ever (a reader that stopped reading), so an ending signal ends it with
//! its default action; a regular file's temporary twin is written with the
//! signals blocked, so it is always renamed or removed.

use crate::model::SpecError;
use crate::output::args::OutputArgs;
use crate::output::safe_path;
use anyhow::{Context, Result};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// One export's destination.
#[derive(Debug)]
pub struct Sink {
    /// As the user gave it, for messages.
    path: PathBuf,
    to: To,
}

#[derive(Debug)]
enum To {
    Stdout,
    /// A FIFO, a device, the process's own stream: written directly.
    Open(File),
    /// A regular file, or none yet: written by rename in `dir`.
    Replace {
        dir: OwnedFd,
        name: OsString,
    },
}

/// A fresh name for a temporary twin of `name`, ending as `name` does (a
/// drawing library picks the image format by the extension).
fn temporary(name: &std::ffi::OsStr) -> OsString {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        ".contend-{}-{}.{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed),
        name.to_string_lossy()
    )
    .into()
}

/// What is at `name` in `dir`, not following a link; None if nothing.
fn at(dir: &OwnedFd, name: &std::ffi::OsStr) -> std::io::Result<Option<rustix::fs::Stat>> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(st)),
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

impl Sink {
    /// Checks `path` for the export `flag` (named in errors).
    pub fn open(flag: &str, path: &Path) -> Result<Self, SpecError> {
        let bad = |why: String| SpecError(format!("{flag} {}: {why}", path.display()));
        if path.as_os_str() == "-" {
            return Ok(Self { path: path.to_path_buf(), to: To::Stdout });
        }
        if safe_path::own_stream(path) {
            let open = crate::session::signals::interruptible(|| File::options().write(true).open(path));
            return Ok(Self {
                path: path.to_path_buf(),
                to: To::Open(open.map_err(|e| bad(e.to_string()))?),
            });
        }
        let real = safe_path::resolve(path).map_err(bad)?;
        let (Some(parent), Some(name)) = (real.parent(), real.file_name()) else {
            return Err(bad("is a directory".into()));
        };
        // No symlink is left in `parent`; one put there since is refused.
        let dir = rustix::fs::openat2(
            rustix::fs::CWD,
            parent,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::NO_SYMLINKS,
        )
        .map_err(|e| bad(format!("{}: {}", parent.display(), std::io::Error::from(e))))?;
        let name = name.to_os_string();
        let to = match at(&dir, &name).map_err(|e| bad(e.to_string()))? {
            None => {
                // Can a file be made there? Try the temporary name.
                let probe = temporary(&name);
                let flags =
                    OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                rustix::fs::openat(&dir, &probe, flags, Mode::RUSR | Mode::WUSR)
                    .map_err(|e| bad(std::io::Error::from(e).to_string()))?;
                let _ = rustix::fs::unlinkat(&dir, &probe, AtFlags::empty());
                To::Replace { dir, name }
            }
            Some(st) => match FileType::from_raw_mode(st.st_mode) {
                FileType::Directory => return Err(bad("is a directory".into())),
                FileType::Symlink => return Err(bad("changed into a symlink while it was checked".into())),
                FileType::RegularFile => {
                    // Writable? (Opened without truncating, and closed.)
                    let flags = OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                    rustix::fs::openat(&dir, &name, flags, Mode::empty())
                        .map_err(|e| bad(std::io::Error::from(e).to_string()))?;
                    To::Replace { dir, name }
                }
                kind => {
                    let what = match kind {
                        FileType::Fifo => "a FIFO",
                        FileType::CharacterDevice => "a character device",
                        FileType::BlockDevice => "a block device",
                        FileType::Socket => "a socket",
                        _ => "not a regular file",
                    };
                    if !safe_path::trusted(st.st_uid) {
                        return Err(bad(format!(
                            "{what} owned by {}, not by you ({}) or root: contend writes an export only \
                             to its own user's FIFOs and devices",
                            safe_path::owner(st.st_uid),
                            safe_path::me()
                        )));
                    }
                    let flags = OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                    let fd = crate::session::signals::interruptible(|| {
                        rustix::fs::openat(&dir, &name, flags, Mode::empty()).map_err(std::io::Error::from)
                    })
                    .map_err(|e| bad(e.to_string()))?;
                    let now = rustix::fs::fstat(&fd).map_err(|e| bad(std::io::Error::from(e).to_string()))?;
                    if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino) {
                        return Err(bad("was replaced while it was opened".into()));
                    }
                    To::Open(fd.into())
                }
            },
        };
        Ok(Self { path: path.to_path_buf(), to })
    }

    /// Whether this export goes to stdout.
    pub fn is_stdout(&self) -> bool {
        matches!(self.to, To::Stdout)
    }

    /// Writes the export, replacing what a regular file held.
    pub fn write(self, text: &str) -> Result<()> {
        self.write_bytes(text.as_bytes())
    }

    /// Writes the export's bytes, replacing what a regular file held.
    pub fn write_bytes(self, bytes: &[u8]) -> Result<()> {
        if self.is_stdout() {
            // A pipe whose reader stopped reading must not make contend
            // deaf to Ctrl-C (see `write_with`).
            return crate::session::signals::interruptible(|| print_bytes(bytes));
        }
        self.write_with(|file, _| file.write_all(bytes).map_err(Into::into))
    }

    /// Writes the export with `fill`, given the file to write and a path
    /// to it (a drawing library that writes by path uses the latter). Not
    /// for stdout: the commands that draw ask for a file name.
    pub fn write_with(self, fill: impl FnOnce(&mut File, &Path) -> Result<()>) -> Result<()> {
        let shown = self.path.display().to_string();
        match self.to {
            To::Stdout => anyhow::bail!("this export is written to a file, not to stdout"),
            // A FIFO whose reader stopped reading blocks the write for
            // ever: an ending signal must end it, as it would any program.
            // Exports are written after the measurement, when contend owns
            // nothing more to clean up, and a FIFO leaves no file behind.
            To::Open(mut file) => crate::session::signals::interruptible(|| {
                fill(&mut file, &self.path).with_context(|| format!("writing {shown}"))?;
                file.flush().with_context(|| format!("writing {shown}"))
            }),
            To::Replace { dir, name } => {
                let tmp = temporary(&name);
                let result = (|| -> Result<()> {
                    let flags =
                        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                    let fd = rustix::fs::openat(&dir, &tmp, flags, Mode::from_raw_mode(0o666))?;
                    let mut file = File::from(fd);
                    // The same file by a path through the directory's
                    // descriptor: no link on the way can redirect it.
                    let by_path = PathBuf::from(format!("/proc/self/fd/{}", dir.as_raw_fd())).join(&tmp);
                    fill(&mut file, &by_path)?;
                    file.flush()?;
                    // The user's own file keeps its mode; another's does
                    // not lend it (a 0666 file would open ours to them).
                    if let Some(old) = at(&dir, &name)? {
                        let regular = FileType::from_raw_mode(old.st_mode) == FileType::RegularFile;
                        if regular && old.st_uid == rustix::process::geteuid().as_raw() {
                            rustix::fs::fchmod(&file, Mode::from_raw_mode(old.st_mode & 0o7777))?;
                        }
                    }
                    rustix::fs::renameat(&dir, &tmp, &dir, &name)?;
                    Ok(())
                })();
                if result.is_err() {
                    let _ = rustix::fs::unlinkat(&dir, &tmp, AtFlags::empty());
                }
                result.with_context(|| format!("writing {shown}"))
            }
        }
    }
}

/// Every export of one command, open.
#[derive(Debug, Default)]
pub struct Exports {
    /// --export-json.
    pub json: Option<Sink>,
    /// --export-ndjson.
    pub ndjson: Option<Sink>,
    /// --export-csv.
    pub csv: Option<Sink>,
    /// --export-markdown.
    pub markdown: Option<Sink>,
    /// --export-gnuplot.
    pub gnuplot: Option<Sink>,
    /// --plot.
    pub plot: Option<Sink>,
}

impl Exports {
    /// Opens every export `output` names; refuses two exports into one
    /// file, two to stdout, and `--plot` where the command draws none.
    pub fn open(output: &OutputArgs, draws_plots: bool) -> Result<Self, SpecError> {
        if output.plot.is_some() && !draws_plots {
            return Err(SpecError("--plot: this command draws no plot (use --export-gnuplot)".into()));
        }
        // The plot is SVG; a file named otherwise would hold SVG under a
        // name that promises something else (x.png).
        if let Some(path) = output.plot.as_deref().filter(|p| p.as_os_str() != "-") {
            let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
            if ext.as_deref() != Some("svg") {
                return Err(SpecError(format!(
                    "--plot {}: the plot is written as SVG; name the file .svg (or - for stdout)",
                    path.display()
                )));
            }
        }
        let named = [
            ("--export-json", output.export_json.as_deref()),
            ("--export-ndjson", output.export_ndjson.as_deref()),
            ("--export-csv", output.export_csv.as_deref()),
            ("--export-markdown", output.export_markdown.as_deref()),
            ("--export-gnuplot", output.export_gnuplot.as_deref()),
            ("--plot", output.plot.as_deref()),
        ];
        for (i, (flag, path)) in named.iter().enumerate() {
            let Some(path) = path else { continue };
            if let Some((other, _)) = named[..i].iter().find(|(_, p)| *p == Some(*path)) {
                return Err(SpecError(format!(
                    "{other} and {flag} both name {}: give each export its own file",
                    path.display()
                )));
            }
        }
        let open = |i: usize| named[i].1.map(|p| Sink::open(named[i].0, p)).transpose();
        Ok(Self {
            json: open(0)?,
            ndjson: open(1)?,
            csv: open(2)?,
            markdown: open(3)?,
            gnuplot: open(4)?,
            plot: open(5)?,
        })
    }

    /// Whether some export goes to stdout (the terminal output is then
    /// left out).
    pub fn stdout_taken(&self) -> bool {
        [&self.json, &self.ndjson, &self.csv, &self.markdown, &self.gnuplot, &self.plot]
            .into_iter()
            .flatten()
            .any(Sink::is_stdout)
    }
}

/// Writes to stdout; a closed pipe (`| head`) is not an error worth a
/// trace.
pub fn print(text: &str) -> Result<()> {
    print_bytes(text.as_bytes())
}

/// [`print`], for bytes.
pub fn print_bytes(bytes: &[u8]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("writing to stdout"),
    }
}

/// Writes `text` to `sink`, if that export was asked for.
pub fn emit(sink: Option<Sink>, text: impl FnOnce() -> Result<String>) -> Result<()> {
    match sink {
        Some(sink) => sink.write(&text()?),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_created_before_the_write_and_a_file_is_replaced_whole() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        drop(Sink::open("--export-json", &path).unwrap());
        assert!(!path.exists(), "a run that ends before its results leaves no file");
        Sink::open("--export-json", &path).unwrap().write("new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        // An existing file keeps its content until the results replace
        // it, and keeps its mode.
        std::fs::write(&path, "old and longer").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let sink = Sink::open("--export-json", &path).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old and longer");
        sink.write("short").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "short");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o640);
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(left.len(), 1, "no temporary file left: {left:?}");
    }

    #[test]
    fn unwritable_and_clashing_paths_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(Sink::open("--export-csv", dir.path()).unwrap_err().0.contains("is a directory"));
        let missing = dir.path().join("no/such/dir/x.csv");
        assert!(Sink::open("--export-csv", &missing).is_err());
        let same = dir.path().join("x");
        let twice =
            OutputArgs { export_json: Some(same.clone()), export_csv: Some(same), ..OutputArgs::default() };
        assert!(Exports::open(&twice, true).unwrap_err().0.contains("both name"));
        let two_stdout = OutputArgs {
            export_json: Some("-".into()),
            export_ndjson: Some("-".into()),
            ..OutputArgs::default()
        };
        assert!(Exports::open(&two_stdout, true).is_err());
        let plot = OutputArgs { plot: Some(dir.path().join("p.svg")), ..OutputArgs::default() };
        assert!(Exports::open(&plot, false).unwrap_err().0.contains("draws no plot"));
    }
}
