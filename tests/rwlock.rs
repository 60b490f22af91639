//! `contend lock --read`: reader-writer locks draw reads and writes per
//! acquisition, and their exports keep the two apart.

mod common;

use serde_json::Value;

const RWLOCKS: [&str; 5] = ["futex-rw", "pthread-rw", "pthread-rw-writer", "std-rw", "parking_lot-rw"];

fn points(doc: &Value) -> &Vec<Value> {
    doc["points"].as_array().unwrap()
}

#[test]
fn every_rwlock_reads_its_share_and_counts_reads_and_writes_apart() {
    let doc = common::lock_json(&[
        "--lock",
        &RWLOCKS.join(","),
        "--threads",
        "2",
        "--hold",
        "200ns",
        "--read",
        "0%,50%,100%",
        "--latency-every",
        "4",
    ]);
    assert_eq!(points(&doc).len(), RWLOCKS.len() * 3);
    for p in points(&doc) {
        let (lock, pct) = (p["point"]["lock"].as_str().unwrap(), p["point"]["read_pct"].as_u64().unwrap());
        let s = &p["sample"];
        let (reads, writes) = (s["rw"]["reads"].as_u64().unwrap(), s["rw"]["writes"].as_u64().unwrap());
        let acquisitions = s["acquisitions"].as_u64().unwrap();
        assert_eq!(reads + writes, acquisitions, "{lock} {pct}%");
        let per_worker: u64 =
            s["workers"].as_array().unwrap().iter().map(|w| w["reads"].as_u64().unwrap_or(0)).sum();
        assert_eq!(per_worker, reads, "{lock} {pct}%: the workers' reads add up");
        let share = 100.0 * reads as f64 / acquisitions as f64;
        match pct {
            0 => assert_eq!(reads, 0, "{lock}"),
            100 => assert_eq!(writes, 0, "{lock}"),
            // The share is checked where the window held enough draws for
            // it (a window on a busy machine may hold few: bounded by work,
            // not time); the counts above hold at any number.
            _ if acquisitions >= 200 => {
                assert!((35.0..65.0).contains(&share), "{lock} 50%: read {share:.1}% of {acquisitions}")
            }
            _ => {}
        }
        // The waits of each kind that happened were timed apart.
        let timed = |kind: &str| s["rw"][kind]["summary"]["samples"].as_u64().unwrap_or(0);
        for (kind, n) in [("read_wait", reads), ("write_wait", writes)] {
            if n == 0 {
                assert_eq!(timed(kind), 0, "{lock} {pct}%: {kind} timed with none done");
            } else if n >= 100 {
                assert!(timed(kind) > 0, "{lock} {pct}%: {n} done, none of the {kind}s timed");
            }
        }
    }
}

#[test]
fn mutexes_in_a_read_sweep_run_once_and_rwlocks_default_to_read_mostly() {
    let doc = common::lock_json(&["--lock", "futex,futex-rw", "--threads", "2", "--read", "10%,60%"]);
    let of = |lock: &str| -> Vec<Value> {
        points(&doc)
            .iter()
            .filter(|p| p["point"]["lock"] == lock)
            .map(|p| p["point"]["read_pct"].clone())
            .collect()
    };
    assert_eq!(of("futex"), vec![Value::Null], "a mutex has no read share");
    assert!(points(&doc).iter().all(|p| p["point"]["lock"] != "futex" || p["sample"].get("rw").is_none()));
    assert_eq!(of("futex-rw"), vec![Value::from(10), Value::from(60)]);

    let doc = common::lock_json(&["--lock", "std-rw", "--threads", "2"]);
    assert_eq!(points(&doc)[0]["point"]["read_pct"], 90);
}

#[test]
fn read_shares_that_cannot_apply_are_refused() {
    common::refused(&["lock", "--lock", "futex", "--read", "50%"], "--read does not apply to futex");
    common::refused(&["lock", "--lock", "futex-rw", "--read", "50"], "needs a %");
    common::refused(&["lock", "--lock", "futex-rw", "--read", "101%"], "0% to 100%");
    common::refused(&["lock", "--lock", "futex-rw", "--procs", "2"], "--procs needs locks");
    common::refused(&["lock", "--lock", "futex-rw", "--threads", "2", "--locks", "2"], "run on one lock");
    common::refused(&["tune", "--lock", "futex-rw"], "reader-writer lock");
}

#[test]
fn the_csv_carries_reads_and_writes() {
    let out = assert_cmd::Command::cargo_bin("contend")
        .unwrap()
        .args(["lock", "--lock", "pthread-rw", "--threads", "2", "--read", "70%", "--duration", "100ms"])
        .args(["--warmup", "20ms", "--runs", "1", "--no-progress", "--export-csv", "-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let cell = |name: &str| row[header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("{name}"))];
    assert_eq!(cell("read_pct"), "70");
    assert!(cell("reads_per_s").parse::<f64>().unwrap() > cell("writes_per_s").parse::<f64>().unwrap());
}

/// A read sweep too short for any p99 (drawn only with 10 timed waits
/// above it, so a million acquisitions at the default one in 1024) once
/// made plotters search forever for the wait panel's ticks on an empty
/// range. The figure is drawn, and the panel says why it has no line.
#[test]
fn a_figure_without_a_single_percentile_is_still_drawn() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("rw.svg");
    let json = dir.path().join("rw.json");
    assert_cmd::Command::cargo_bin("contend")
        .unwrap()
        .args(["lock", "--lock", "pthread-rw", "--threads", "2", "--read", "0%,90%", "--duration", "10ms"])
        .args(["--warmup", "0", "--runs", "1", "--no-progress", "--plot"])
        .arg(&svg)
        .arg("--export-json")
        .arg(&json)
        .timeout(std::time::Duration::from_secs(120))
        .assert()
        .success();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("too few timed waits"), "the wait panel says why it is empty");
    // And the same figure from the export.
    let again = dir.path().join("again.svg");
    assert_cmd::Command::cargo_bin("contend")
        .unwrap()
        .arg("plot")
        .arg(&json)
        .arg("-o")
        .arg(&again)
        .timeout(std::time::Duration::from_secs(120))
        .assert()
        .success();
}
