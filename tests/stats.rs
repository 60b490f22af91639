//! Repetition and what builds on it, end to end: --runs, --precision and
//! --max-time, `contend compare` (verdicts and exit status), `contend
//! tune`, and --plot. Runs are tiny; nothing asserts a speed, only what
//! the numbers must satisfy whatever they are.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;

fn contend() -> Command {
    Command::cargo_bin("contend").expect("binary built")
}

/// `contend lock` with a short window, no warm-up, JSON to `path`.
fn lock_json(path: &Path, args: &[&str]) -> Value {
    contend()
        .args(["lock", "--duration", "30ms", "--warmup", "0", "--no-progress"])
        .args(args)
        .arg("--export-json")
        .arg(path)
        .assert()
        .success();
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn precision_stops_when_the_interval_is_narrow_enough() {
    let dir = tempfile::tempdir().unwrap();
    let v = lock_json(
        &dir.path().join("p.json"),
        &["--lock", "futex", "--threads", "1", "--hold", "0", "--precision", "50%", "--max-time", "10s"],
    );
    let p = &v["points"][0];
    assert_eq!(p["stopped"], "precision");
    assert!(p["stats"]["n"].as_u64().unwrap() >= 2);
    assert!(p["stats"]["ci95_pct"].as_f64().unwrap() <= 50.0);
    // The statistics are over the measured runs only.
    let measured = p["runs"].as_array().unwrap().iter().filter(|r| r["status"] == "measured").count();
    assert_eq!(measured as u64, p["stats"]["n"].as_u64().unwrap());
}

#[test]
fn max_time_ends_a_search_that_cannot_succeed_and_says_so() {
    let out = contend()
        .args(["lock", "--lock", "futex", "--threads", "2", "--duration", "30ms", "--warmup", "0"])
        .args(["--precision", "0.0001%", "--max-time", "300ms"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("1 of 1 point(s) ran out of --max-time short of --precision (marked !)"), "{text}");
    // The row carries the mark in its ±% cell.
    let row = text.lines().find(|l| l.contains("K ") || l.contains("M ")).unwrap();
    assert!(row.contains('!'), "{text}");
}

/// Scales every run's cs/s in a lock export, as if the code got slower.
fn scaled(v: &Value, factor: f64) -> Value {
    let mut v = v.clone();
    for p in v["points"].as_array_mut().unwrap() {
        for r in p["runs"].as_array_mut().unwrap() {
            let cs = r["cs_per_s"].as_f64().unwrap();
            r["cs_per_s"] = Value::from(cs * factor);
        }
    }
    v
}

#[test]
fn compare_judges_and_fails_on_a_regression() {
    let dir = tempfile::tempdir().unwrap();
    let old_path = dir.path().join("old.json");
    // Eight runs: one 30 ms window hit by a steal burst (screening does
    // not judge windows that short) must not widen Welch's interval past
    // a halving, as it did with four in a CI run.
    let old = lock_json(&old_path, &["--lock", "futex,pthread", "--threads", "2", "--runs", "8"]);
    // Half the throughput on every run: significant and beyond 5%. With
    // one export per side that is a difference of the runs, which may be
    // the two invocations' own: a possible regression, still exit 1.
    let write = |name: &str, factor: f64| {
        let path = dir.path().join(name);
        std::fs::write(&path, scaled(&old, factor).to_string()).unwrap();
        path
    };
    let (slow, slow2) = (write("slow.json", 0.5), write("slow2.json", 0.505));
    contend()
        .args(["compare"])
        .arg(&old_path)
        .arg(&slow)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("differs in-run only  REGRESSION?"))
        .stdout(predicate::str::contains("2 possible regression(s)"))
        .stdout(predicate::str::contains("One export per side"));
    // Two invocations per side (the second old one 1% faster): the
    // invocation is the unit, and the slowdown is a regression.
    let old2 = write("old2.json", 1.01);
    contend()
        .args(["compare"])
        .arg(&old_path)
        .arg(&old2)
        .arg("--")
        .arg(&slow)
        .arg(&slow2)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("slower  REGRESSION"))
        .stdout(predicate::str::contains("2 regression(s)"))
        .stdout(predicate::str::contains("unit: the invocation (2 OLD, 2 NEW exports)"));
    // The same file against itself: nothing changed.
    contend()
        .args(["compare"])
        .arg(&old_path)
        .arg(&old_path)
        .assert()
        .success()
        .stdout(predicate::str::contains("no significant change"))
        .stdout(predicate::str::contains("no regression"));
    // Twice as fast is faster, never a regression.
    let (fast, fast2) = (write("fast.json", 2.0), write("fast2.json", 2.02));
    contend()
        .args(["compare"])
        .arg(&old_path)
        .arg(&old2)
        .arg("--")
        .arg(&fast)
        .arg(&fast2)
        .assert()
        .success()
        .stdout(predicate::str::contains("faster"));
    // Three files without `--` say which side is which nowhere.
    contend()
        .args(["compare"])
        .arg(&old_path)
        .arg(&old2)
        .arg(&fast)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("several per side split by `--`"));
}

#[test]
fn compare_refuses_what_it_cannot_compare() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let v = lock_json(&a, &["--lock", "futex", "--threads", "1", "--runs", "2"]);
    let mut v1 = v.clone();
    v1["schema_version"] = Value::from(1);
    let old = dir.path().join("v1.json");
    std::fs::write(&old, v1.to_string()).unwrap();
    contend()
        .args(["compare"])
        .arg(&old)
        .arg(&a)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("versions 2 to 5"));
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "not json").unwrap();
    contend()
        .args(["compare"])
        .arg(&junk)
        .arg(&a)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not JSON"));
    contend()
        .args(["compare"])
        .arg(dir.path().join("missing.json"))
        .arg(&a)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("missing.json"));
}

#[test]
fn tune_finds_the_best_measured_budget() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tune.json");
    contend()
        .args(["tune", "--lock", "futex", "--threads", "2", "--hold", "0"])
        .args(["--duration", "20ms", "--warmup", "0", "--runs", "2", "--max-time", "2s"])
        .arg("--export-json")
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::contains("best: spin"))
        .stdout(predicate::str::contains("refinement ended because"));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v["family"], "lock");
    let points = v["points"].as_array().unwrap();
    // The coarse pass always completes: every decade was measured.
    let spins: Vec<u64> = points.iter().map(|p| p["point"]["spin"].as_u64().unwrap()).collect();
    for decade in [1, 10, 100, 1000, 10000, 100000] {
        assert!(spins.contains(&decade), "{spins:?}");
    }
    assert!(spins.windows(2).all(|w| w[0] < w[1]), "sorted and distinct: {spins:?}");
    let best = points
        .iter()
        .max_by(|a, b| a["stats"]["mean"].as_f64().unwrap().total_cmp(&b["stats"]["mean"].as_f64().unwrap()))
        .unwrap();
    assert_eq!(v["best_spin"], best["point"]["spin"]);

    contend()
        .args(["tune", "--lock", "pthread"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no spin budget"));
}

#[test]
fn the_futex_lock_rfc_figure_is_one_command() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("rfc.svg");
    // adaptive's three waiting policies, pthread beside them as the
    // reference: a mixed sweep (pthread has no --spinners).
    contend()
        .args(["lock", "--lock", "adaptive,pthread", "--spinners", "none,one,many", "--threads", "2,4,16"])
        .args(["--duration", "20ms", "--warmup", "0", "--runs", "2", "--plot"])
        .arg(&svg)
        .assert()
        .success();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg"));
    // The SVG's text elements, one per label.
    let labels: Vec<&str> = text
        .split("<text")
        .skip(1)
        .filter_map(|t| t.split('>').nth(1))
        .map(|l| l.split('<').next().unwrap_or("").trim())
        .collect();
    for needle in [
        "adaptive spinners=none",
        "adaptive spinners=one",
        "adaptive spinners=many",
        "pthread",
        "cs/s (critical sections per second), fairness and wait to acquire against workers",
        "Jain index",
    ] {
        assert!(labels.contains(&needle), "the plot lacks `{needle}`: {labels:?}");
    }
    // Ticks at the worker counts swept, and none between them (a log
    // scale would put them at 5, 10 and 20). The 0 is the y axis's. Read
    // above the wait panel, whose y axis has decades of µs (0.1, 1, 10).
    let wait = labels.iter().position(|l| l.starts_with("wait, µs")).expect("a wait panel");
    let labels = &labels[..wait];
    for tick in ["2", "4", "16"] {
        assert!(labels.contains(&tick), "no tick at {tick}: {labels:?}");
    }
    for absent in ["5", "8", "10", "20", "2.0"] {
        assert!(!labels.contains(&absent), "a tick at {absent}: {labels:?}");
    }
    // The full command is the caption.
    assert!(labels.iter().any(|l| l.starts_with("contend lock --lock adaptive,pthread")), "{labels:?}");
}

#[test]
fn bad_repetition_flags_are_refused() {
    for (args, says) in [
        (&["--runs", "0"][..], ">= 1"),
        (&["--precision", "0%"][..], "above 0%"),
        (&["--max-time", "1s"][..], "--precision"),
        (&["--precision", "2%", "--max-time", "0s"][..], "longer than 0"),
    ] {
        contend()
            .args(["lock", "--lock", "futex"])
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says));
    }
}
