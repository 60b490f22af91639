//! `--glibc-spin` changes what glibc does, not just a label: spinning
//! saves the futex calls that sleeping costs. A test binary of its own, so
//! that no other test of the suite runs beside it while its two threads
//! hold both CPUs.

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
    // Two threads that hold 2 µs and idle 1 µs, both busy, run as
    // SCHED_FIFO so that they take both CPUs from whatever else runs and
    // meet inside the lock however busy the machine is (under SCHED_OTHER,
    // with both CPUs kept busy, they shared one and hardly met). A waiter
    // that may not spin sleeps in FUTEX_WAIT and its holder wakes it (0.3
    // to 0.7 calls a critical section here); one that may spin 32767
    // times takes the lock when the 2 µs hold ends, without a call (0.001).
    // If the tunable never reached glibc (or the child), both would call
    // futex as often.
    // The hold must be shorter than the spin on any CPU. glibc counts the
    // spin in PAUSE instructions, whose cost varies by two orders of
    // magnitude: 32767 take 760 µs on this host, but about 30 µs where a
    // PAUSE costs 1 ns. So sleeping holds of 100 µs (which took ~150 µs),
    // used first, saved nothing on such a CPU, and this test failed there.
    // Up to three attempts, each a separate contend run: a knob that does
    // nothing never shows the saving, so it fails all three.
    let mut seen = Vec::new();
    for _ in 0..3 {
        let doc = common::lock_json_under(
            &["chrt", "--fifo", "1"],
            &[
                "--lock",
                "pthread-adaptive",
                "--threads",
                "2",
                "--hold",
                "2us",
                "--idle",
                "1us",
                "--glibc-spin",
                "0,32767",
                "--count-futex",
                "inline",
            ],
        );
        let per_cs = futex_per_cs(&doc);
        let at = |spin: u64| per_cs.iter().find(|(s, _)| *s == spin).unwrap().1;
        if at(0) > 0.1 && at(32_767) < at(0) / 4.0 {
            return;
        }
        seen.push(per_cs);
    }
    panic!(
        "without spinning waiters should sleep (over 0.1 futex calls a critical section), and \
         spinning 32767 times should save three in four of those calls, in one of three runs \
         at least: {seen:?}"
    );
}
