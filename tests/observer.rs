//! The observer effect: a default run as root must measure its rates with
//! no syscall tracepoint open, and count futex calls in a separate run.
//!
//! A perf event on a syscall tracepoint is a file descriptor of contend's
//! (`anon_inode:[perf_event]`); while one is open, every syscall of every
//! task takes the tracing slow path. The test watches contend's
//! descriptors from outside while it runs, then checks every sighting of
//! a perf event against the runs' start times in the export: none may fall
//! inside a measured run, and the counting run must show one (so the watch
//! itself is known to see them).

mod common;

use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn now_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("clock after 1970").as_nanos() as u64
}

/// Whether process `pid` holds a perf event descriptor now.
fn holds_perf_event(pid: u32) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::read_link(fd.path()).is_ok_and(|target| target.to_string_lossy().contains("perf_event"))
    })
}

#[test]
fn a_default_run_measures_with_no_tracepoint_open() {
    if !nix::unistd::geteuid().is_root() || !Path::new("/sys/kernel/tracing/events/syscalls").is_dir() {
        common::skip("needs root and the syscall tracepoints (futex counting is off otherwise)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("run.json");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("contend"))
        .args(["lock", "--lock", "futex", "--threads", "2", "--hold", "1us"])
        .args(["--duration", "400ms", "--warmup", "100ms", "--runs", "2", "--no-progress"])
        .arg("--export-json")
        .arg(&export)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Sightings: (time, holds a perf event), every few milliseconds.
    let mut seen: Vec<(u64, bool)> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
        seen.push((now_ns(), holds_perf_event(child.id())));
        std::thread::sleep(Duration::from_millis(3));
    }
    assert!(child.wait().unwrap().success());
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    assert_eq!(v["spec"]["repeat"]["count_futex"], "separate");
    let runs = v["points"][0]["runs"].as_array().unwrap();
    let status = |r: &serde_json::Value| r["status"].as_str().unwrap().to_string();
    let statuses: Vec<String> = runs.iter().map(status).collect();
    assert_eq!(statuses.iter().filter(|s| *s == "counting").count(), 1, "{statuses:?}");
    let warmup_ns = 100_000_000u64;
    for r in runs {
        let start = r["start_unix_ns"].as_u64().unwrap();
        let end = start + warmup_ns + (r["window_s"].as_f64().unwrap() * 1e9) as u64;
        let inside: Vec<bool> =
            seen.iter().filter(|(t, _)| (start..end).contains(t)).map(|&(_, perf)| perf).collect();
        assert!(inside.len() > 10, "too few sightings to judge a run: {}", inside.len());
        match status(r).as_str() {
            // A rejected run (screened out for steal or other load, and
            // re-made) was measured the same way: no counters either.
            "measured" | "rejected" => assert!(
                !inside.contains(&true),
                "a perf event was open during a measured run (round {})",
                r["round"]
            ),
            "counting" => {
                assert!(inside.contains(&true), "the counting run showed no perf event");
                assert!(r["futex"]["calls"].as_u64().unwrap() > 0);
            }
            other => panic!("unexpected status {other}"),
        }
        if status(r) != "counting" {
            assert!(r["futex"].is_null(), "a measured run carries futex counts");
        }
    }
}
