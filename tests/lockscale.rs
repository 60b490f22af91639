//! `contend lock --reopen`: file locks opened and closed around every
//! acquisition, as lockscale does (issue 58, item 3), checked with strace
//! by what the workers did to the lock file; and refused where no file
//! lock is measured.

mod common;

use std::path::Path;

/// `contend lock --lock LOCK --procs 2 ARGS` under `strace -f`, its lock
/// file under `dir`: the opens of the lock file, and the acquisitions the
/// export counts in the measured window.
fn opens_and_acquisitions(lock: &str, args: &[&str], dir: &Path) -> (usize, u64) {
    let (trace, json) = (dir.join("trace.txt"), dir.join("run.json"));
    let lock_dir = dir.join("locks");
    std::fs::create_dir(&lock_dir).unwrap();
    let out = std::process::Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=openat", "-o"])
        .arg(&trace)
        .arg(assert_cmd::cargo::cargo_bin("contend"))
        .args(["lock", "--lock", lock, "--procs", "2", "--hold", "0", "--duration", "50ms", "--warmup", "0"])
        .args(["--runs", "1", "--count-futex", "off", "--no-progress", "--lock-dir"])
        .arg(&lock_dir)
        .args(args)
        .arg("--export-json")
        .arg(&json)
        .output()
        .expect("strace runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let acquisitions =
        doc["points"][0]["sample"]["total_acquisitions"].as_u64().expect("the window's acquisitions");
    let text = std::fs::read_to_string(&trace).unwrap();
    let under = lock_dir.to_str().unwrap();
    let opens =
        text.lines().filter(|l| l.contains("openat(") && l.contains(under) && l.contains("O_RDWR")).count();
    (opens, acquisitions)
}

#[test]
fn reopen_opens_the_lock_file_for_every_acquisition_and_the_default_once_per_worker() {
    if common::which("strace").is_none() {
        common::skip("needs strace");
        return;
    }
    for lock in ["flock", "fcntl"] {
        let dir = tempfile::tempdir().unwrap();
        let (opens, acquisitions) = opens_and_acquisitions(lock, &[], dir.path());
        assert!(acquisitions > 0, "{lock}: the window made acquisitions");
        assert!(opens <= 2, "{lock}: one open per worker without --reopen, {opens} seen");
        let dir = tempfile::tempdir().unwrap();
        let (opens, acquisitions) = opens_and_acquisitions(lock, &["--reopen"], dir.path());
        assert!(
            opens as u64 >= acquisitions,
            "{lock} --reopen: {opens} opens for {acquisitions} acquisitions"
        );
    }
}

#[test]
fn reopen_is_refused_without_a_file_lock() {
    common::refused(&["lock", "--lock", "futex", "--reopen"], "--reopen");
}
