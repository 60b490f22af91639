//! Parameter scans, as hyperfine has them: `--parameter-scan NAME MIN
//! MAX` (with `--parameter-step-size`) or `--parameter-list NAME
//! V1,V2,...` run the program once per value, `{NAME}` in its arguments
//! and in `--prepare`/`--conclude` replaced by the value. Every value's
//! points are measured in the same interleaved rounds, and each lock's
//! ratio is to glibc's mutex at the same value: a lock that wins at 2
//! threads and loses at 16 shows both.

use crate::model::program::ParameterValue;
use serde::Serialize;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

/// Values a scan may have: each is a full set of points.
pub const MAX_VALUES: usize = 64;

/// A parameter and its values, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Scan {
    /// Its name, as `{NAME}` in the arguments.
    pub name: String,
    /// Its values, as substituted.
    pub values: Vec<String>,
}

impl Scan {
    /// The scan `--parameter-scan` (NAME MIN MAX, with `step`) or
    /// `--parameter-list` (NAME VALUES) asks for; None for neither.
    pub fn parse(
        scan: Option<&[String]>,
        step: Option<&str>,
        list: Option<&[String]>,
    ) -> Result<Option<Scan>, String> {
        let (name, values) = match (scan, list) {
            (None, None) => {
                if let Some(step) = step {
                    return Err(format!("--parameter-step-size {step}: it is the step of --parameter-scan"));
                }
                return Ok(None);
            }
            (Some(s), None) => (&s[0], range(&s[1], &s[2], step.unwrap_or("1"))?),
            (None, Some(l)) => (&l[0], list_values(&l[1])?),
            (Some(_), Some(_)) => return Err("--parameter-scan and --parameter-list: give one".into()),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!(
                "parameter {name:?}: a name of letters, digits and _ (it is written {{{name}}})"
            ));
        }
        if values.len() > MAX_VALUES {
            return Err(format!("parameter {name}: {} values; at most {MAX_VALUES}", values.len()));
        }
        Ok(Some(Scan { name: name.clone(), values }))
    }

    /// `{NAME}` as it stands in an argument.
    pub fn placeholder(&self) -> String {
        ParameterValue::placeholder(&self.name)
    }

    /// Each value as a point's parameter.
    pub fn points(&self) -> impl Iterator<Item = ParameterValue> + '_ {
        self.values.iter().map(|v| ParameterValue { name: self.name.clone(), value: v.clone() })
    }
}

/// The scan `contend run` is asked for, whose `{NAME}` must stand
/// somewhere it is replaced: an argument of the program (not the program
/// itself), or --prepare or --conclude.
pub fn asked(args: &crate::family::program::args::ProgramArgs) -> Result<Option<Scan>, String> {
    let scan = Scan::parse(
        args.parameter_scan.as_deref(),
        args.parameter_step_size.as_deref(),
        args.parameter_list.as_deref(),
    )?;
    if let Some(s) = &scan {
        let mark = s.placeholder();
        let in_args = args.program[1..].iter().any(|a| a.to_string_lossy().contains(&mark));
        let in_hooks =
            [&args.prepare, &args.conclude].iter().any(|h| h.as_deref().is_some_and(|c| c.contains(&mark)));
        if !in_args && !in_hooks {
            return Err(format!(
                "parameter {}: {mark} is in none of the program's arguments (nor --prepare, --conclude): every \
                 value would run the same program",
                s.name
            ));
        }
    }
    Ok(scan)
}

/// MIN, MIN+STEP, ... up to MAX: integers.
fn range(min: &str, max: &str, step: &str) -> Result<Vec<String>, String> {
    let int = |what: &str, v: &str| -> Result<i64, String> {
        v.trim().parse().map_err(|_| format!("--parameter-scan: {what} {v:?} is not an integer"))
    };
    let (lo, hi, by) = (int("MIN", min)?, int("MAX", max)?, int("the step", step)?);
    if by <= 0 {
        return Err(format!("--parameter-step-size {step}: a step above 0"));
    }
    if hi < lo {
        return Err(format!("--parameter-scan: MAX {hi} is below MIN {lo}"));
    }
    // Checked: MIN and MAX may be any integers, and their distance may not
    // fit.
    let n = hi
        .checked_sub(lo)
        .map(|d| d / by + 1)
        .filter(|&n| n <= MAX_VALUES as i64)
        .ok_or_else(|| format!("--parameter-scan {lo} to {hi} by {by}: more than {MAX_VALUES} values"))?;
    Ok((0..n).map(|i| (lo + i * by).to_string()).collect())
}

/// The comma-separated values of `--parameter-list`, each once.
fn list_values(text: &str) -> Result<Vec<String>, String> {
    let values: Vec<String> = text.split(',').map(|v| v.trim().to_string()).collect();
    if values.iter().any(String::is_empty) {
        return Err(format!("--parameter-list {text:?}: an empty value"));
    }
    if let Some(v) = values.iter().enumerate().find(|(i, v)| values[..*i].contains(v)).map(|(_, v)| v) {
        return Err(format!("--parameter-list {text:?}: {v} given twice"));
    }
    Ok(values)
}

/// `arg` with every `{NAME}` replaced by the value (bytes, so an argument
/// that is not UTF-8 stays as it was).
pub fn substitute(arg: &OsStr, p: &ParameterValue) -> OsString {
    let (from, to) = (ParameterValue::placeholder(&p.name), p.value.as_bytes());
    let (bytes, from) = (arg.as_bytes(), from.as_bytes());
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    OsString::from_vec(out)
}

/// The program's arguments for `p` (the program itself is not
/// substituted: it was found on PATH before anything ran).
pub fn argv(argv: &[OsString], p: Option<&ParameterValue>) -> Vec<OsString> {
    match p {
        None => argv.to_vec(),
        Some(p) => {
            argv.iter().enumerate().map(|(i, a)| if i == 0 { a.clone() } else { substitute(a, p) }).collect()
        }
    }
}

/// A hook's command for `p`.
pub fn command(cmd: &str, p: Option<&ParameterValue>) -> String {
    match p {
        None => cmd.to_string(),
        Some(p) => cmd.replace(&ParameterValue::placeholder(&p.name), &p.value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_scan_is_a_range_or_a_list() {
        let s = Scan::parse(Some(&strings(&["threads", "1", "7"])), Some("3"), None).unwrap().unwrap();
        assert_eq!(s.values, ["1", "4", "7"]);
        let s = Scan::parse(None, None, Some(&strings(&["n", "2, 8,x"]))).unwrap().unwrap();
        assert_eq!(s.values, ["2", "8", "x"]);
        assert_eq!(Scan::parse(None, None, None).unwrap(), None);
        for (scan, step, list) in [
            (Some(strings(&["t", "4", "1"])), None, None),
            (Some(strings(&["t", "1", "4"])), Some("0"), None),
            (Some(strings(&["t", "1.5", "4"])), None, None),
            (Some(strings(&["t", "1", "1000"])), None, None),
            (Some(strings(&["t", "-9223372036854775808", "9223372036854775807"])), None, None),
            (Some(strings(&["a b", "1", "2"])), None, None),
            (None, None, Some(strings(&["n", "1,,2"]))),
            (None, None, Some(strings(&["n", "1,2,1"]))),
            (None, Some("2"), None),
        ] {
            assert!(
                Scan::parse(scan.as_deref(), step, list.as_deref()).is_err(),
                "{scan:?} {step:?} {list:?}"
            );
        }
    }

    #[test]
    fn every_placeholder_but_the_programs_own_is_replaced() {
        let p = ParameterValue { name: "n".into(), value: "4".into() };
        let args: Vec<OsString> = ["./{n}", "-t{n}", "{n}{n}", "{m}"].iter().map(OsString::from).collect();
        let got: Vec<OsString> = argv(&args, Some(&p));
        assert_eq!(got, ["./{n}", "-t4", "44", "{m}"].map(OsString::from));
        assert_eq!(command("echo {n} > f", Some(&p)), "echo 4 > f");
    }
}
