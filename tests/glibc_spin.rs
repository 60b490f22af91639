//! `--glibc-spin` changes what glibc does, not just a label: spinning
//! saves the futex calls that sleeping costs. A test binary of its own, so
//! that no other test of the suite runs beside it: it needs two threads
//! that meet inside the lock, which a machine kept busy still gives (both
//! sleep), but not one crowded with the suite's other contend runs.

mod common;

use serde_json::Value;

/// Futex calls per critical section of each point, by glibc spin count.
fn futex_per_cs(doc: &Value) -> Vec<(u64, f64)> {
    doc["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let counted =
                p["runs"].as_array().unwrap().iter().find(|r| r["futex"].is_object()).expect("counted");
            let calls = counted["futex"]["calls"].as_f64().unwrap();
            let cs = counted["acquisitions"].as_f64().unwrap();
            (p["point"]["glibc_spin"].as_u64().unwrap(), calls / cs)
        })
        .collect()
}

#[test]
fn glibcs_spin_count_saves_futex_calls() {
    if !common::root_or_skip("the futex syscall tracepoints") {
        return;
    }
    // Two threads that hold 100 µs and idle 100 µs, both asleep (nanosleep):
    // they leave the CPU either way, so they meet inside the lock however
    // busy the machine is. A waiter that may not spin sleeps in FUTEX_WAIT
    // and is woken with FUTEX_WAKE (about 2 calls a critical section); one
    // that may spin 32767 times is still spinning when the holder leaves
    // for its idle sleep, and takes the lock without a call. If the
    // tunable never reached glibc (or the child), both would call futex as
    // often. (A busy hold would not do: on a loaded machine the two threads
    // take turns on one CPU's time slices and hardly ever meet.)
    // On a loaded machine a spinner preempted mid-spin can run out of
    // spins before the holder, asleep, is scheduled again; one attempt in
    // four did so with both CPUs kept busy. So up to three attempts, each a
    // separate contend run: a knob that does nothing never shows the saving
    // (both counts near 2), so it fails all three.
    let mut seen = Vec::new();
    for _ in 0..3 {
        let doc = common::lock_json(&[
            "--lock",
            "pthread-adaptive",
            "--threads",
            "2",
            "--hold",
            "sleep:100us",
            "--idle",
            "sleep:100us",
            "--glibc-spin",
            "0,32767",
            "--count-futex",
            "inline",
        ]);
        let per_cs = futex_per_cs(&doc);
        let at = |spin: u64| per_cs.iter().find(|(s, _)| *s == spin).unwrap().1;
        assert!(at(0) > 0.5, "without spinning, waiters should sleep: {per_cs:?}");
        if at(32_767) < at(0) / 2.0 {
            return;
        }
        seen.push(per_cs);
    }
    panic!("spinning should save most futex calls, in one of three runs at least: {seen:?}");
}
