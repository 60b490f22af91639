//! Where the program's stdout and stderr go (`--output`), and the output
//! of the commands around it (`--prepare`, `--conclude`, `--cleanup`):
//! contend's own streams, nowhere, or a file. A file is filled in the
//! run's private directory as the executions go, every one appended in
//! order, and written to its name when the run ends through an export
//! [`Sink`] (whole, never through another user's link: contend runs as
//! root). `--metric` reads each execution's output from capture files and
//! passes it on to the same place, unchanged.

use crate::family::program::args::ProgramOutput;
use crate::family::program::scratch::RunDir;
use crate::output::sink::Sink;
use anyhow::{Context, Result};
use std::fs::File;
use std::io::{BufRead, Seek, Write};

/// The destination, opened.
pub(crate) enum Streams {
    /// contend's own stdout and stderr.
    Inherit,
    /// /dev/null.
    Null,
    /// The file in the run's directory, and where it goes at the end.
    File { gathered: File, sink: Sink },
}

impl Streams {
    /// Opens `output`: a file's name is checked as an export's is (exit 2
    /// before anything runs), and its content gathered in `dir`.
    pub(crate) fn open(output: &ProgramOutput, dir: &RunDir) -> Result<Self> {
        Ok(match output {
            ProgramOutput::Inherit => Streams::Inherit,
            ProgramOutput::Null => Streams::Null,
            ProgramOutput::File(path) => {
                let sink = Sink::open("--output", path)?;
                if sink.is_stdout() {
                    return Err(crate::model::SpecError(
                        "--output -: the program's output already goes to stdout with --output inherit"
                            .into(),
                    )
                    .into());
                }
                Streams::File { gathered: dir.create_file("output")?, sink }
            }
        })
    }

    /// The stdout and stderr a process is started with: None inherits
    /// contend's.
    pub(crate) fn for_child(&self) -> Result<Option<(File, File)>> {
        let null = || std::fs::OpenOptions::new().write(true).open("/dev/null");
        Ok(match self {
            Streams::Inherit => None,
            Streams::Null => Some((null()?, null()?)),
            // Opened O_APPEND: both streams land in the order written.
            Streams::File { gathered, .. } => Some((gathered.try_clone()?, gathered.try_clone()?)),
        })
    }

    /// Passes a captured stream on (`err`: it was stderr) and returns the
    /// metric found in it.
    pub(crate) fn pass(
        &mut self,
        captured: File,
        err: bool,
        metric: Option<&regex::Regex>,
    ) -> Result<Option<f64>> {
        match self {
            Streams::Inherit if err => pass_through(captured, &mut std::io::stderr().lock(), metric),
            Streams::Inherit => pass_through(captured, &mut std::io::stdout().lock(), metric),
            Streams::Null => pass_through(captured, &mut std::io::sink(), metric),
            Streams::File { gathered, .. } => pass_through(captured, gathered, metric),
        }
    }

    /// Writes the gathered output to its file (nothing to do otherwise).
    pub(crate) fn finish(self) -> Result<()> {
        let Streams::File { mut gathered, sink } = self else { return Ok(()) };
        gathered.rewind()?;
        sink.write_with(|file, _| {
            std::io::copy(&mut gathered, file)?;
            Ok(())
        })
        .context("writing the program's output (--output)")
    }
}

/// The metric in `text`: the last line `re` matches, its first group (or
/// the whole match), as a number.
pub fn metric_in(re: &regex::Regex, text: &str) -> Option<f64> {
    text.lines().rev().find_map(|line| {
        let c = re.captures(line)?;
        let m = c.get(1).or_else(|| c.get(0))?;
        m.as_str().trim().replace(',', "").parse::<f64>().ok()
    })
}

/// Copies a captured stream to where the program's own would have gone,
/// unchanged, and returns the metric found in it (the last matching line).
fn pass_through(mut file: File, to: &mut dyn Write, metric: Option<&regex::Regex>) -> Result<Option<f64>> {
    file.rewind()?;
    let mut found = None;
    let mut reader = std::io::BufReader::new(file);
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        match to.write_all(&line) {
            // A closed pipe downstream (`| head`) loses nothing of ours.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            other => other.context("passing the program's output on")?,
        }
        if let Some(re) = metric {
            if let Some(v) = metric_in(re, &String::from_utf8_lossy(&line)) {
                found = Some(v);
            }
        }
    }
    let _ = to.flush();
    Ok(found)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_metric_is_the_last_matching_line() {
        let re = regex::Regex::new(r"events/s \(eps\): *([0-9.,]+)").unwrap();
        let text = "events/s (eps): 10.5\nnoise\n    events/s (eps): 1,234.5\nend\n";
        assert_eq!(super::metric_in(&re, text), Some(1234.5));
        assert_eq!(super::metric_in(&re, "nothing"), None);
        let whole = regex::Regex::new(r"[0-9]+ MB/s").unwrap();
        assert_eq!(super::metric_in(&whole, "x 12 MB/s"), None, "the whole match is not a number");
    }

    #[test]
    fn output_is_inherit_null_or_a_file() {
        use crate::family::program::args::ProgramOutput;
        assert_eq!(ProgramOutput::parse("null").unwrap(), ProgramOutput::Null);
        assert_eq!(ProgramOutput::parse("./null").unwrap(), ProgramOutput::File("./null".into()));
        assert!(ProgramOutput::parse("").is_err());
    }
}
