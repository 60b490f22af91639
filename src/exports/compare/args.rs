//! `contend compare`'s flags, and which files are the two sides.

use crate::model::value::parse_percent;
use clap::Args;
use std::path::PathBuf;

/// `contend compare`.
#[derive(Debug, Args)]
#[command(after_help = COMPARE_EXAMPLES)]
pub struct CompareArgs {
    /// OLD NEW: two exports (--export-json, any family), or the OLD side's
    /// exports, one per invocation, with the NEW side's after `--`; with
    /// --baseline, the one export whose points are compared.
    #[arg(required = true, value_name = "EXPORT")]
    pub exports: Vec<PathBuf>,
    /// The NEW side's exports, one per invocation (after `--`; flags go
    /// before it, since everything after it is a file).
    #[arg(last = true, value_name = "NEW")]
    pub new: Vec<PathBuf>,
    /// Compare the points of one export with its baseline point, run
    /// against run of the same round: a lock (primitive, allocator) name,
    /// or FIELD=VALUE such as hold=1us or replica=1.
    #[arg(long, value_name = "POINT")]
    pub baseline: Option<String>,
    /// A significant slowdown larger than this is a regression (exit 1);
    /// also the difference the invocations-to-resolve estimate is for.
    #[arg(long, value_parser = parse_percent, default_value = "5%", value_name = "PERCENT")]
    pub threshold: f64,
    /// Print the comparison as JSON instead of a table (for scripts).
    #[arg(long)]
    pub json: bool,
}

impl CompareArgs {
    /// The two sides' files, or why the command line does not give them.
    pub fn sides(&self) -> Result<(&[PathBuf], &[PathBuf]), String> {
        match (self.exports.as_slice(), self.new.as_slice()) {
            (_, []) if self.baseline.is_some() && self.exports.len() == 1 => Ok((&self.exports, &[])),
            (_, _) if self.baseline.is_some() => {
                Err("--baseline compares the points of one export: give exactly one".into())
            }
            ([old, new], []) => Ok((std::slice::from_ref(old), std::slice::from_ref(new))),
            (_, []) => Err(format!(
                "{} export(s) given: compare takes OLD NEW, or several per side split by `--` \
                 (OLD1 OLD2 -- NEW1 NEW2)",
                self.exports.len()
            )),
            (old, new) => Ok((old, new)),
        }
    }
}

const COMPARE_EXAMPLES: &str = "\
Examples:
  contend compare before.json after.json
  contend compare old-1.json old-2.json old-3.json -- new-1.json new-2.json new-3.json
  contend lock --lock adaptive,pthread,parking_lot --threads 2,4 --export-json m.json
  contend compare m.json --baseline pthread
  contend lock --lock seed --threads 2 --hold 1us,1.03us --runs 20 --export-json ab.json
  contend compare ab.json --baseline hold=1us";
