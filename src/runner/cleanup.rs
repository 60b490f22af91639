//! `contend cleanup`: removes what killed runs left behind, from the ledger
//! records whose coordinator is gone, and says what it removed.

use super::ledger::{directory, start_ticks, Record};
use super::resources::DIR_PREFIX;
use locks::sys::sysv_sem::SemSet;

/// Cleans up after dead runs; returns one line per action.
pub fn run() -> Vec<String> {
    sweep(|record| {
        if start_ticks(record.pid) == Some(record.start_ticks) {
            Err(format!("run {} is still running: left alone", record.pid))
        } else {
            Ok(())
        }
    })
}

/// Removes what this very process recorded (its emergency exit).
pub fn remove_own() -> Vec<String> {
    let me = std::process::id() as i32;
    let mut lines = sweep(|record| {
        if record.pid == me {
            Ok(())
        } else {
            Err(String::new())
        }
    });
    lines.retain(|l| !l.is_empty() && l != "nothing to clean up");
    lines
}

/// Goes through the ledger records, removing the resources of those
/// `take` accepts (its error is reported instead, if not empty).
fn sweep(take: impl Fn(&Record) -> Result<(), String>) -> Vec<String> {
    let dir = directory();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return vec![format!("nothing to clean up ({} does not exist)", dir.display())];
    };
    let mut report = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let Ok(record) = std::fs::read(&path)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice::<Record>(&b).map_err(|e| e.to_string()))
        else {
            report.push(format!("skipped {}: not a contend record", path.display()));
            continue;
        };
        if let Err(why) = take(&record) {
            if !why.is_empty() {
                report.push(why);
            }
            continue;
        }
        for id in &record.sem_sets {
            report.push(match SemSet::remove_id(*id) {
                Ok(()) => format!("removed SysV semaphore set {id} (run {})", record.pid),
                Err(e) => format!("SysV semaphore set {id} (run {}): {e}", record.pid),
            });
        }
        for dir in &record.dirs {
            let ours = dir
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(DIR_PREFIX));
            report.push(if !ours {
                format!("refused to remove {}: not a contend directory", dir.display())
            } else if !dir.exists() {
                format!("{} was already gone", dir.display())
            } else {
                match std::fs::remove_dir_all(dir) {
                    Ok(()) => format!("removed {} (run {})", dir.display(), record.pid),
                    Err(e) => format!("{}: {e}", dir.display()),
                }
            });
        }
        let _ = std::fs::remove_file(&path);
    }
    if report.is_empty() {
        report.push("nothing to clean up".into());
    }
    report
}
