//! Where exports go, opened before anything is measured: a path that
//! cannot be written (a missing directory, a directory, no permission) is
//! a usage error found in a millisecond, not after a ten-minute sweep whose
//! results it would then lose. `-` is stdout for every export (and then
//! the terminal table is left out, so the stream stays machine-readable).
//!
//! A file is created empty up front (or opened as it is, if it exists, so
//! FIFOs and devices work; that open may block until a FIFO has a reader,
//! and a signal ends it as it would any program). Its old content is
//! replaced only when the results are written; a file contend created is
//! removed again if the run fails before that.

use crate::spec::SpecError;
use anyhow::{Context, Result};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One export's destination.
#[derive(Debug)]
pub struct Sink {
    path: PathBuf,
    file: Option<File>,
    created: bool,
    written: bool,
}

impl Sink {
    /// Opens `path` for the export `flag` (named in errors).
    pub fn open(flag: &str, path: &Path) -> Result<Self, SpecError> {
        let bad = |why: String| SpecError(format!("{flag} {}: {why}", path.display()));
        if path.as_os_str() == "-" {
            return Ok(Self {
                path: path.to_path_buf(),
                file: None,
                created: false,
                written: false,
            });
        }
        if path.is_dir() {
            return Err(bad("is a directory".into()));
        }
        let (file, created) = match File::options().write(true).create_new(true).open(path) {
            Ok(f) => (f, true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let existing =
                    crate::runner::signals::interruptible(|| File::options().write(true).open(path));
                (existing.map_err(|e| bad(e.to_string()))?, false)
            }
            Err(e) => return Err(bad(e.to_string())),
        };
        Ok(Self {
            path: path.to_path_buf(),
            file: Some(file),
            created,
            written: false,
        })
    }

    /// Whether this export goes to stdout.
    pub fn is_stdout(&self) -> bool {
        self.file.is_none()
    }

    /// Writes the export, replacing what a regular file held.
    pub fn write(mut self, text: &str) -> Result<()> {
        let shown = self.path.display().to_string();
        match self.file.as_mut() {
            None => {
                let mut out = std::io::stdout().lock();
                match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                    Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                    other => other.context("writing to stdout")?,
                }
            }
            Some(file) => {
                if file.metadata().is_ok_and(|m| m.is_file()) {
                    file.set_len(0).with_context(|| format!("truncating {shown}"))?;
                }
                file.write_all(text.as_bytes())
                    .and_then(|()| file.flush())
                    .with_context(|| format!("writing {shown}"))?;
            }
        }
        self.written = true;
        Ok(())
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        if self.created && !self.written {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The export flags of one command, as given.
#[derive(Debug, Default, Clone, Copy)]
pub struct ExportPaths<'a> {
    /// --export-json.
    pub json: Option<&'a Path>,
    /// --export-csv.
    pub csv: Option<&'a Path>,
    /// --export-markdown.
    pub markdown: Option<&'a Path>,
    /// --export-gnuplot.
    pub gnuplot: Option<&'a Path>,
    /// --plot.
    pub plot: Option<&'a Path>,
}

/// Every export of one command, open.
#[derive(Debug, Default)]
pub struct Exports {
    /// --export-json.
    pub json: Option<Sink>,
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
    /// Opens them all; refuses two exports into one file, or two to stdout.
    pub fn open(paths: ExportPaths<'_>) -> Result<Self, SpecError> {
        let named = [
            ("--export-json", paths.json),
            ("--export-csv", paths.csv),
            ("--export-markdown", paths.markdown),
            ("--export-gnuplot", paths.gnuplot),
            ("--plot", paths.plot),
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
            csv: open(1)?,
            markdown: open(2)?,
            gnuplot: open(3)?,
            plot: open(4)?,
        })
    }

    /// Whether some export goes to stdout (the table is then left out).
    pub fn stdout_taken(&self) -> bool {
        [&self.json, &self.csv, &self.markdown, &self.gnuplot, &self.plot]
            .into_iter()
            .flatten()
            .any(Sink::is_stdout)
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
    fn a_file_made_for_a_failed_run_is_removed_and_a_written_one_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        drop(Sink::open("--export-json", &path).unwrap());
        assert!(!path.exists());
        Sink::open("--export-json", &path).unwrap().write("new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        // An existing file keeps its content until the results replace it.
        std::fs::write(&path, "old and longer").unwrap();
        let sink = Sink::open("--export-json", &path).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old and longer");
        sink.write("short").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "short");
    }

    #[test]
    fn unwritable_and_clashing_paths_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(Sink::open("--export-csv", dir.path())
            .unwrap_err()
            .0
            .contains("is a directory"));
        let missing = dir.path().join("no/such/dir/x.csv");
        assert!(Sink::open("--export-csv", &missing).is_err());
        let same = dir.path().join("x");
        let twice = ExportPaths {
            json: Some(&same),
            csv: Some(&same),
            ..ExportPaths::default()
        };
        assert!(Exports::open(twice).unwrap_err().0.contains("both name"));
        let dash = Path::new("-");
        let two_stdout = ExportPaths {
            json: Some(dash),
            csv: Some(dash),
            ..ExportPaths::default()
        };
        assert!(Exports::open(two_stdout).is_err());
    }
}
