//! The knobs of issue 38 that reach outside contend: glibc's mutex spin
//! count (`--glibc-spin`, a child contend per run with GLIBC_TUNABLES set)
//! reaches glibc as written (its effect on futex calls: tests/glibc_spin.rs);
//! the futex hash's size reaches the kernel; workers spread over locks;
//! the environment records what the kernel decided.

mod common;

use serde_json::Value;

#[test]
fn glibc_reads_the_tunable_as_contend_writes_it() {
    // glibc ignores a tunable it does not know, silently: ask its loader
    // what it makes of the string a child gets.
    let loader = std::path::Path::new("/lib64/ld-linux-x86-64.so.2");
    if !loader.exists() {
        common::skip("no x86-64 glibc loader to ask");
        return;
    }
    let out = std::process::Command::new(loader)
        .arg("--list-tunables")
        .env("GLIBC_TUNABLES", contend::family::lock::child::tunables(7))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("glibc.pthread.mutex_spin_count: 7 "), "{text}");
}

#[test]
fn glibc_spin_applies_only_where_glibc_spins() {
    common::refused(
        &["lock", "--lock", "futex", "--glibc-spin", "100"],
        "--glibc-spin does not apply to futex",
    );
    common::refused(&["lock", "--lock", "pthread-adaptive", "--glibc-spin", "40000"], "32767");
}

#[test]
fn the_environment_records_what_the_kernel_decided() {
    let doc = common::lock_json(&["--threads", "2", "--hold", "0"]);
    let k = &doc["environment"]["kernel_choices"];
    // Each answer comes with where it came from, or why there is none.
    assert!(k["preemption_source"].as_str().is_some_and(|s| !s.is_empty()), "{k}");
    assert!(k["futex_hash_note"].as_str().is_some_and(|s| !s.is_empty()), "{k}");
    assert!(k["slice_extension_note"].as_str().is_some_and(|s| !s.is_empty()), "{k}");
    if let Some(model) = k["preemption"].as_str() {
        assert!(["none", "voluntary", "full", "lazy"].iter().any(|m| model.starts_with(m)), "{model}");
    }
    // A threaded process on a kernel with private hashes has one (or the
    // global hash: 0); either is a power of two or 0.
    if let Some(slots) = k["futex_hash_slots"].as_u64() {
        assert!(slots == 0 || slots.is_power_of_two(), "{slots}");
    }
}

#[test]
fn the_futex_hash_size_reaches_the_kernel() {
    // Each point's run reads the size back from the kernel after its
    // window: had the prctl been skipped or refused, it would read the
    // kernel's default (16 on this host) for both.
    let probe = common::lock_json(&["--threads", "2", "--hold", "0"]);
    if probe["environment"]["kernel_choices"]["futex_hash_slots"].is_null() {
        common::skip("this kernel has no private futex hash (Linux 6.17)");
        return;
    }
    let doc = common::lock_json(&["--threads", "4", "--locks", "2", "--hold", "0", "--futex-hash", "4,64"]);
    for p in doc["points"].as_array().unwrap() {
        let asked = p["point"]["futex_hash"].as_u64().unwrap();
        assert_eq!(p["sample"]["futex_hash_slots"].as_u64(), Some(asked), "{}", p["point"]);
    }
    common::refused(
        &["lock", "--procs", "2", "--futex-hash", "4"],
        "--futex-hash sizes a process's private hash",
    );
    common::refused(&["lock", "--futex-hash", "12"], "power of two");
}

#[test]
fn workers_spread_over_locks_never_meet() {
    // Two threads, each with a lock of its own, never wait: the futex
    // lock's own counters stay at zero. On one lock they contend. The
    // witnesses of both locks still have to add up (mutual exclusion).
    let doc = common::lock_json(&["--lock", "futex", "--threads", "2", "--locks", "1,2", "--hold", "1us"]);
    let contended = |locks: u64| {
        // A point on one lock leaves `locks` out of the export.
        let on = |p: &&Value| p["point"]["locks"].as_u64().unwrap_or(1) == locks;
        let p = doc["points"].as_array().unwrap().iter().find(on).unwrap();
        let c = &p["sample"]["lock_counters"];
        c["spins"].as_u64().unwrap() + c["waits"].as_u64().unwrap()
    };
    assert_eq!(contended(2), 0, "threads on locks of their own waited");
    assert!(contended(1) > 0, "two threads on one lock never waited");
    common::refused(&["lock", "--threads", "2", "--locks", "4"], "some locks would have no worker");
    common::refused(&["lock", "--lock", "flock", "--procs", "2", "--locks", "2"], "cannot be made 2 times");
}
