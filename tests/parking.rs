//! Waiting that is not contention: `contend run --profile` counts a wait
//! followed by an empty section as parking, on a program where the truth
//! is known (tests/programs/parking.c: threads that take a gate only to
//! let it go, a consumer that finds its queue empty and goes straight into
//! a condition wait, and workers that contend with real sections), and
//! `--what-if top:N` ranks only the mutex that is contended. Needs a C
//! compiler.

mod common;

use serde_json::Value;

const ROUNDS: u64 = 20;
const PARKERS: u64 = 2;

/// The profiled executions' measured samples (the unprofiled point's
/// have no mutexes; on a busy machine, screened-out executions are kept
/// beside the ones that replaced them).
fn samples(doc: &Value) -> Vec<&Value> {
    let all = doc["points"].as_array().unwrap().iter().flat_map(|p| p["runs"].as_array().unwrap().iter());
    all.filter(|s| s["status"] == "measured" && !s["mutexes"].as_array().unwrap().is_empty()).collect()
}

/// The program's three mutexes' addresses from its last line.
fn addresses(stdout: &str) -> [u64; 3] {
    let line = stdout.lines().last().expect("the program prints its mutexes");
    let f: Vec<&str> = line.split_whitespace().collect();
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    [hex(f[1]), hex(f[3]), hex(f[5])]
}

fn mutex(sample: &Value, address: u64) -> &Value {
    let all = sample["mutexes"].as_array().unwrap();
    all.iter().find(|m| m["address"] == address).unwrap_or_else(|| panic!("no mutex {address:#x}: {all:?}"))
}

#[test]
fn parking_waits_are_counted_apart_from_contention() {
    let dir = tempfile::tempdir().unwrap();
    let exe = common::compile("parking", dir.path());
    let (doc, stdout, table) = common::run::profiled_printing(&exe, &["--count-futex", "off"], dir.path());
    let [gate, queue, work] = addresses(&stdout);
    let s = samples(&doc);
    assert_eq!(s.len(), 1, "one profiled execution measured");
    // Every gate wait (the main thread lets go only once each parker is
    // asleep on it) was followed by an unlock with nothing between.
    let g = mutex(s[0], gate);
    assert_eq!(g["contended"], ROUNDS * PARKERS, "{g}");
    assert_eq!(g["parked_waits"], ROUNDS * PARKERS, "{g}");
    assert_eq!(g["parked_wait_ns"], g["wait_ns"], "{g}");
    // The consumer's wait each round was followed by a condition wait.
    let q = mutex(s[0], queue);
    assert_eq!(q["contended"], ROUNDS, "{q}");
    assert_eq!(q["parked_waits"], ROUNDS, "{q}");
    // The workers' waits were followed by 20 µs of work: contention.
    let w = mutex(s[0], work);
    assert!(w["contended"].as_u64().unwrap() > 0, "two workers started together contend: {w}");
    assert_eq!(w["parked_waits"], 0, "{w}");
    assert!(table.contains("parked") && table.contains("parking, not contention"), "{table}");
    let said = table.split("parking, not contention").nth(1).unwrap();
    assert!(said.contains("parker (parking.c") && said.contains("consumer (parking.c"), "{said}");
    assert!(!said.split('\n').take(4).any(|l| l.contains("worker (parking.c")), "{said}");
}

#[test]
fn what_if_top_n_leaves_parking_mutexes_out_of_its_ranking() {
    let dir = tempfile::tempdir().unwrap();
    let exe = common::compile("parking", dir.path());
    let (doc, stderr) =
        common::run::exported(&[exe.as_os_str()], &["--runs", "2", "--what-if", "top:3"], dir.path());
    let ranked: Vec<String> = doc["speedup"]["mutexes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["waits_at"].as_str().unwrap().to_string())
        .collect();
    assert!(!ranked.is_empty(), "{stderr}");
    // The plan is said with --no-progress too: glibc's, the baseline and
    // the one mutex halved and gone, 2 rounds, no separate counting.
    assert!(stderr.contains("4 points") && stderr.contains("in 2 rounds: 8 executions of about"), "{stderr}");
    assert!(ranked.iter().all(|n| n.starts_with("worker")), "only the contended mutex is ranked: {ranked:?}");
    let warning = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "parking")
        .unwrap_or_else(|| panic!("a parking warning: {}", doc["warnings"]));
    let text = warning["message"].as_str().unwrap();
    assert!(text.starts_with("--what-if top:3 left out") && text.contains("parker"), "{text}");
}
