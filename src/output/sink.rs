//! Where exports go, checked before anything is measured: a path that
//! cannot be written (a missing directory, a directory, no permission) is
//! a usage error found in a millisecond, not after a ten-minute sweep whose
//! results it would then lose. `-` is stdout for every export (and then
//! the terminal table is left out, so the stream stays machine-readable).
//!
//! A regular file is written whole or not at all: the export goes to a
//! temporary file beside it (`.contend-PID-N.NAME`), which is renamed
//! over the target only when complete, so a run killed with SIGKILL
//! leaves the old file (or none), never an empty or half-written one. An
//! existing file keeps its permissions (and a symlink stays a symlink:
//! the file it names is replaced). Anything else that exists (a
//! FIFO, a device, /dev/stdout) is opened up front, as it is (that open may
//! block until a FIFO has a reader, and a signal ends it as it would any
//! program), and written directly.

use crate::model::SpecError;
use crate::output::args::OutputArgs;
use anyhow::{Context, Result};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// One export's destination.
#[derive(Debug)]
pub struct Sink {
    path: PathBuf,
    to: To,
}

#[derive(Debug)]
enum To {
    Stdout,
    /// A FIFO, a device: written directly.
    Open(File),
    /// A regular file, or none yet: written by rename.
    Replace,
}

/// A fresh name beside `path` for its temporary twin, ending as `path`
/// does (a drawing library picks the image format by the extension).
fn temporary(path: &Path) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(
        ".contend-{}-{}.{name}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

impl Sink {
    /// Checks `path` for the export `flag` (named in errors).
    pub fn open(flag: &str, path: &Path) -> Result<Self, SpecError> {
        let bad = |why: String| SpecError(format!("{flag} {}: {why}", path.display()));
        if path.as_os_str() == "-" {
            return Ok(Self { path: path.to_path_buf(), to: To::Stdout });
        }
        if path.is_dir() {
            return Err(bad("is a directory".into()));
        }
        let to = match std::fs::metadata(path) {
            Ok(m) if m.is_file() => {
                // Writable? (Opened without truncating, and closed.)
                File::options().write(true).open(path).map_err(|e| bad(e.to_string()))?;
                // A symlink to a file: the file is what gets replaced, not
                // the link.
                let real = std::fs::canonicalize(path).map_err(|e| bad(e.to_string()))?;
                return Ok(Self { path: real, to: To::Replace });
            }
            Ok(_) => {
                let open = crate::session::signals::interruptible(|| File::options().write(true).open(path));
                To::Open(open.map_err(|e| bad(e.to_string()))?)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // Can a file be made there? Try the temporary name.
                let probe = temporary(path);
                File::options().write(true).create_new(true).open(&probe).map_err(|e| bad(e.to_string()))?;
                let _ = std::fs::remove_file(&probe);
                To::Replace
            }
            Err(e) => return Err(bad(e.to_string())),
        };
        Ok(Self { path: path.to_path_buf(), to })
    }

    /// Whether this export goes to stdout.
    pub fn is_stdout(&self) -> bool {
        matches!(self.to, To::Stdout)
    }

    /// Writes the export, replacing what a regular file held.
    pub fn write(self, text: &str) -> Result<()> {
        if self.is_stdout() {
            return print(text);
        }
        self.write_with(|file, _| file.write_all(text.as_bytes()).map_err(Into::into))
    }

    /// Writes the export with `fill`, given the file to write and its
    /// path (a drawing library that writes by path uses the latter). Not
    /// for stdout: the commands that draw ask for a file name.
    pub fn write_with(self, fill: impl FnOnce(&mut File, &Path) -> Result<()>) -> Result<()> {
        let shown = self.path.display().to_string();
        match self.to {
            To::Stdout => anyhow::bail!("this export is written to a file, not to stdout"),
            To::Open(mut file) => {
                fill(&mut file, &self.path).with_context(|| format!("writing {shown}"))?;
                file.flush().with_context(|| format!("writing {shown}"))
            }
            To::Replace => {
                let tmp = temporary(&self.path);
                let result = (|| -> Result<()> {
                    let mut file = File::options().write(true).create_new(true).open(&tmp)?;
                    fill(&mut file, &tmp)?;
                    file.flush()?;
                    if let Ok(old) = std::fs::metadata(&self.path) {
                        std::fs::set_permissions(&tmp, old.permissions())?;
                    }
                    std::fs::rename(&tmp, &self.path)?;
                    Ok(())
                })();
                if result.is_err() {
                    let _ = std::fs::remove_file(&tmp);
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
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
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
