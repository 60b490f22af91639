//! `contend run` never kills the program it measures for its own sake,
//! and says so when a program fails under a lock. Each test replays what
//! broke before:
//!
//! - a program holds 2,000 mutexes at once (as jemalloc's fork handler
//!   holds every arena's), under every swappable lock;
//! - python3 with jemalloc preloaded forks after four threads allocated
//!   (redis died at BGSAVE this way under mcs and adaptive);
//! - a process of the program ends on the interposer's fault while the
//!   program exits 0, and contend printed a ratio;
//! - the program fails under glibc's mutex too (grep's "no match");
//! - a lock makes the program hang: its execution is ended at its limit.

mod common;

use serde_json::Value;
use std::path::PathBuf;
use std::process::Output;
use std::time::Duration;

fn contend_bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("contend")
}

/// `contend run --count-futex off --no-progress ARGS -- PROGRAM`; a hang
/// past the guard fails.
fn run(args: &[&str], program: &[&str]) -> Output {
    assert_cmd::Command::new(contend_bin())
        .args(["run", "--count-futex", "off", "--no-progress"])
        .args(args)
        .arg("--")
        .args(program)
        .timeout(Duration::from_secs(600))
        .output()
        .expect("contend runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn export(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every lock `contend run` offers, glibc's first.
fn every_lock() -> String {
    locks::in_mutex::Swap::all().map(|s| s.name()).collect::<Vec<_>>().join(",")
}

#[test]
fn a_program_holding_two_thousand_mutexes_at_once_runs_under_every_lock() {
    let dir = tempfile::tempdir().unwrap();
    let exe = common::compile("many_held", dir.path());
    let json = dir.path().join("r.json");
    let out = run(
        &[
            "--runs",
            "1",
            "--max-slowdown",
            "0",
            "--lock",
            &every_lock(),
            "--export-json",
            json.to_str().unwrap(),
        ],
        &[exe.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = export(&json);
    assert_eq!(doc["failed"].as_array().unwrap().len(), 0, "{}", doc["failed"]);
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), locks::in_mutex::Swap::all().count());
    // 2 threads x 5 rounds x 2000 mutexes, every one through the lock.
    for p in points {
        let s = &p["sample"];
        let (lock, took) = (p["point"]["lock"].as_str().unwrap(), s["swapped"].as_u64().unwrap());
        let expected = if lock == "pthread" { 0 } else { 20_000 };
        assert_eq!(took, expected, "{lock}: swapped acquisitions");
        assert_eq!(s["exit_code"], 0, "{lock}");
    }
}

#[test]
fn jemalloc_forking_after_threads_allocated_survives_every_queue_lock() {
    let (Some(python), Some(jemalloc)) =
        (common::which("python3"), contend::family::alloc::registry::find_library("libjemalloc.so.2"))
    else {
        common::skip("jemalloc fork under the interposer: needs python3 and libjemalloc2");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("fork.py");
    std::fs::write(
        &script,
        "import os, threading\n\
         def work():\n    for _ in range(2000):\n        b = [bytearray(64 * (i % 50 + 1)) for i in range(20)]\n\
         ts = [threading.Thread(target=work) for _ in range(4)]\n\
         [t.start() for t in ts]; [t.join() for t in ts]\n\
         pid = os.fork()\n\
         if pid == 0:\n    os._exit(0)\n\
         _, st = os.waitpid(pid, 0)\n\
         raise SystemExit(0 if st == 0 else 3)\n",
    )
    .unwrap();
    let json = dir.path().join("r.json");
    let out = assert_cmd::Command::new(contend_bin())
        .args(["run", "--count-futex", "off", "--no-progress", "--max-slowdown", "0", "--runs", "2"])
        .args(["--lock", "pthread,mcs,adaptive"])
        .args(["--export-json", json.to_str().unwrap(), "--"])
        .arg(&python)
        .arg(&script)
        .env("LD_PRELOAD", &jemalloc)
        .timeout(Duration::from_secs(600))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("contend-interpose"), "{}", stderr(&out));
    let doc = export(&json);
    assert_eq!(doc["failed"].as_array().unwrap().len(), 0, "{}", doc["failed"]);
    for p in doc["points"].as_array().unwrap().iter().filter(|p| p["point"]["lock"] != "pthread") {
        assert!(p["sample"]["swapped"].as_u64().unwrap() > 0, "{}: the lock ran", p["point"]["lock"]);
    }
}

#[test]
fn a_lock_under_which_a_process_of_the_program_fails_is_a_failed_point_without_a_ratio() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let csv = dir.path().join("r.csv");
    // Under a swapped lock one child of the shell ends on the interposer's
    // fault (a contradictory environment), while the shell exits 0: as
    // redis's BGSAVE child died while the server went on.
    let script = r#"[ "$CONTEND_RUN_LOCK" = pthread ] || CONTEND_RUN_MUTEXES=x sleep 0; exit 0"#;
    let out = run(
        &[
            "--runs",
            "3",
            "--lock",
            "pthread,tas",
            "--export-json",
            json.to_str().unwrap(),
            "--export-csv",
            csv.to_str().unwrap(),
        ],
        &["sh", "-c", script],
    );
    assert_eq!(out.status.code(), Some(1), "a failed point fails the run: {}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("FAILED: tas") && err.contains("both set"), "{err}");
    let row = err.lines().find(|l| l.trim_start().starts_with("tas ")).expect("a row for tas");
    assert!(row.contains("failed") && !row.contains("1.0"), "no number in its row: {row}");
    let doc = export(&json);
    let failed = doc["failed"].as_array().unwrap();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["point"]["lock"], "tas");
    assert!(failed[0]["reason"].as_str().unwrap().contains("CONTEND_RUN_MUTEXES"), "{}", failed[0]);
    // It stopped at its first execution: nothing is made of it twice.
    assert_eq!(failed[0]["runs"].as_array().unwrap().len(), 1);
    assert_eq!(failed[0]["runs"][0]["status"], "failed");
    assert_eq!(failed[0]["runs"][0]["exit_code"], 0, "the program itself exited 0");
    let points: Vec<&str> =
        doc["points"].as_array().unwrap().iter().map(|p| p["point"]["lock"].as_str().unwrap()).collect();
    assert_eq!(points, ["pthread"], "a failed lock is no point to compare");
    assert!(doc["vs_glibc"].as_array().unwrap().iter().all(|v| v["lock"] != "tas"));
    let csv = std::fs::read_to_string(&csv).unwrap();
    assert!(csv.lines().any(|l| l.starts_with("tas,") && l.contains("CONTEND_RUN_MUTEXES")), "{csv}");
}

#[test]
fn a_failure_under_glibc_ends_the_run_unless_its_status_is_accepted() {
    let out = run(&["--runs", "2"], &["sh", "-c", "exit 3"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("exited 3") && err.contains("--ignore-failure"), "{err}");
    for accept in ["--ignore-failure", "--ignore-failure=3", "-i=1,3"] {
        let out = run(&["--runs", "2", accept], &["sh", "-c", "exit 3"]);
        assert!(out.status.success(), "{accept}: {}", stderr(&out));
        assert!(stderr(&out).contains("exited 3 in 2 execution(s)"), "{accept}: {}", stderr(&out));
    }
    let out = run(&["--runs", "2", "--ignore-failure=1"], &["sh", "-c", "exit 3"]);
    assert_eq!(out.status.code(), Some(1), "3 is not accepted");
    // A signal is never accepted.
    let out = run(&["--runs", "1", "--ignore-failure"], &["sh", "-c", "kill -SEGV $$"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("killed by SIGSEGV"), "{}", stderr(&out));
}

#[test]
fn an_execution_past_its_limit_is_ended_and_its_lock_failed() {
    // Under a swapped lock the program hangs; glibc's execution takes ms,
    // so the limit is its floor, 2 s.
    let script = r#"[ "$CONTEND_RUN_LOCK" = pthread ] || exec sleep 600"#;
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = run(
        &[
            "--runs",
            "2",
            "--lock",
            "pthread,ticket",
            "--max-slowdown",
            "1",
            "--export-json",
            json.to_str().unwrap(),
        ],
        &["sh", "-c", script],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc = export(&json);
    let reason = doc["failed"][0]["reason"].as_str().unwrap().to_string();
    assert!(reason.starts_with("ended after 2.0 s"), "{reason}");
    // With no limit the same program would not end: not tried here.
    let out = run(&["--runs", "1", "--max-slowdown", "0.5"], &["true"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}
