//! `contend cleanup`: removes what killed runs left behind, from the ledger
//! records whose coordinator is gone, and says what it removed. It reads
//! only trusted ledger directories (see [`crate::session::ledger_dir`]) and removes
//! only what it can prove a run of this user created: a directory whose
//! name has contend's prefix, owned by this user, not a symlink, with the
//! device and inode the record noted at creation; a SysV set this user
//! created, of the recorded size. Nothing is followed through a symlink.
//!
//! A `contend run` whose contend and keeper both died may have left the
//! program running (its recorded pid and start time), and what the
//! program started: every process whose environment names one of the
//! run's directories (`CONTEND_RUN_DIR=<dir>/...`, inherited from the
//! program). Those are ended first: SIGTERM, a moment, then SIGKILL.

use crate::session::ledger::{start_ticks, CreatedDir, Record};
use crate::session::ledger_dir::{self, TrustedDir};
use crate::session::resources::DIR_PREFIX;
use locks::sys::sysv_sem::SemSet;
use rustix::fs::{openat, unlinkat, AtFlags, Mode, OFlags};
use std::io::Read;

/// Cleans up after dead runs; returns one line per action.
pub fn run() -> Vec<String> {
    let mut report = sweep(|record| {
        if start_ticks(record.pid) == Some(record.start_ticks) {
            Err(format!("run {} is still running: left alone", record.pid))
        } else {
            Ok(())
        }
    });
    for dir in ledger_dir::spare_fallbacks() {
        // Checked trusted and holding no record: interposer copies only.
        report.retain(|l| l != "nothing to clean up");
        report.push(match std::fs::remove_dir_all(&dir.path) {
            Ok(()) => format!("removed the spare ledger directory {}", dir.path.display()),
            Err(e) => format!("{}: {e}", dir.path.display()),
        });
    }
    report
}

/// Removes what this very process recorded (its emergency exit).
pub fn remove_own() -> Vec<String> {
    let me = std::process::id() as i32;
    let mut lines = sweep(|record| if record.pid == me { Ok(()) } else { Err(String::new()) });
    lines.retain(|l| !l.is_empty() && l != "nothing to clean up");
    lines
}

/// Goes through the ledger records, removing the resources of those
/// `take` accepts (its error is reported instead, if not empty).
fn sweep(take: impl Fn(&Record) -> Result<(), String>) -> Vec<String> {
    let mut report = Vec::new();
    for dir in ledger_dir::for_cleanup() {
        match dir {
            Ok(dir) => sweep_dir(&dir, &take, &mut report),
            Err(why) => report.push(format!("not reading {why}")),
        }
    }
    if report.is_empty() {
        report.push("nothing to clean up".into());
    }
    report
}

fn sweep_dir(dir: &TrustedDir, take: &impl Fn(&Record) -> Result<(), String>, report: &mut Vec<String>) {
    for name in dir.names().into_iter().filter(|n| n.ends_with(".json")) {
        let shown = dir.path.join(&name);
        let Some(record) = read_record(dir, &name) else {
            report.push(format!("skipped {}: not a contend record", shown.display()));
            continue;
        };
        if let Err(why) = take(&record) {
            if !why.is_empty() {
                report.push(why);
            }
            continue;
        }
        report.extend(end_programs(&record));
        for set in &record.sem_sets {
            let id = set.id;
            report.push(match SemSet::remove_id(id, set.nsems) {
                Ok(()) => format!("removed SysV semaphore set {id} (run {})", record.pid),
                Err(e) => format!("SysV semaphore set {id} (run {}): {e}", record.pid),
            });
        }
        for created in &record.dirs {
            report.push(remove_dir(created, record.pid));
        }
        let _ = unlinkat(&dir.fd, name.as_str(), AtFlags::empty());
    }
}

/// Reads one record through the directory's descriptor, refusing
/// symlinks and anything that is not exactly a record.
fn read_record(dir: &TrustedDir, name: &str) -> Option<Record> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
    let fd = openat(&dir.fd, name, flags, Mode::empty()).ok()?;
    let mut text = Vec::new();
    std::fs::File::from(fd).take(1 << 20).read_to_end(&mut text).ok()?;
    serde_json::from_slice(&text).ok()
}

/// Removes a recorded directory if it is provably the one the run made.
fn remove_dir(created: &CreatedDir, pid: i32) -> String {
    use std::os::unix::fs::MetadataExt;
    let path = &created.path;
    let named_ours = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(DIR_PREFIX));
    if !named_ours || !path.is_absolute() {
        return format!("refused to remove {}: not a contend directory", path.display());
    }
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return format!("{} was already gone", path.display())
        }
        Err(e) => return format!("{}: {e}", path.display()),
    };
    let same = meta.is_dir()
        && meta.uid() == ledger_dir::euid()
        && (meta.dev(), meta.ino()) == (created.dev, created.ino);
    if !same {
        return format!(
            "refused to remove {}: not the directory run {pid} created (owner, type or inode differ)",
            path.display()
        );
    }
    // std's remove_dir_all does not follow symlinks inside the tree.
    match std::fs::remove_dir_all(path) {
        Ok(()) => format!("removed {} (run {pid})", path.display()),
        Err(e) => format!("{}: {e}", path.display()),
    }
}

/// How long what a dead run left gets between SIGTERM and SIGKILL.
const GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Ends the program a dead `contend run` recorded, and every process that
/// carries one of its directories in `CONTEND_RUN_DIR`.
fn end_programs(record: &Record) -> Vec<String> {
    use crate::session::tree::{self, Seen};
    use nix::sys::signal::Signal;
    let mut left: Vec<Seen> =
        record.programs.iter().map(|p| Seen { pid: p.pid, start: p.start_ticks }).collect();
    for dir in &record.dirs {
        let mark = format!("{}={}/", locks::in_mutex::input::DIR.name, dir.path.display());
        for p in tree::marked(&mark) {
            if !left.contains(&p) {
                left.push(p);
            }
        }
    }
    // Only those alive now (not zombies), as they were recorded or seen.
    let alive = |p: &Seen| start_ticks(p.pid) == Some(p.start) && !zombie(p.pid);
    left.retain(alive);
    if left.is_empty() {
        return Vec::new();
    }
    for &p in &left {
        tree::signal(p, Signal::SIGTERM);
        tree::signal(p, Signal::SIGCONT);
    }
    let deadline = std::time::Instant::now() + GRACE;
    while std::time::Instant::now() < deadline && left.iter().any(alive) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let killed: Vec<i32> = left
        .iter()
        .filter(|p| alive(p))
        .filter(|&&p| tree::signal(p, Signal::SIGKILL))
        .map(|p| p.pid)
        .collect();
    let pids: Vec<String> = left.iter().map(|p| p.pid.to_string()).collect();
    vec![format!(
        "ended {} process(es) run {} left running: {} ({} needed SIGKILL)",
        left.len(),
        record.pid,
        pids.join(", "),
        killed.len()
    )]
}

/// Whether `pid` is a zombie (dead, not yet reaped by its parent).
fn zombie(pid: i32) -> bool {
    crate::measure::children::stat_fields(pid).and_then(|f| f.first().cloned()).is_some_and(|s| s == "Z")
}
