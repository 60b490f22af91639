//! One output path. Each family describes its results once, as a
//! [`Report`]; [`emit`] sends that to the terminal and to every export the
//! user asked for. A new format is a file here, a field in
//! `cli::OutputArgs` and `sink::Exports`, and a line in `emit`.

use crate::output::sink::{self, Exports};
use anyhow::Result;
use serde_json::Value;

/// A family's results in every form contend writes.
pub trait Report {
    /// What the terminal shows when no export takes stdout.
    fn terminal(&self) -> String;
    /// One CSV row per point, every scalar.
    fn csv(&self) -> String;
    /// The table as Markdown.
    fn markdown(&self) -> String;
    /// gnuplot-ready columns.
    fn gnuplot(&self) -> String;
    /// The SVG plot, or why it cannot be drawn; None for a family without
    /// one (`--plot` is then refused before measuring).
    fn plot(&self) -> Option<Result<String, String>>;
    /// The JSON document: header, spec, points.
    fn document(&self) -> serde_json::Result<Value>;
}

/// Writes `report` to the terminal (stdout, unless an export took it; or
/// stderr with `on_stderr`) and to each open export.
pub fn emit(exports: Exports, report: &dyn Report, on_stderr: bool) -> Result<()> {
    // What a program named (its functions, its path) is shown escaped.
    let visible = crate::session::visible::text;
    if on_stderr {
        eprint!("{}", visible(&report.terminal()));
    } else if !exports.stdout_taken() {
        sink::print(&visible(&report.terminal()))?;
    }
    // The document, for the exports that carry it or its header.
    let doc = match exports.json.is_some() || exports.ndjson.is_some() || exports.markdown.is_some() {
        true => Some(report.document()?),
        false => None,
    };
    let doc = || doc.as_ref().expect("made for every export that reads it");
    sink::emit(exports.csv, || Ok(report.csv()))?;
    sink::emit(exports.markdown, || {
        let head = crate::output::provenance::markdown(doc(), std::time::SystemTime::now());
        let table = crate::output::width::for_files(|| report.markdown());
        Ok(visible(&(head + &table)).into_owned())
    })?;
    sink::emit(exports.gnuplot, || Ok(report.gnuplot()))?;
    sink::emit(exports.plot, || {
        report.plot().unwrap_or_else(|| Err("this command draws no plot".into())).map_err(anyhow::Error::msg)
    })?;
    sink::emit(exports.json, || Ok(serde_json::to_string_pretty(doc())? + "\n"))?;
    sink::emit(exports.ndjson, || crate::output::ndjson::render(doc()))?;
    Ok(())
}
