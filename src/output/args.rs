//! Where results go: the same flags for every measuring command, so a new
//! format is one field here (and one file in `report`).

use clap::Args;
use serde::Serialize;
use std::path::PathBuf;

/// The export flags, flattened into each command.
#[derive(Debug, Clone, Default, Args, Serialize, schemars::JsonSchema)]
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

    /// Write gnuplot-ready columns to FILE (lock: lockscale's; wakeup:
    /// percentiles; alloc: one block per pattern).
    #[arg(long, value_name = "FILE")]
    pub export_gnuplot: Option<PathBuf>,

    /// Draw the results as an SVG (lock: cs/s against the swept axis with
    /// 95% intervals and a fairness panel; wakeup: latency percentiles).
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
}
