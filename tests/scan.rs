//! `contend run --parameter-scan/--parameter-list` (issue 57, item 2):
//! the program runs once per value with `{NAME}` replaced in its
//! arguments and hooks, every value's points in the same rounds, each
//! lock's ratio to glibc's mutex at the same value; and what is refused.

mod common;

use common::run::exported;
use std::ffi::OsStr;

#[test]
fn each_value_runs_with_its_own_baseline_and_reaches_the_program_and_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let exe = common::compile("hold_param", dir.path());
    let log = dir.path().join("values.log");
    let prepare = format!("echo {{hold}} >> {}", log.display());
    let args = [
        "--parameter-list",
        "hold",
        "100,2000",
        "--lock",
        "pthread,tas",
        "--runs",
        "2",
        "--prepare",
        &prepare,
    ];
    let (doc, table) = exported(&[exe.as_os_str(), OsStr::new("{hold}")], &args, dir.path());
    let points = doc["points"].as_array().unwrap();
    let at = |lock: &str, value: &str| {
        points
            .iter()
            .find(|p| p["point"]["lock"] == lock && p["point"]["parameter"]["value"] == value)
            .unwrap_or_else(|| panic!("no point {lock} at hold={value}\n{table}"))
    };
    for value in ["100", "2000"] {
        assert_eq!(at("pthread", value)["point"]["parameter"]["name"], "hold");
        // hold_param: four threads, 2000 acquisitions each, all swapped.
        assert_eq!(at("tas", value)["sample"]["swapped"], 8000, "{table}");
        let vs = doc["vs_glibc"].as_array().unwrap();
        let ratio = vs.iter().find(|v| v["lock"] == "tas" && v["parameter"]["value"] == value);
        let ratio = ratio.unwrap_or_else(|| panic!("tas has a ratio at hold={value}: {vs:?}"));
        assert_eq!(ratio["rounds"], 2, "paired with pthread at the same value, round by round");
        assert!(table.contains(&format!("tas hold={value}")), "the table names the value: {table}");
    }
    assert_eq!(points.len(), 4, "two locks at two values");
    // --prepare ran before each of the 2 x 2 x 2 executions, with the value.
    let logged = std::fs::read_to_string(&log).unwrap();
    let count = |v: &str| logged.lines().filter(|l| *l == v).count();
    assert_eq!((count("100"), count("2000")), (4, 4), "{logged}");
    assert_eq!(doc["spec"]["parameter"]["values"], serde_json::json!(["100", "2000"]));
    // compare names the points as the table does.
    let json = dir.path().join("run.json");
    let out = assert_cmd::Command::cargo_bin("contend")
        .unwrap()
        .arg("compare")
        .arg(&json)
        .arg(&json)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && said.contains("tas hold=2000"), "{said}");
}

#[test]
fn what_a_scan_refuses() {
    let refused = common::refused;
    refused(
        &["run", "--parameter-scan", "n", "1", "3", "--recommend", "--", "true", "{n}"],
        "cannot be used",
    );
    refused(
        &["run", "--parameter-list", "n", "1,2", "--what-if", "top:1", "--", "true", "{n}"],
        "cannot be used",
    );
    refused(
        &["run", "--parameter-list", "n", "1,2", "--", "true"],
        "{n} is in none of the program's arguments",
    );
    refused(&["run", "--parameter-scan", "n", "3", "1", "--", "true", "{n}"], "MAX 1 is below MIN 3");
    refused(&["run", "--parameter-scan", "n", "1", "2.5", "--", "true", "{n}"], "not an integer");
    refused(&["run", "--parameter-list", "n", "1,1", "--", "true", "{n}"], "given twice");
    refused(&["run", "--parameter-step-size", "2", "--", "true"], "--parameter-scan");
}
