//! The measurement plan end to end: interleaved rounds in the export,
//! sequential order, replicas, the paired compare against a baseline, and
//! the plan flags' bad input. Short windows; nothing here asserts a rate.

use assert_cmd::Command;
use serde_json::Value;

fn contend() -> Command {
    Command::cargo_bin("contend").expect("binary built")
}

/// A lock export of `args` with 50 ms windows, no counting runs.
fn export(dir: &std::path::Path, args: &[&str]) -> (std::path::PathBuf, Value) {
    let path = dir.join("run.json");
    contend()
        .args(["lock", "--duration", "50ms", "--warmup", "0", "--count-futex", "off", "--no-progress"])
        .args(args)
        .arg("--export-json")
        .arg(&path)
        .assert()
        .success();
    let v = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    (path, v)
}

fn measured_rounds(point: &Value) -> Vec<u64> {
    point["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "measured")
        .map(|r| r["round"].as_u64().unwrap())
        .collect()
}

#[test]
fn interleaved_rounds_give_every_point_one_run_per_round_in_time_order() {
    let dir = tempfile::tempdir().unwrap();
    let (_, v) =
        export(dir.path(), &["--lock", "futex,pthread", "--threads", "2", "--runs", "3", "--seed", "11"]);
    assert_eq!(v["spec"]["repeat"]["order"], "interleaved");
    assert_eq!(v["spec"]["repeat"]["seed"], 11);
    let points = v["points"].as_array().unwrap();
    for p in points {
        assert_eq!(measured_rounds(p), [0, 1, 2]);
    }
    // Every run of round k starts after every run of round k-1 started:
    // the rounds really interleave.
    let start = |p: &Value, round: u64| -> u64 {
        p["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["round"] == round && r["status"] == "measured")
            .unwrap()["start_unix_ns"]
            .as_u64()
            .unwrap()
    };
    for round in 1..3 {
        let latest_before = points.iter().map(|p| start(p, round - 1)).max().unwrap();
        let earliest_now = points.iter().map(|p| start(p, round)).min().unwrap();
        assert!(earliest_now > latest_before, "round {round} began before round {} ended", round - 1);
    }
}

#[test]
fn sequential_order_runs_a_point_to_the_end_first() {
    let dir = tempfile::tempdir().unwrap();
    let (_, v) = export(
        dir.path(),
        &["--lock", "futex,pthread", "--threads", "2", "--runs", "2", "--order", "sequential"],
    );
    let points = v["points"].as_array().unwrap();
    let last_of_first = points[0]["runs"][1]["start_unix_ns"].as_u64().unwrap();
    let first_of_second = points[1]["runs"][0]["start_unix_ns"].as_u64().unwrap();
    assert!(first_of_second > last_of_first);
}

#[test]
fn replicas_compare_against_each_other_paired_by_round() {
    let dir = tempfile::tempdir().unwrap();
    let (path, v) =
        export(dir.path(), &["--lock", "futex", "--threads", "2", "--replicate", "2", "--runs", "4"]);
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    assert_eq!(points[0]["point"]["replica"], 1);
    assert_eq!(points[1]["point"]["replica"], 2);
    let out = contend()
        .args(["compare"])
        .arg(&path)
        .args(["--baseline", "replica=1", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let r: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(r["paired"], true);
    let row = &r["points"][0];
    assert_eq!(row["pairs"], 4);
    assert_eq!(row["key"]["replica"], 2);
    let (lo, hi) = (row["ci95"][0].as_f64().unwrap(), row["ci95"][1].as_f64().unwrap());
    let ratio = row["ratio"].as_f64().unwrap();
    assert!(lo <= ratio && ratio <= hi);
    let verdict = row["verdict"].as_str().unwrap();
    assert!(["faster", "slower", "no_change"].contains(&verdict), "{verdict}");
    // The table form says what the ratio is, within 100 columns.
    let out = contend()
        .args(["compare"])
        .arg(&path)
        .args(["--baseline", "replica=1"])
        .assert()
        .success()
        .stdout(predicates::str::contains("point/baseline"))
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(widest <= 100, "{widest} columns:\n{text}");
}

#[test]
fn plan_flags_refuse_bad_input_with_status_2() {
    let refused = |args: &[&str], says: &str| {
        let out = contend().args(args).assert().code(2).get_output().clone();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(says), "{args:?}: expected `{says}` in:\n{err}");
    };
    refused(&["lock", "--max-steal", "0%"], "must be above 0%");
    refused(&["lock", "--max-steal", "lots"], "or `off`");
    refused(&["lock", "--order", "random"], "invalid value");
    refused(&["lock", "--count-futex", "sometimes"], "invalid value");
    refused(&["lock", "--replicate", "0"], "0 is not allowed");
    refused(&["compare", "only-one.json"], "compare takes OLD NEW");
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = export(dir.path(), &["--lock", "futex", "--threads", "1", "--runs", "2"]);
    let p = path.to_str().unwrap();
    refused(&["compare", p, "--baseline", "nosuchlock"], "no point");
    refused(&["compare", p, p, "--baseline", "futex"], "give exactly one");
}
