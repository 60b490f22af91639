//! `contend run`, validated: the program resolved on PATH, the locks
//! checked against what fits in a pthread_mutex_t, the metric compiled,
//! the interposer found.

use crate::family::program::args::RunArgs;
use crate::model::SpecError;
use locks::in_mutex::Swap;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What `contend run` runs.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RunSpec {
    /// The program (resolved on PATH) and its arguments.
    pub program: Vec<String>,
    /// The locks, `pthread` first.
    pub locks: Vec<String>,
    /// Whether every mutex is profiled.
    pub profile: bool,
    /// Mutexes shown per lock in the profile.
    pub top: usize,
    /// The regex the metric is taken with, if any.
    pub metric: Option<String>,
    /// The interposer library.
    pub interposer: PathBuf,
    /// Where results go.
    #[serde(flatten)]
    pub output: crate::cli::OutputArgs,
    /// Runs per lock.
    pub repeat: crate::engine::repeat::Repeat,
    /// Show a progress bar.
    pub progress: bool,
    /// `pthread` was not asked for and was added as the baseline.
    pub baseline_added: bool,
}

/// The lock names, checked: each fits in a pthread_mutex_t, none twice,
/// `pthread` first (added if missing: every ratio is to it).
pub fn locks(names: &[String]) -> Result<(Vec<String>, bool), String> {
    let mut out: Vec<String> = Vec::new();
    for name in names {
        if name == "noop" {
            return Err("--lock noop: it excludes nothing; it exists to test the interposer's checks".into());
        }
        let Some(swap) = Swap::parse(name).filter(|&s| s != Swap::Noop) else {
            let can: Vec<&str> = Swap::ALL.iter().map(|s| s.name()).collect();
            return Err(format!(
                "--lock {name}: not a lock that can live in a pthread_mutex_t (docs/experiments/run.md \
                 says why the others cannot); these can: {}",
                can.join(", ")
            ));
        };
        swap.check().map_err(|why| format!("--lock {name}: {why}"))?;
        if out.contains(name) {
            return Err(format!("--lock {name}: given twice"));
        }
        out.push(name.clone());
    }
    let added = !out.iter().any(|l| l == "pthread");
    if added {
        out.insert(0, "pthread".into());
    } else {
        let i = out.iter().position(|l| l == "pthread").unwrap_or(0);
        let p = out.remove(i);
        out.insert(0, p);
    }
    Ok((out, added))
}

/// `name` as the kernel would find it: a path as given, else the first
/// executable of that name on PATH.
fn resolve(name: &str) -> Result<String, String> {
    let executable = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        p.metadata().map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
    };
    if name.contains('/') {
        return if executable(Path::new(name)) {
            Ok(name.to_string())
        } else {
            Err(format!("{name}: not an executable file"))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| executable(p))
        .map(|p| p.display().to_string())
        .ok_or_else(|| format!("{name}: not found on PATH"))
}

/// The interposer: `--interposer`, $CONTEND_INTERPOSER, or next to the
/// running executable (where cargo builds it).
fn interposer(given: Option<&Path>) -> Result<PathBuf, String> {
    let path = match given
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("CONTEND_INTERPOSER").map(Into::into))
    {
        Some(p) => p,
        None => {
            let exe = std::env::current_exe().map_err(|e| format!("finding contend's executable: {e}"))?;
            exe.with_file_name("libcontend_interpose.so")
        }
    };
    if !path.is_file() {
        return Err(format!(
            "the interposer {} does not exist: build it with `cargo build --release --workspace` \
             (or give --interposer)",
            path.display()
        ));
    }
    // LD_PRELOAD takes an absolute path without spaces or colons best.
    let abs = std::fs::canonicalize(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let text = abs.display().to_string();
    if text.contains([' ', ':']) {
        return Err(format!("the interposer's path {text} has a space or colon, which LD_PRELOAD splits on"));
    }
    Ok(abs)
}

impl RunSpec {
    /// Validates the arguments of `contend run`.
    pub fn from_args(args: &RunArgs) -> Result<Self, SpecError> {
        let (locks, added) = locks(&args.lock).map_err(SpecError)?;
        let mut program = args.program.clone();
        program[0] = resolve(&program[0]).map_err(SpecError)?;
        if let Some(re) = &args.metric {
            regex::Regex::new(re).map_err(|e| SpecError(format!("--metric: {e}")))?;
        }
        if args.top == 0 {
            return Err(SpecError("--top must be at least 1".into()));
        }
        Ok(RunSpec {
            program,
            locks,
            profile: args.profile,
            top: args.top,
            metric: args.metric.clone(),
            interposer: interposer(args.interposer.as_deref()).map_err(SpecError)?,
            output: args.output.clone(),
            repeat: args.repeat.plan().map_err(SpecError)?,
            progress: !args.output.no_progress,
            baseline_added: added,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::locks;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn pthread_comes_first_and_is_added_when_missing() {
        assert_eq!(locks(&names(&["mcs", "pthread"])).unwrap(), (names(&["pthread", "mcs"]), false));
        assert_eq!(locks(&names(&["adaptive"])).unwrap(), (names(&["pthread", "adaptive"]), true));
    }

    #[test]
    fn locks_that_do_not_fit_are_refused_with_the_ones_that_do() {
        let e = locks(&names(&["clh"])).unwrap_err();
        assert!(e.contains("not a lock that can live in a pthread_mutex_t") && e.contains("adaptive"), "{e}");
        assert!(locks(&names(&["mcs", "mcs"])).unwrap_err().contains("twice"));
    }
}
