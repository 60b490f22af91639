//! `contend lock --affinity`: the workers run where the placement says,
//! threads and processes alike, and the export names the placement. The
//! masks are read from /proc while the run is under way, and each check
//! waits (bounded) until the workers have pinned themselves, since a
//! worker pins itself only once it runs.

mod common;

use common::run::{children, start, until, Run};
use contend::model::value::parse_cpu_list;

/// The CPUs a task may run on, from its status file.
fn allowed(status: &str) -> Option<Vec<usize>> {
    let text = std::fs::read_to_string(status).ok()?;
    let line = text.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    parse_cpu_list(line.trim()).ok()
}

/// The CPUs this test (and so the contend it starts) may use.
fn usable() -> Vec<usize> {
    allowed("/proc/self/status").expect("our own mask")
}

/// A run long enough to be looked at; dropped, it is killed.
fn long_run(extra: &[&str]) -> Run {
    start(&[extra, &["--hold", "10us", "--duration", "60s", "--runs", "1", "--no-progress"]].concat())
}

#[test]
fn spread_pins_worker_processes_round_the_usable_cpus() {
    let cpus = usable();
    let run = long_run(&["--lock", "futex", "--procs", "3", "--affinity", "spread"]);
    let mut expected: Vec<usize> = (0..3).map(|i| cpus[i % cpus.len()]).collect();
    expected.sort_unstable();
    until("three workers, each pinned to its CPU", || {
        let kids = children(run.child.id());
        let masks: Vec<Vec<usize>> =
            kids.iter().filter_map(|k| allowed(&format!("/proc/{k}/status"))).collect();
        let mut pinned: Vec<usize> = masks.iter().filter(|m| m.len() == 1).map(|m| m[0]).collect();
        pinned.sort_unstable();
        kids.len() == 3 && pinned == expected
    });
}

#[test]
fn same_pins_every_worker_thread_to_one_cpu_and_leaves_the_coordinator_free() {
    let cpus = usable();
    let run = long_run(&["--lock", "futex", "--threads", "3", "--affinity", "same"]);
    let pid = run.child.id();
    let tasks = || -> Vec<Vec<usize>> {
        std::fs::read_dir(format!("/proc/{pid}/task"))
            .map(|d| {
                d.flatten().filter_map(|t| allowed(&t.path().join("status").to_string_lossy())).collect()
            })
            .unwrap_or_default()
    };
    until("three worker threads on the first usable CPU", || {
        tasks().iter().filter(|m| **m == [cpus[0]]).count() == 3
    });
    let main = allowed(&format!("/proc/{pid}/status")).unwrap();
    assert_eq!(main, cpus, "the coordinator is never pinned");
}

#[test]
fn the_export_names_a_pinned_point_and_leaves_an_unpinned_one_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let out = assert_cmd::Command::cargo_bin("contend")
        .unwrap()
        .args([
            "lock",
            "--lock",
            "futex",
            "--threads",
            "2",
            "--affinity",
            "none,spread",
            "--duration",
            "100ms",
        ])
        .args(["--warmup", "10ms", "--runs", "1", "--no-progress", "--count-futex", "off", "--export-json"])
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("affinity") && stdout.contains("spread"), "{stdout}");
    let export: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let points: Vec<&serde_json::Value> =
        export["points"].as_array().unwrap().iter().map(|r| &r["point"]).collect();
    assert_eq!(points.len(), 2);
    assert!(points[0].get("affinity").is_none(), "unpinned points read as before: {}", points[0]);
    assert_eq!(points[1]["affinity"], "spread");
    assert_eq!(export["spec"]["affinities"], serde_json::json!(["none", "spread"]));
    assert_eq!(export["spec"]["cpus"].as_array().unwrap().len(), usable().len());
}
