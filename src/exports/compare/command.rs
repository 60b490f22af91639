//! `contend compare`, the command: reads the exports, compares them (or
//! one against its baseline point) and prints the verdicts.

use super::args::CompareArgs;
use crate::model::SpecError;
use crate::output::sink::print;
use anyhow::Result;
use std::process::ExitCode;

/// `contend compare`: the table (or JSON) on stdout; exit 1 on a
/// regression.
pub fn run(args: &CompareArgs) -> Result<ExitCode> {
    // Reading and comparing own nothing (no file is written): Ctrl-C ends
    // them as it would any program.
    crate::session::signals::interruptible(|| compare(args))
}

fn compare(args: &CompareArgs) -> Result<ExitCode> {
    let read = |path: &std::path::Path| -> Result<serde_json::Value> {
        Ok(crate::exports::reader::read_export(path)?)
    };
    let (old, new) = args.sides().map_err(SpecError)?;
    if let Some(text) = &args.baseline {
        let baseline = super::paired::Baseline::parse(text).map_err(SpecError)?;
        let report = super::paired::compare_paired(&read(&old[0])?, &baseline).map_err(SpecError)?;
        if args.json {
            print(&(serde_json::to_string_pretty(&report)? + "\n"))?;
        } else {
            print(&super::table::render_paired(&report))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let all = |paths: &[std::path::PathBuf]| paths.iter().map(|p| read(p)).collect::<Result<Vec<_>>>();
    let report = super::compare(&all(old)?, &all(new)?, args.threshold).map_err(SpecError)?;
    if args.json {
        print(&(serde_json::to_string_pretty(&report)? + "\n"))?;
    } else {
        print(&super::table::render(&report))?;
    }
    Ok(if report.regressed() { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
