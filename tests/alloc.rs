//! `contend alloc` end to end: the child really runs under the preloaded
//! allocator (it reports the library mapped into it), results carry rusage
//! and futex counts split between the benchmark's semaphores and the rest,
//! and bad input is refused with exit status 2.
//!
//! scripts/test.sh installs the Debian allocator packages and sets
//! CONTEND_REQUIRE_ALLOCATORS=1, so there every allocator must be found;
//! elsewhere the missing ones are skipped with a note.

mod common;

use assert_cmd::Command;
use contend::family::alloc::registry::{find_library, KNOWN};
use serde_json::Value;

fn contend() -> Command {
    Command::cargo_bin("contend").expect("binary built")
}

fn available(name: &str) -> bool {
    let (_, soname, _) = KNOWN.iter().find(|(n, _, _)| *n == name).expect("a known allocator");
    let found = find_library(soname).is_some();
    if !found {
        assert!(
            std::env::var_os("CONTEND_REQUIRE_ALLOCATORS").is_none(),
            "{name} must be installed here (scripts/test.sh installs it)"
        );
        common::skip(&format!("{name} is not installed"));
    }
    found
}

#[test]
fn every_allocator_runs_preloaded_with_split_futex_counts() {
    let allocators: Vec<&str> = ["glibc", "tcmalloc", "jemalloc", "mimalloc"]
        .into_iter()
        .filter(|a| *a == "glibc" || available(a))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("alloc.json");
    let csv = dir.path().join("alloc.csv");
    let md = dir.path().join("alloc.md");
    let gnuplot = dir.path().join("alloc.dat");
    contend()
        .args([
            "alloc",
            "--threads",
            "3",
            "--pairs",
            "2",
            "--iterations",
            "50",
            "--batch",
            "64",
            "--runs",
            "2",
        ])
        .args(["--allocator", &allocators.join(",")])
        .args([
            "--export-json",
            json.to_str().unwrap(),
            "--export-csv",
            csv.to_str().unwrap(),
            "--export-markdown",
            md.to_str().unwrap(),
            "--export-gnuplot",
            gnuplot.to_str().unwrap(),
        ])
        .assert()
        .success();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["family"], "alloc");
    assert_eq!(v["schema_version"], 5);
    let results = v["points"].as_array().unwrap();
    assert_eq!(results.len(), 2 * allocators.len());
    for r in results {
        // Two measured runs each (a busy machine may add rejected ones,
        // and counting adds one counting run); the mean is over the
        // measured ones, the sample is one of them.
        let runs = r["runs"].as_array().unwrap();
        let with = |status: &str| runs.iter().filter(|run| run["status"] == status).count();
        assert_eq!(with("measured"), 2);
        assert!(with("counting") <= 1);
        assert_eq!(with("measured") + with("counting") + with("rejected"), runs.len());
        assert_eq!(r["stats"]["n"], 2);
        let s = &r["sample"];
        assert_eq!(s["status"], "measured");
        assert!(runs.iter().any(|run| run["ops_per_s"] == s["ops_per_s"]));
        // Futex counts come from the counting run only.
        for run in runs {
            assert_eq!(run["futex"].is_null(), run["status"] != "counting", "{run}");
        }
        let k = runs.iter().find(|run| run["status"] == "counting").unwrap_or(s);
        let allocator = s["allocator"].as_str().unwrap();
        let mapped = s["mapped_allocator"].as_str();
        match allocator {
            "glibc" => assert!(mapped.is_none(), "glibc run had {mapped:?} mapped"),
            other => assert!(mapped.is_some_and(|m| m.contains(other)), "{other}: mapped {mapped:?}"),
        }
        let ops = s["operations"].as_u64().unwrap();
        let expected = if s["pattern"] == "local" { 2 * 3 * 50 * 64 } else { 2 * 2 * 50 * 64 };
        assert_eq!(ops, expected);
        assert!(s["ops_per_s"].as_f64().unwrap() > 0.0 && s["max_rss_kib"].as_i64().unwrap() > 0);
        if let Some(calls) = k["futex"]["calls"].as_u64() {
            let own = k["own_futex_calls"].as_u64().unwrap();
            assert_eq!(k["allocator_futex_calls"].as_u64().unwrap(), calls.saturating_sub(own));
        }
        if allocator == "glibc" {
            assert_eq!(s["vs_glibc"], 1.0);
        }
    }
    let csv = std::fs::read_to_string(&csv).unwrap();
    assert!(csv.starts_with("pattern,allocator,wall_s,user_s,sys_s,ops_per_s_mean"));
    assert_eq!(csv.lines().count(), 1 + results.len());
    let md = std::fs::read_to_string(&md).unwrap();
    assert_eq!(
        md.lines().filter(|l| l.starts_with("| local") || l.starts_with("| pairs")).count(),
        results.len()
    );
    let gnuplot = std::fs::read_to_string(&gnuplot).unwrap();
    assert_eq!(gnuplot.matches("# pattern ").count(), 2);
    let rows = gnuplot.lines().filter(|l| !l.starts_with('#') && !l.is_empty()).count();
    assert_eq!(rows, results.len());
}

#[test]
fn glibc_tunables_reach_the_child() {
    let out = contend()
        .args(["alloc", "--pattern", "local", "--allocator", "glibc:arena_max=1,glibc"])
        .args(["--threads", "2", "--iterations", "10", "--batch", "16", "--runs", "1"])
        .args(["--export-json", "-"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    // What the child itself saw in its environment: set for the tuned
    // allocator, absent for plain glibc (the parent's own is removed).
    let seen: Vec<(String, serde_json::Value)> = v["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (r["sample"]["allocator"].as_str().unwrap().to_string(), r["sample"]["glibc_tunables"].clone())
        })
        .collect();
    assert!(seen.contains(&("glibc:arena_max=1".into(), "glibc.malloc.arena_max=1".into())), "{seen:?}");
    assert!(seen.contains(&("glibc".into(), serde_json::Value::Null)), "{seen:?}");
}

#[test]
fn bad_alloc_input_is_refused_with_status_2() {
    for (args, says) in [
        (&["alloc", "--allocator", "hoard"][..], "unknown allocator `hoard`"),
        (&["alloc", "--allocator", "jemalloc:narenas=1"][..], "glibc only"),
        (&["alloc", "--pattern", "ring"][..], "unknown pattern `ring`"),
        (&["alloc", "--size", "0"][..], "at least 1 byte"),
        (&["alloc", "--size", "4096-16"][..], "backwards"),
        (&["alloc", "--threads", "0"][..], "0 is not allowed"),
        (&["alloc", "--batch", "0"][..], "at least 1"),
    ] {
        let out = contend().args(args).assert().code(2).get_output().clone();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(says), "{args:?}: expected `{says}` in {err}");
    }
}

/// Ctrl-C reaches the whole process group, the allocator child included:
/// the child must die of it (it inherited contend's blocked mask across
/// exec, so it unblocks it) and contend must exit 130.
#[test]
fn ctrl_c_stops_an_alloc_run() {
    use std::os::unix::process::CommandExt;
    use std::time::{Duration, Instant};
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("contend"))
        .args(["alloc", "--pattern", "pairs", "--allocator", "glibc", "--pairs", "2"])
        .args(["--iterations", "100000000", "--batch", "64"])
        .process_group(0)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let group = nix::unistd::Pid::from_raw(-(child.id() as i32));
    nix::sys::signal::kill(group, nix::sys::signal::Signal::SIGINT).unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "contend alloc ignored Ctrl-C");
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted by SIGINT"), "{err}");
}
