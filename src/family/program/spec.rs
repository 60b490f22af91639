//! `contend run`, validated: the program resolved on PATH, the locks
//! checked against what fits in a pthread_mutex_t, the metric compiled,
//! the interposer found.

use crate::family::program::args::ProgramArgs;
use crate::family::program::run_mode::{self, RunMode};
use crate::model::program::GLIBC;
use crate::model::SpecError;
use locks::in_mutex::Swap;
use serde::Serialize;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What `contend run` runs.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ProgramSpec {
    /// The program (resolved on PATH) and its arguments, as text (an
    /// argument that is not UTF-8 is shown lossily here; [`ProgramSpec::argv`]
    /// is what runs).
    pub program: Vec<String>,
    /// The program and its arguments exactly as given.
    #[serde(skip)]
    pub argv: Vec<OsString>,
    /// Between SIGTERM and SIGKILL when the run is interrupted, ns.
    pub grace_ns: u64,
    /// The locks, `pthread` first.
    pub locks: Vec<String>,
    /// Whether every mutex is profiled.
    pub profile: bool,
    /// Whether the profile's futex view also follows the threads' context
    /// switches, to split each word's wait by what its holders were doing
    /// (`--no-holder-state` turns it off).
    pub holder_state: bool,
    /// The futex view's user stacks a second at most (0: none;
    /// `--futex-stacks`).
    pub futex_stacks: u64,
    /// Mutexes shown per lock in the profile.
    pub top: usize,
    /// The profile table's order.
    pub sort: crate::model::program::ProfileSort,
    /// Only this process's mutexes profiled and ranked (`--process`): its
    /// name, as its comm says it.
    pub process: Option<String>,
    /// A parameter scan (`--parameter-scan`, `--parameter-list`): the
    /// program runs once per value.
    pub parameter: Option<crate::family::program::parameter::Scan>,
    /// What is done with the program: run it under each lock, recommend
    /// a lock per mutex, or predict what shorter sections would buy.
    #[serde(flatten)]
    pub mode: RunMode,
    /// The regex the metric is taken with, if any.
    pub metric: Option<String>,
    /// Where the program's stdout and stderr go.
    pub program_output: crate::family::program::args::ProgramOutput,
    /// The warm-up and the commands around the executions.
    #[serde(flatten)]
    pub hooks: crate::family::program::hooks::Hooks,
    /// The interposer library.
    pub interposer: PathBuf,
    /// Where results go.
    #[serde(flatten)]
    pub output: crate::output::args::OutputArgs,
    /// Runs per lock.
    pub repeat: crate::engine::repeat::Repeat,
    /// Show a progress bar.
    pub progress: bool,
    /// `pthread` was not asked for and was added as the baseline.
    pub baseline_added: bool,
    /// The exit statuses that count as success.
    pub success: Success,
    /// An execution under a swapped lock is ended past this many times
    /// glibc's slowest (None: no limit).
    pub max_slowdown: Option<f64>,
    /// `--aslr` as given.
    pub aslr: crate::family::program::args::Aslr,
    /// Whether the program runs with address randomization off: asked
    /// for, or needed by a choice of mutexes by address.
    pub fixed_addresses: bool,
}

/// Whether a process named `comm` (the kernel's name, cut to 15 bytes)
/// is the one `--process NAME` asks for.
pub fn process_named(name: &str, comm: &str) -> bool {
    comm == name || (comm.len() == 15 && name.starts_with(comm))
}

/// Which exit statuses count as success (`--ignore-failure`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Success {
    /// 0 only (the default).
    Zero,
    /// Any exit status (signals still fail).
    AnyExit,
    /// 0 and these.
    Codes(Vec<i32>),
}

impl Success {
    /// From `--ignore-failure`'s value.
    pub fn parse(given: Option<&str>) -> Result<Self, String> {
        let Some(text) = given else { return Ok(Success::Zero) };
        if text == "all-non-zero" {
            return Ok(Success::AnyExit);
        }
        let mut codes = Vec::new();
        for item in text.split(',') {
            let code: i32 = item.trim().parse().ok().filter(|c| (1..=255).contains(c)).ok_or_else(|| {
                format!(
                    "--ignore-failure={text}: {item:?} is not an exit status from 1 to 255 (give a list, \
                     --ignore-failure=1,2, or no value for every one)"
                )
            })?;
            if codes.contains(&code) {
                return Err(format!("--ignore-failure={text}: {code} given twice"));
            }
            codes.push(code);
        }
        Ok(Success::Codes(codes))
    }

    /// Whether exit status `code` counts as success.
    pub fn accepts(&self, code: i32) -> bool {
        code == 0
            || match self {
                Success::Zero => false,
                Success::AnyExit => true,
                Success::Codes(c) => c.contains(&code),
            }
    }
}

/// The lock names, checked: each fits in a pthread_mutex_t, none twice,
/// `pthread` first (added if missing: every ratio is to it).
pub fn locks(names: &[String]) -> Result<(Vec<String>, bool), String> {
    let mut out: Vec<String> = Vec::new();
    for name in &names.iter().flat_map(|n| crate::family::program::choice::split_list(n)).collect::<Vec<_>>()
    {
        if name.contains('@') {
            crate::family::program::choice::parse(name).map_err(|e| format!("--lock {e}"))?;
            if out.contains(name) {
                return Err(format!("--lock {name}: given twice"));
            }
            out.push(name.clone());
            continue;
        }
        if name == "noop" {
            return Err("--lock noop: it excludes nothing; it exists to test the interposer's checks".into());
        }
        let Some(swap) = Swap::parse(name).filter(|&s| s != Swap::Noop) else {
            let can: Vec<&str> = Swap::all().map(|s| s.name()).collect();
            return Err(format!(
                "--lock {name}{}: not a lock that can live in a pthread_mutex_t (docs/experiments/run.md \
                 says why the others cannot); these can: {}",
                crate::model::value::suggest::did_you_mean(name, can.iter().copied()),
                can.join(", ")
            ));
        };
        swap.check().map_err(|why| format!("--lock {name}: {why}"))?;
        if out.contains(name) {
            return Err(format!("--lock {name}: given twice"));
        }
        out.push(name.clone());
    }
    let added = !out.iter().any(|l| l == GLIBC);
    if added {
        out.insert(0, GLIBC.into());
    } else {
        let i = out.iter().position(|l| l == GLIBC).unwrap_or(0);
        let p = out.remove(i);
        out.insert(0, p);
    }
    Ok((out, added))
}

/// `name` as the kernel would find it: a path as given, else the first
/// executable of that name on PATH.
fn resolve(name: &std::ffi::OsStr) -> Result<OsString, String> {
    let executable = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        p.metadata().map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
    };
    let shown = name.to_string_lossy();
    if name.as_encoded_bytes().contains(&b'/') {
        return if executable(Path::new(name)) {
            Ok(name.to_os_string())
        } else {
            Err(format!("{shown}: not an executable file"))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| executable(p))
        .map(PathBuf::into_os_string)
        .ok_or_else(|| format!("{shown}: not found on PATH"))
}

/// The interposer: `--interposer`, $CONTEND_INTERPOSER, or the copy
/// contend carries inside itself, written out on first use
/// (`embedded.rs`). A file the user named that will not do is their
/// mistake ([`SpecError`]); a copy that cannot be written (a full disk)
/// fails the run.
fn interposer(given: Option<&Path>) -> anyhow::Result<PathBuf> {
    let named =
        given.map(Path::to_path_buf).or_else(|| std::env::var_os("CONTEND_INTERPOSER").map(Into::into));
    let path = match named {
        Some(p) => p,
        None => crate::family::program::embedded::installed().map_err(anyhow::Error::msg)?,
    };
    let bad = |why: String| SpecError(format!("the interposer {}: {why}", path.display()));
    let use_ours = "leave out --interposer and $CONTEND_INTERPOSER to use the one contend carries";
    match std::fs::metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(bad(format!("does not exist ({use_ours})")).into())
        }
        Err(e) => return Err(bad(e.to_string()).into()),
        Ok(m) if !m.is_file() => return Err(bad(format!("not a regular file ({use_ours})")).into()),
        Ok(_) => {}
    }
    // LD_PRELOAD takes an absolute path without spaces or colons best.
    let abs = std::fs::canonicalize(&path).map_err(|e| bad(e.to_string()))?;
    check_interposer(&abs).map_err(SpecError)?;
    let text = abs.display().to_string();
    if text.contains([' ', ':']) {
        return Err(SpecError(format!(
            "the interposer's path {text} has a space or colon, which LD_PRELOAD splits on"
        ))
        .into());
    }
    Ok(abs)
}

/// The program's stdout is its own: an export there would be mixed into
/// whatever it writes.
fn refuse_stdout_exports(output: &crate::output::args::OutputArgs) -> Result<(), SpecError> {
    let named = [
        ("--export-json", &output.export_json),
        ("--export-ndjson", &output.export_ndjson),
        ("--export-csv", &output.export_csv),
        ("--export-markdown", &output.export_markdown),
        ("--export-gnuplot", &output.export_gnuplot),
    ];
    match named.iter().find(|(_, p)| p.as_deref().is_some_and(|p| p.as_os_str() == "-")) {
        Some((flag, _)) => Err(SpecError(format!(
            "{flag} -: under contend run, stdout belongs to the program; write the export to a file \
             (contend's table goes to stderr)"
        ))),
        None => Ok(()),
    }
}

/// The mark the interposer carries (crates/interpose/src/lib.rs): its
/// name and report format (`locks::in_mutex::report`). contend's own
/// binary carries the interposer and so the mark too; `check_interposer`
/// also asks for the entry points defined.
fn interposer_mark() -> String {
    use locks::in_mutex::report::{MAGIC, VERSION};
    format!("{MAGIC} report format {VERSION}")
}

/// Refuses a file that is not contend's interposer of this report format,
/// so that a wrong `--interposer` is named as such and not blamed on the
/// program later.
fn check_interposer(path: &Path) -> Result<(), String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(256 << 20).read_to_end(&mut bytes))
        .map_err(|e| format!("the interposer {}: {e}", path.display()))?;
    if !bytes.starts_with(b"\x7fELF") {
        return Err(format!("the interposer {}: not an ELF shared library", path.display()));
    }
    // The library defines the entry points it interposes; contend's own
    // binary, which carries the interposer's bytes (and so its mark),
    // only calls them.
    let defines_entry = object::File::parse(&*bytes).is_ok_and(|file| {
        use object::{Object, ObjectSymbol};
        file.dynamic_symbols().any(|s| s.is_definition() && s.name() == Ok("pthread_mutex_lock"))
    });
    let mark = interposer_mark();
    if !defines_entry || !bytes.windows(mark.len()).any(|w| w == mark.as_bytes()) {
        return Err(format!(
            "the interposer {}: not contend's interposer of this version (it lacks the mark \
             \"{mark}\"); leave out --interposer and $CONTEND_INTERPOSER to use the one contend \
             carries",
            path.display()
        ));
    }
    Ok(())
}

impl ProgramSpec {
    /// What the futex view follows besides the calls.
    pub fn follow(&self) -> crate::measure::futex_view::Follow {
        crate::measure::futex_view::Follow { holders: self.holder_state, stacks_per_s: self.futex_stacks }
    }

    /// Validates the arguments of `contend run`, then finds (or writes out)
    /// the interposer: a mistake in the arguments is a [`SpecError`]; a
    /// copy that cannot be written fails the run.
    pub fn from_args(args: &ProgramArgs) -> anyhow::Result<Self> {
        let mut spec = Self::checked(args)?;
        spec.interposer = interposer(args.interposer.as_deref())?;
        Ok(spec)
    }

    /// The arguments checked; the interposer is left for [`Self::from_args`].
    fn checked(args: &ProgramArgs) -> Result<Self, SpecError> {
        let (locks, added) = locks(&args.lock).map_err(SpecError)?;
        let mut argv = args.program.clone();
        argv[0] = resolve(&argv[0]).map_err(SpecError)?;
        let parameter = crate::family::program::parameter::asked(args).map_err(SpecError)?;
        let program = argv.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        refuse_stdout_exports(&args.output)?;
        if let Some(re) = &args.metric {
            regex::Regex::new(re).map_err(|e| SpecError(format!("--metric: {e}")))?;
        }
        if args.top == 0 {
            return Err(SpecError("--top must be at least 1".into()));
        }
        let mut locks = locks;
        if args.recommend {
            if args.profile {
                return Err(SpecError(
                    "--recommend with --profile: the recommendation profiles the program once itself and \
                     measures the locks unprofiled"
                        .into(),
                ));
            }
            if let Some(l) = locks.iter().find(|l| l.contains('@')) {
                return Err(SpecError(format!(
                    "--recommend --lock {l}: the recommendation chooses the mutexes"
                )));
            }
            if !(1..=crate::family::program::choice::MAX_MUTEXES).contains(&args.mutexes) {
                return Err(SpecError(format!(
                    "--mutexes {}: from 1 to {}",
                    args.mutexes,
                    crate::family::program::choice::MAX_MUTEXES
                )));
            }
            if locks.len() == 1 {
                locks.extend(Swap::all().filter(|s| *s != Swap::Pthread).map(|s| s.name().to_string()));
            }
        }
        let delays_ns = match (&args.what_if, &args.delays) {
            (None, Some(_)) => return Err(SpecError("--delays goes with --what-if".into())),
            (_, None) => None,
            (Some(_), Some(d)) => {
                let mut ns: Vec<u64> = d.iter().map(|d| d.as_nanos().min(u64::MAX as u128) as u64).collect();
                ns.sort_unstable();
                if let Some(w) = ns.windows(2).find(|w| w[0] == w[1]) {
                    return Err(SpecError(format!(
                        "--delays: {} is given twice: the values of a list must differ (to measure a point \
                         more often, raise --runs)",
                        crate::model::value::format_nanos(w[0])
                    )));
                }
                if ns.first() == Some(&0) {
                    return Err(SpecError(
                        "--delays: no delay is the baseline, always run; give delays above 0".into(),
                    ));
                }
                Some(ns)
            }
        };
        if args.threshold.is_some() && !args.recommend {
            return Err(SpecError("--threshold goes with --recommend".into()));
        }
        if args.mutexes != run_mode::MUTEXES && !args.recommend {
            return Err(SpecError("--mutexes goes with --recommend (--what-if top:N names how many)".into()));
        }
        if let Some(what) = &args.what_if {
            let asked = crate::family::program::speedup::asked(what)
                .map_err(|e| SpecError(format!("--what-if {e}")))?;
            let one = matches!(&asked, crate::family::program::speedup::Asked::These(t) if t.len() == 1);
            if delays_ns.is_some() && !one {
                return Err(SpecError(format!(
                    "--what-if {what} with --delays: the delay method fits one mutex at a time; without --delays, \
                     the virtual speedup ranks several"
                )));
            }
            let clash =
                [(args.recommend, "--recommend"), (args.profile, "--profile"), (locks.len() > 1, "--lock")];
            if let Some((_, flag)) = clash.iter().find(|(on, _)| *on) {
                return Err(SpecError(format!(
                    "--what-if with {flag}: the what-if profiles the program once itself and runs it under \
                     glibc's mutex, unprofiled"
                )));
            }
        }
        // Mutexes are named by address from one execution to the next.
        let by_address = args.recommend || args.what_if.is_some() || locks.iter().any(|l| l.contains('@'));
        let fixed_addresses = match args.aslr {
            crate::family::program::args::Aslr::Auto => by_address,
            crate::family::program::args::Aslr::On => false,
            crate::family::program::args::Aslr::Off => true,
        };
        Ok(ProgramSpec {
            program,
            argv,
            grace_ns: args.grace.as_nanos().min(u64::MAX as u128) as u64,
            locks,
            profile: args.profile,
            holder_state: !args.no_holder_state,
            futex_stacks: args.futex_stacks,
            top: args.top,
            sort: args.sort,
            process: args.process.clone(),
            parameter,
            mode: match (&args.what_if, args.recommend) {
                (Some(asked), _) => RunMode::WhatIf { asked: asked.clone(), delays_ns },
                (None, true) => RunMode::Recommend {
                    mutexes: args.mutexes,
                    threshold_pct: args.threshold.unwrap_or(run_mode::THRESHOLD_PCT),
                },
                (None, false) => RunMode::Locks,
            },
            metric: args.metric.clone(),
            program_output: args.program_output.clone(),
            hooks: crate::family::program::hooks::Hooks {
                warmup: args.warmup,
                prepare: args.prepare.clone(),
                conclude: args.conclude.clone(),
                cleanup: args.cleanup.clone(),
            },
            interposer: PathBuf::new(),
            output: args.output.clone(),
            repeat: args.repeat.plan().map_err(SpecError)?,
            progress: !args.output.no_progress,
            baseline_added: added,
            success: Success::parse(args.ignore_failure.as_deref()).map_err(SpecError)?,
            aslr: args.aslr,
            fixed_addresses,
            max_slowdown: match args.max_slowdown {
                0.0 => None,
                f if f.is_finite() && f >= 1.0 => Some(f),
                f => {
                    return Err(SpecError(format!(
                        "--max-slowdown {f}: a factor of at least 1 (0: no limit)"
                    )))
                }
            },
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
    fn the_baseline_is_the_swappable_tables_glibc_mutex() {
        assert_eq!(crate::model::program::GLIBC, locks::in_mutex::Swap::Pthread.name());
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
        assert_eq!(
            locks(&names(&["tas@0x10", "mcs@f+tas@0x20"])).unwrap().0,
            names(&["pthread", "tas@0x10", "mcs@f+tas@0x20"])
        );
        assert!(locks(&names(&["clh@0x10"])).is_err());
    }

    #[test]
    fn ignore_failure_takes_every_status_or_a_list() {
        use super::Success;
        assert_eq!(Success::parse(None).unwrap(), Success::Zero);
        assert!(!Success::Zero.accepts(1) && Success::Zero.accepts(0));
        assert!(Success::parse(Some("all-non-zero")).unwrap().accepts(255));
        let some = Success::parse(Some("1,3")).unwrap();
        assert!(some.accepts(1) && some.accepts(3) && !some.accepts(2));
        for bad in ["0", "256", "x", "1,1", ""] {
            assert!(Success::parse(Some(bad)).is_err(), "{bad}");
        }
    }
}
