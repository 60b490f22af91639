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

use crate::model::SpecError;
use crate::output::args::OutputArgs;
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
            return Ok(Self { path: path.to_path_buf(), file: None, created: false, written: false });
        }
        if path.is_dir() {
            return Err(bad("is a directory".into()));
        }
        let (file, created) = match File::options().write(true).create_new(true).open(path) {
            Ok(f) => (f, true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let existing =
                    crate::session::signals::interruptible(|| File::options().write(true).open(path));
                (existing.map_err(|e| bad(e.to_string()))?, false)
            }
            Err(e) => return Err(bad(e.to_string())),
        };
        Ok(Self { path: path.to_path_buf(), file: Some(file), created, written: false })
    }

    /// Whether this export goes to stdout.
    pub fn is_stdout(&self) -> bool {
        self.file.is_none()
    }

    /// Writes the export, replacing what a regular file held.
    pub fn write(mut self, text: &str) -> Result<()> {
        let shown = self.path.display().to_string();
        match self.file.as_mut() {
            None => print(text)?,
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
