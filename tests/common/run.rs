//! Running contend as a child process and watching what it leaves: the
//! lifecycle and fault-injection tests share these.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub static SERIAL: Mutex<()> = Mutex::new(());

/// Whether a SysV semaphore set of this id exists now. Ids carry a
/// sequence number, so one removed is not soon another set's.
pub fn set_exists(id: i64) -> bool {
    std::fs::read_to_string("/proc/sysvipc/sem").is_ok_and(|s| {
        s.lines().skip(1).any(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()) == Some(id))
    })
}

/// The SysV set ids the run's ledger records (while it runs): the sets
/// this run made, and the only ones a test checks (others on the machine
/// come and go).
pub fn recorded_sets(run: &Run) -> Vec<i64> {
    let dir = run.ledger_dir.path().join("contend");
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .filter_map(|e| std::fs::read(e.path()).ok())
        .filter_map(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .flat_map(|v| v["sem_sets"].as_array().cloned().unwrap_or_default())
        .filter_map(|s| s["id"].as_i64())
        .collect()
}

/// Waits until the run records `n` SysV sets (each existing); their ids.
pub fn wait_recorded_sets(run: &Run, n: usize) -> Vec<i64> {
    let mut ids = Vec::new();
    until(&format!("the run records {n} SysV set(s)"), || {
        ids = recorded_sets(run);
        ids.len() >= n
    });
    assert_eq!(ids.len(), n, "the run's sets: {ids:?}");
    assert!(ids.iter().all(|&id| set_exists(id)), "recorded sets exist: {ids:?}");
    ids
}

pub fn entries(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| d.count())
}

/// The coordinator and its scratch directories; kills it if a test fails
/// half-way.
pub struct Run {
    pub child: Child,
    pub lock_dir: tempfile::TempDir,
    pub ledger_dir: tempfile::TempDir,
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn start(args: &[&str]) -> Run {
    let lock_dir = tempfile::tempdir().unwrap();
    let ledger_dir = tempfile::tempdir().unwrap();
    let child = Command::new(assert_cmd::cargo::cargo_bin("contend"))
        .arg("lock")
        .args(args)
        .args(["--lock-dir", lock_dir.path().to_str().unwrap()])
        .env("XDG_RUNTIME_DIR", ledger_dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("contend starts");
    Run { child, lock_dir, ledger_dir }
}

/// Worker processes of `pid` (its direct children).
pub fn children(pid: u32) -> Vec<i32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// Waits until the coordinator has `n` children and the window has begun.
pub fn wait_running(run: &Run, n: usize) -> Vec<i32> {
    // A guard against a hang, not a timing check: a busy machine may be
    // slow to start the workers.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let kids = children(run.child.id());
        if kids.len() >= n {
            // Past the 100 ms warm-up, into the measured window.
            std::thread::sleep(Duration::from_millis(600));
            return kids;
        }
        assert!(Instant::now() < deadline, "workers never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The state letter of a `/proc/.../stat` file (R, S, T, Z, ...).
fn state(stat: &Path) -> Option<char> {
    let text = std::fs::read_to_string(stat).ok()?;
    text.rsplit_once(')')?.1.trim_start().chars().next()
}

pub fn alive(pid: i32) -> bool {
    // A zombie is dead for our purposes; /proc/PID/stat's state says so.
    state(Path::new(&format!("/proc/{pid}/stat"))).is_some_and(|s| s != 'Z')
}

/// Every thread of `pid` is stopped (a group stop reaches each thread in
/// turn, so the main thread's letter alone is not enough).
pub fn stopped(pid: i32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return false };
    tasks.flatten().all(|task| state(&task.path().join("stat")) == Some('T'))
}

/// Waits until `done` says yes; fails with `what` if it never does (a
/// guard against a hang, far beyond any healthy wait).
pub fn until(what: &str, mut done: impl FnMut() -> bool) {
    let guard = Instant::now() + Duration::from_secs(120);
    while !done() {
        assert!(Instant::now() < guard, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The pid a program wrote to `path`, once it is whole.
pub fn read_pid(path: &Path) -> Option<i32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Waits for the coordinator to exit, at most `limit`.
pub fn finish(run: &mut Run, limit: Duration) -> (Option<i32>, String, String) {
    let deadline = Instant::now() + limit;
    while run.child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "contend did not exit within {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let out =
        std::mem::replace(&mut run.child, Command::new("true").spawn().unwrap()).wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Nothing of the run is left: its SysV sets (`sets`, from its record),
/// its lock directory, its ledger record, its worker processes.
pub fn assert_clean(run: &Run, sets: &[i64], workers: &[i32]) {
    for &id in sets {
        assert!(!set_exists(id), "the run's SysV set {id} was left behind");
    }
    assert_eq!(entries(run.lock_dir.path()), 0, "the lock directory was left behind");
    assert_eq!(entries(&run.ledger_dir.path().join("contend")), 0, "the ledger record was left behind");
    for &w in workers {
        assert!(!alive(w), "worker {w} outlived the run");
    }
}

pub const LONG_RUN: &[&str] = &["--hold", "sleep:50us", "--duration", "30s", "--warmup", "100ms"];

/// `contend run ARGS --export-json -- PROGRAM...` with the correctness
/// tests' settings (no futex counting, no progress, no time limit): the
/// export and contend's stderr (its table). Panics unless it succeeds.
pub fn exported(program: &[&std::ffi::OsStr], args: &[&str], dir: &Path) -> (serde_json::Value, String) {
    let json = dir.join("run.json");
    let out = assert_cmd::Command::cargo_bin("contend")
        .unwrap()
        .args(["run", "--count-futex", "off", "--no-progress", "--max-slowdown", "0"])
        .args(args)
        .arg("--export-json")
        .arg(&json)
        .arg("--")
        .args(program)
        .timeout(Duration::from_secs(900))
        .output()
        .expect("contend runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    (serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap(), stderr)
}

/// `contend run --profile --runs 1 ARGS -- EXE`, exported: the export, the
/// program's stdout and contend's table. Panics unless it succeeds.
pub fn profiled_printing(exe: &Path, args: &[&str], dir: &Path) -> (serde_json::Value, String, String) {
    profiled_running(exe, &[], args, dir)
}

/// [`profiled_printing`] of `EXE PROGRAM_ARGS`.
pub fn profiled_running(
    exe: &Path,
    program_args: &[&str],
    args: &[&str],
    dir: &Path,
) -> (serde_json::Value, String, String) {
    let json = dir.join("run.json");
    let out = assert_cmd::Command::cargo_bin("contend")
        .unwrap()
        .args(["run", "--profile", "--runs", "1", "--no-progress"])
        .args(args)
        .arg("--export-json")
        .arg(&json)
        .arg("--")
        .arg(exe)
        .args(program_args)
        .timeout(Duration::from_secs(600))
        .output()
        .expect("contend runs");
    let (stdout, table) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{table}");
    let doc = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    (doc, stdout.into_owned(), table.into_owned())
}
