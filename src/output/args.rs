//! Where results go: the same flags for every measuring command, so a new
//! format is one field here (and one file in `report`).

use clap::Args;
use serde::Serialize;
use std::path::PathBuf;

/// The headings `--help` groups each command's options under, in the
/// order they first appear: what runs, how it is measured, where results
/// go, and what helps when something goes wrong.
pub const WORKLOAD: &str = "Workload";
/// How the workload is measured: windows, runs, repetition, screening.
pub const MEASUREMENT: &str = "Measurement";
/// Where results go.
pub const OUTPUT: &str = "Output";
/// Watchdogs, fault injection and tracing.
pub const DIAGNOSIS: &str = "Diagnosis";
/// Where and how the wakeup family's threads run.
pub const SCHEDULING: &str = "Scheduling";
/// `contend run`: which locks, and what the profile does.
pub const LOCKS_AND_PROFILE: &str = "Locks and profile";
/// `contend run`: how the program is run and read.
pub const PROGRAM: &str = "Program";

/// Fits the shared flags to one command (`#[command(mut_args(...))]` on
/// its flags): --export-gnuplot's help says what `columns` this command
/// writes, --plot's what `figure` it draws, and --plot is hidden where the
/// command draws none (`figure` None; sink::Exports::open refuses it there
/// too), so each flag a command offers means something in it.
pub fn fit_to(columns: &'static str, figure: Option<&'static str>) -> impl FnMut(clap::Arg) -> clap::Arg {
    move |a| match (a.get_id().as_str(), figure) {
        ("export_gnuplot", _) => a.help(format!("Write gnuplot-ready columns to FILE: {columns}")),
        ("plot", Some(figure)) => a.help(format!("Draw the results as an SVG: {figure}")),
        ("plot", None) => a.hide(true),
        _ => a,
    }
}

/// The export flags, flattened into each command.
#[derive(Debug, Clone, Default, Args, Serialize, schemars::JsonSchema)]
#[command(next_help_heading = crate::output::args::OUTPUT)]
pub struct OutputArgs {
    /// Write every result, the spec and the environment as JSON to FILE
    /// (`-`: stdout, which then carries only the JSON). Every export path
    /// is opened before anything is measured.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,

    /// Write the same as newline-delimited JSON to FILE: a header line,
    /// then one line per point (for jq, log pipelines and databases).
    #[arg(long, value_name = "FILE")]
    pub export_ndjson: Option<PathBuf>,

    /// Write one CSV row per point, every scalar, to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,

    /// Write the table as Markdown to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,

    /// Write gnuplot-ready columns to FILE (each command says which).
    #[arg(long, value_name = "FILE")]
    pub export_gnuplot: Option<PathBuf>,

    /// Draw the results as an SVG (each command says what it draws).
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,

    /// Column groups in the terminal and Markdown tables, comma-separated:
    /// `default`, `all`, or the family's groups (the table names the ones
    /// it hides). The swept axes and the metric are always shown.
    #[arg(long, value_delimiter = ',', value_name = "GROUPS")]
    pub columns: Vec<String>,

    /// Every column in the tables (the same as --columns all).
    #[arg(long)]
    pub wide: bool,

    /// Never show the progress bar.
    #[arg(long)]
    #[serde(skip)]
    pub no_progress: bool,

    /// Only the results (and errors): no progress bar, no warnings or
    /// status lines on stderr, for scripts. The warnings stay in the
    /// exports.
    #[arg(long, short = 'q')]
    #[serde(skip)]
    pub quiet: bool,
}
