//! What `contend run` warns about after its executions: what the
//! interposer saw that the ratios cannot rest on (locks that never ran, a
//! program with no pthread mutex, processes that did not report or were
//! left running), and the exit statuses and notes of the executions.

use crate::family::program::pairing::exercised;
use crate::model::program::{MutexProfile, ProgramResult, GLIBC};
use crate::model::warning::{Warning, WarningKind};

/// Samples of the futex view the kernel dropped (its buffers filled
/// faster than contend read them), over every execution: the view's
/// counts and the kernel waits per mutex are then lower bounds.
pub(crate) fn lost_samples(results: &[ProgramResult]) -> Option<Warning> {
    let lost: u64 = results.iter().flat_map(|r| &r.runs).filter_map(|s| s.kernel_waits).map(|k| k.lost).sum();
    (lost > 0).then(|| {
        Warning::sweep(
            WarningKind::FutexCounting,
            format!(
                "the kernel dropped {lost} futex samples (its buffers filled faster than contend read them): \
                 the futex view's counts and the kernel waits per mutex are lower bounds"
            ),
        )
    })
}

/// A mutex named with how much of its wait was parked.
pub(crate) fn parked_share(m: &MutexProfile) -> String {
    format!(
        "{:#x} {} ({:.3} ms of {:.3} ms parked)",
        m.address,
        m.waits_at,
        m.parked_wait_ns as f64 / 1e6,
        m.counts.wait_ns as f64 / 1e6
    )
}

/// The mutexes `what` (`--what-if top:N`, `--recommend`) left out of its
/// ranking because their wait was mostly parking, named; None if none.
pub(crate) fn parking_left_out(what: &str, left: &[&MutexProfile]) -> Option<Warning> {
    (!left.is_empty()).then(|| {
        let names: Vec<String> = left.iter().map(|m| parked_share(m)).collect();
        Warning::sweep(
            WarningKind::Parking,
            format!(
                "{what} left out {}: waits followed by an empty section (the waiter let the mutex go, or went \
                 into a condition wait on it, with nothing in between) are parking, not contention; name a \
                 mutex to include it anyway",
                names.join(", ")
            ),
        )
    })
}

/// What the interposer saw that the ratios cannot rest on, for the user:
/// locks that never ran, a program with no pthread mutex, processes that
/// did not report, processes left running.
pub(crate) fn seen(program: &str, results: &[ProgramResult]) -> Vec<Warning> {
    let mut out = Vec::new();
    let glibc_total: u64 = results.iter().filter(|r| r.point.lock == GLIBC).map(|r| r.sample.to_glibc).sum();
    let runs = || results.iter().flat_map(|r| crate::engine::repeat::measured(&r.runs));
    // Without the program's own report its counts are unknown: nothing is
    // claimed about them but that.
    let unreported = runs().any(|s| !s.program_reported && s.loaded > 0);
    // A program LD_PRELOAD cannot enter (static, set-uid) ran with
    // --profile alone: its futex view is all there is.
    let unloaded = runs().next().is_some() && runs().all(|s| s.loaded == 0 && s.processes == 0);
    // Not said of a run cut short before any execution completed.
    let none_at_all = runs().next().is_some() && runs().all(|s| s.swapped == 0 && s.to_glibc == 0);
    if unloaded {
        out.push(Warning::sweep(
            WarningKind::Unexercised,
            format!(
                "the interposer was not loaded into {program} (a statically linked or set-uid program \
                 ignores LD_PRELOAD): no pthread profile and no ratio; its locks show only in the futex \
                 view, from the kernel's side"
            ),
        ));
    } else if unreported {
        out.push(Warning::sweep(
            WarningKind::Unexercised,
            format!(
                "the interposer was loaded into {program} but it wrote no report: it left without running \
                 library destructors (Go's runtime ends with a raw exit_group; so does a process killed by \
                 a signal), so its acquisitions are unknown and no ratio is given for a lock that shows \
                 none"
            ),
        ));
    } else if none_at_all {
        out.push(Warning::sweep(
            WarningKind::Unexercised,
            format!(
                "{program} took no pthread mutex through the interposer, so no lock was swapped and no \
                 ratio is given. Its locks are elsewhere (Rust's std and Go's runtime lock with futexes \
                 directly; pthread rwlocks and spinlocks are never swapped; C11 mtx_* and glibc's internal \
                 locks are not interposed), or its work ran in a process started without the preload (LD_PRELOAD \
                 cleared)"
            ),
        ));
    } else {
        for r in results.iter().filter(|r| !exercised(r)) {
            let why = match &r.point.chosen {
                Some(chosen) => format!(
                    "no chosen mutex ({}) was taken: in this execution none was at that address (a mutex \
                     allocated in another order by racing threads moves; choose it by name), or it is of a \
                     kind a swapped lock leaves to glibc",
                    chosen.replace(';', ", ")
                ),
                None => "the program's mutexes are of kinds a swapped lock leaves to glibc (recursive, \
                         error-checking, robust, PI, shared), or it started its work without the preload \
                         (LD_PRELOAD cleared)"
                    .into(),
            };
            out.push(Warning::point(
                WarningKind::Unexercised,
                &r.point.lock,
                format!(
                    "never used: no acquisition went through it ({} went to glibc's mutex; under pthread, \
                     {glibc_total}). {why}; no ratio is given",
                    r.sample.to_glibc
                ),
            ));
        }
    }
    out.extend(exits_and_notes(program, results));
    let left: Vec<_> =
        results.iter().flat_map(|r| &r.runs).map(|s| s.leftovers).filter(|l| l.found > 0).collect();
    if let Some(worst) = left.iter().map(|l| l.found).max() {
        let survivors: u64 = left.iter().map(|l| l.survivors).sum();
        let killed: u64 = left.iter().map(|l| l.killed).sum();
        out.push(Warning::sweep(
            WarningKind::LeftRunning,
            format!(
                "{program} left processes running at its exit in {} execution(s) (up to {worst}: daemons \
                 or background jobs); contend ended them with SIGTERM ({killed} needed SIGKILL after \
                 --grace){}",
                left.len(),
                if survivors > 0 {
                    format!("; {survivors} did not die even then (uninterruptible sleep) and outlive the run")
                } else {
                    String::new()
                }
            ),
        ));
    }
    out
}

/// The executions whose non-zero exit status `--ignore-failure` accepted
/// (which, and how many), and what the interposer noted: said, since
/// neither fails a point.
fn exits_and_notes(program: &str, results: &[ProgramResult]) -> Vec<Warning> {
    let mut out = Vec::new();
    let mut accepted: std::collections::BTreeMap<i32, Vec<String>> = Default::default();
    let mut notes: Vec<String> = Vec::new();
    for r in results {
        for s in &r.runs {
            if let Some(code) = s.exit_code.filter(|&c| c != 0) {
                accepted.entry(code).or_default().push(format!("{} round {}", s.lock, s.run.round));
            }
            for n in s.said.iter().filter(|n| !n.fault) {
                if !notes.contains(&n.text) {
                    notes.push(n.text.clone());
                }
            }
        }
    }
    for (code, which) in accepted {
        let shown: Vec<&str> = which.iter().take(6).map(String::as_str).collect();
        let more = if which.len() > shown.len() {
            format!(" and {} more", which.len() - shown.len())
        } else {
            String::new()
        };
        out.push(Warning::sweep(
            WarningKind::AcceptedExit,
            format!(
                "{program} exited {code} in {} execution(s) ({}{more}), accepted by --ignore-failure: their \
                 times are in the statistics",
                which.len(),
                shown.join(", ")
            ),
        ));
    }
    for n in notes {
        out.push(Warning::sweep(WarningKind::InterposerNote, format!("the interposer noted: {n}")));
    }
    out
}
