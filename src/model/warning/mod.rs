//! What a reader must know about a sweep's numbers, typed: a kind a
//! script can filter on, the point it concerns (none for the sweep or the
//! machine), and a message that says what to do about it. The terminal
//! prints `point: message`; exports carry the three fields.

pub mod common;

use serde::Serialize;
use std::fmt;

/// The kinds of warning, one per thing that can bend a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    /// The hypervisor stole CPU time in a window.
    Steal,
    /// Other processes kept the CPUs busy in a window.
    OtherLoad,
    /// A run's metric stands out from its point's other runs.
    Outlier,
    /// Too few critical sections, round trips or samples in a window for
    /// the numbers to rest on.
    TooFewSamples,
    /// More workers (or pairs) than CPUs.
    Oversubscribed,
    /// The machine's setup adds noise (cpufreq governor) or restricts the
    /// run (a CPU subset).
    Machine,
    /// Runs screened out by --max-steal and re-made.
    Screening,
    /// The host's speed drifted across interleaved rounds.
    Drift,
    /// Futex syscall counts are unavailable, or were taken inside the
    /// measured runs (and perturbed them).
    FutexCounting,
    /// A wakeup-specific measurement caveat: clock skew between CPUs, or
    /// rounds started late against --interval.
    Timing,
    /// A comparison the report cannot make (no baseline allocator).
    NoBaseline,
    /// The sweep was interrupted by a signal.
    Interrupted,
    /// `contend run`: what the interposer saw does not support a ratio (a
    /// swapped lock that made no acquisition, a program that took no
    /// pthread mutex, a process that left without reporting).
    Unexercised,
    /// `contend run`: the program left processes running at its exit;
    /// contend ended them.
    LeftRunning,
    /// `contend run`: executions that exited non-zero with a status
    /// `--ignore-failure` accepts (their times are in the statistics).
    AcceptedExit,
    /// `contend run`: the interposer noted something that did not fail
    /// the execution (lock nodes from its reserve).
    InterposerNote,
    /// `contend run`: mutexes whose wait was mostly parking (threads that
    /// took them with nothing to do), kept out of `--what-if top:N` and
    /// `--recommend`, or named for a what-if anyway.
    Parking,
    /// `contend run`: `--cleanup` failed, or the program's output could
    /// not be written to `--output FILE`; the results stand.
    AfterRun,
}

/// One warning.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Warning {
    /// What kind of thing bent the numbers.
    pub kind: WarningKind,
    /// The point it concerns, in words (its label); absent when it
    /// concerns the whole sweep or the machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub point: Option<String>,
    /// What happened and what to do about it.
    pub message: String,
}

impl Warning {
    /// A warning about the whole sweep or the machine.
    pub fn sweep(kind: WarningKind, message: impl Into<String>) -> Self {
        Warning { kind, point: None, message: message.into() }
    }

    /// A warning about one point, named by its label.
    pub fn point(kind: WarningKind, label: impl Into<String>, message: impl Into<String>) -> Self {
        Warning { kind, point: Some(label.into()), message: message.into() }
    }
}

/// The warnings as the terminal prints them, one line each, except the
/// outlier runs, which are counted in one line naming their points (the
/// export lists each): a sweep of many points can have several, and a
/// screenful of them before the table buries the table.
pub fn terminal_lines(warnings: &[Warning]) -> Vec<String> {
    let (outliers, others): (Vec<&Warning>, Vec<&Warning>) =
        warnings.iter().partition(|w| w.kind == WarningKind::Outlier);
    let mut lines: Vec<String> = others.iter().map(|w| w.to_string()).collect();
    match outliers.as_slice() {
        [] => {}
        [one] => lines.push(one.to_string()),
        many => {
            let mut points: Vec<&str> = many.iter().filter_map(|w| w.point.as_deref()).collect();
            points.dedup();
            let named = match points.len() {
                0..=3 => points.join("; "),
                n => format!("{}; and {} more", points[..3].join("; "), n - 3),
            };
            lines.push(format!(
                "{} runs stood out enough to move their point's mean ({named}): rerun those points, or add \
                 --runs so one run weighs less; each run is listed in the export (warnings of kind \"outlier\")",
                many.len()
            ));
        }
    }
    lines
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.point {
            Some(p) => write!(f, "{p}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}
