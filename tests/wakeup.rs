//! `contend wakeup` end to end: every primitive in threads and (where it
//! can) in processes, every placement, scheduling and its refusal without
//! permission, ftrace tagging, the histogram printout and the exports.
//! Runs are short (a few hundred rounds, no interval); nothing here asserts
//! a latency, only what must hold whatever the machine's speed.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;
use std::sync::Mutex;

mod common;
use common::as_nobody;

/// Tests that touch the global ftrace state run one at a time.
static TRACEFS: Mutex<()> = Mutex::new(());
/// Tests whose worker processes make scratch directories in /dev/shm run
/// one at a time, so one can count what the other left.
static SCRATCH: Mutex<()> = Mutex::new(());

fn contend() -> Command {
    Command::cargo_bin("contend").expect("binary built")
}

/// `contend wakeup` with short defaults (one run unless `--runs` is
/// given) and the JSON on stdout.
fn json(args: &[&str]) -> Value {
    let out = contend()
        .args(["wakeup", "--interval", "0", "--warmup", "10ms", "--export-json", "-"])
        .args(if args.contains(&"--runs") { &[][..] } else { &["--runs", "1"][..] })
        .args(args)
        .assert()
        .success();
    serde_json::from_slice(&out.get_output().stdout).expect("stdout is JSON")
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// What must hold for any pair's record: the requested samples, buckets
/// that add up to them, ordered statistics, and one-way times that fit
/// inside the round trip they are part of (per round, A's post <= B's
/// wake-up <= B's post <= A's wake-up, so every quantile of a one-way
/// time is at most the round trip's, within the histogram's 0.1%).
fn check_pair(pair: &Value, samples: u64, what: &str) {
    let rt = &pair["round_trip"]["summary"];
    assert_eq!(u(&rt["samples"]), samples, "{what}: {pair}");
    let histogram = contend::measure::latency::Distribution::from_export(&pair["round_trip"]).unwrap();
    assert_eq!(histogram.len(), samples, "{what}: the histogram holds every sample");
    assert!(pair["round_trip"].get("buckets").is_none(), "{what}: no bucket list (schema 5)");
    let order = ["min_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns"];
    for w in order.windows(2) {
        assert!(u(&rt[w[0]]) <= u(&rt[w[1]]), "{what}: {} > {}", w[0], w[1]);
    }
    assert!(!pair["round_trip"]["hdr_v2_base64"].as_str().unwrap().is_empty());
    for dir in ["a_to_b", "b_to_a"] {
        let ow = &pair[dir];
        assert_eq!(u(&ow["samples"]), samples, "{what}: {dir}");
        for q in ["p50_ns", "p99_ns", "max_ns"] {
            let (one, round) = (u(&ow[q]) as f64, u(&rt[q]) as f64);
            assert!(one <= round * 1.002 + 1.0, "{what}: {dir} {q} {one} above the round trip's {round}");
        }
    }
    assert_eq!(u(&pair["one_way"]["summary"]["samples"]), 2 * samples, "{what}: one-way pools both");
}

#[test]
fn late_rounds_are_counted_among_the_measured_rounds_only() {
    // An interval far below a round trip: nearly every round starts late,
    // during the warm-up too, which must not be counted against the
    // measured rounds.
    let out = contend()
        .args(["wakeup", "--pairs", "2", "--interval", "1us", "--warmup", "300ms", "--duration", "100ms"])
        .args(["--runs", "1", "--export-json", "-"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    for w in doc["warnings"].as_array().unwrap() {
        let m = w["message"].as_str().unwrap();
        if let Some((late, rest)) = m.split_once(" of ") {
            if let (Ok(late), Some(Ok(rounds))) =
                (late.parse::<u64>(), rest.split(' ').next().map(str::parse::<u64>))
            {
                assert!(late <= rounds, "{m}");
            }
        }
    }
    for p in doc["points"][0]["sample"]["pairs"].as_array().unwrap() {
        let samples = p["round_trip"]["summary"]["samples"].as_u64().unwrap();
        assert!(p["late_starts"].as_u64().unwrap() <= samples, "{p}");
    }
}

#[test]
fn every_primitive_ping_pongs_in_threads() {
    let d = json(&[
        "--primitive",
        "posix-sem,sysv-sem,futex,futex2,eventfd,pipe,condvar,mutex-handoff",
        "--iterations",
        "300",
    ]);
    assert_eq!(d["family"], "wakeup");
    assert!(d["environment"]["kernel"].is_string());
    assert!(u(&d["clock"]["median_read_ns"]) > 0);
    let points = d["points"].as_array().unwrap();
    // futex2 is skipped by the registry before Linux 6.7: then the run
    // refuses it instead, which the next assertion would show.
    assert_eq!(points.len(), 8);
    for p in points {
        let name = p["point"]["primitive"].as_str().unwrap();
        let pairs = p["sample"]["pairs"].as_array().unwrap();
        assert_eq!(pairs.len(), 1);
        check_pair(&pairs[0], 300, name);
        assert!(p["sample"]["interrupted"].is_null());
    }
}

/// Histograms are stored compactly (HdrHistogram's encoding, schema 5): a
/// six-point export of two pairs and two runs, 20,000 round trips each,
/// is a few hundred KB (the bucket lists it carried before made it 13.5
/// MB), and a reader's histogram holds every round trip.
#[test]
fn a_six_point_export_with_histograms_stays_small() {
    let out = contend()
        .args(["wakeup", "--interval", "0", "--warmup", "10ms", "--count-futex", "off", "--histogram"])
        .args(["--primitive", "posix-sem,sysv-sem,futex,eventfd,pipe,condvar", "--pairs", "2"])
        .args(["--iterations", "20000", "--runs", "2", "--export-json", "-"])
        .assert()
        .success();
    let bytes = &out.get_output().stdout;
    assert!(bytes.len() < 5 << 20, "{} bytes", bytes.len());
    let d: Value = serde_json::from_slice(bytes).unwrap();
    assert_eq!(d["points"].as_array().unwrap().len(), 6);
    for p in d["points"].as_array().unwrap() {
        let merged =
            contend::measure::latency::Distribution::from_export(&p["sample"]["round_trip"]).unwrap();
        assert_eq!(merged.len(), 2 * 2 * 20_000, "two pairs, two runs: {}", p["point"]);
    }
}

#[test]
fn process_pairs_run_every_shareable_primitive_and_leave_nothing() {
    let _serial = SCRATCH.lock().unwrap_or_else(|e| e.into_inner());
    let shm_before = contend_dirs();
    let d = json(&[
        "--primitive",
        "posix-sem,sysv-sem,futex,futex2,eventfd,pipe,condvar",
        "--proc-pairs",
        "2",
        "--iterations",
        "200",
    ]);
    for p in d["points"].as_array().unwrap() {
        let name = p["point"]["primitive"].as_str().unwrap();
        assert_eq!(p["point"]["mode"], "processes");
        let pairs = p["sample"]["pairs"].as_array().unwrap();
        assert_eq!(pairs.len(), 2, "{name}");
        for pair in pairs {
            check_pair(pair, 200, name);
        }
        // The workers' CPU time was read while they were alive.
        assert!(p["sample"]["process"]["cpu_s"].as_f64().unwrap() > 0.0, "{name}");
    }
    assert_eq!(contend_dirs(), shm_before, "the scratch directory is removed");
}

fn contend_dirs() -> usize {
    std::fs::read_dir("/dev/shm").map_or(0, |d| {
        d.filter(|e| e.as_ref().is_ok_and(|e| e.file_name().to_string_lossy().starts_with("contend-")))
            .count()
    })
}

#[test]
fn every_placement_runs_and_is_honoured() {
    if cpus() < 2 {
        common::skip("needs two CPUs");
        return;
    }
    let d = json(&[
        "--primitive",
        "futex",
        "--affinity",
        "same,cross,none,spread",
        "--pairs",
        "2",
        "--cpus",
        "0-1",
        "--iterations",
        "200",
    ]);
    let points = d["points"].as_array().unwrap();
    assert_eq!(points.len(), 4);
    for p in points {
        let affinity = p["point"]["affinity"].as_str().unwrap();
        for pair in p["sample"]["pairs"].as_array().unwrap() {
            check_pair(pair, 200, affinity);
            let (a, b) = (pair["cpus_a"].as_str().unwrap(), pair["cpus_b"].as_str().unwrap());
            let same = pair["same_cpu_pct"].as_f64().unwrap();
            match affinity {
                "same" => assert!(a == b && same == 100.0, "{affinity}: {a} {b} {same}"),
                "cross" | "spread" => assert!(a != b && same == 0.0, "{affinity}: {a} {b} {same}"),
                // Unpinned: wherever the scheduler chose, within the list.
                _ => assert!(["0", "1", "0-1"].contains(&a) && ["0", "1", "0-1"].contains(&b)),
            }
        }
    }
    // spread puts pair 1's partners the other way round.
    let spread = &points[3]["sample"]["pairs"];
    assert_eq!(spread[0]["cpus_a"], "0");
    assert_eq!(spread[1]["cpus_a"], "1");
}

#[test]
fn realtime_policy_runs_as_root_and_is_refused_clearly_otherwise() {
    if common::root_or_skip("SCHED_FIFO") {
        let d = json(&[
            "--primitive",
            "futex",
            "--policy",
            "fifo",
            "--priority",
            "10",
            "--mlock",
            "--iterations",
            "100",
        ]);
        let p = &d["points"][0];
        assert_eq!(p["point"]["sched"]["policy"], "fifo");
        assert_eq!(p["point"]["sched"]["priority"], 10);
        check_pair(&p["sample"]["pairs"][0], 100, "fifo");
    }
    if let Some(out) = as_nobody(&["wakeup", "--policy", "rr", "--priority", "20", "-n", "10"]) {
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("not permitted") && err.contains("CAP_SYS_NICE"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    if let Some(out) = as_nobody(&["wakeup", "--mlock", "-n", "10"]) {
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("ulimit -l"));
    }
}

fn tracing_on() -> Option<String> {
    std::fs::read_to_string("/sys/kernel/tracing/tracing_on").ok().map(|s| s.trim().to_string())
}

#[test]
fn outliers_are_tagged_in_ftrace_and_tracing_is_restored() {
    let _serial = TRACEFS.lock().unwrap_or_else(|e| e.into_inner());
    // Unprivileged (run as nobody from root): refused before measuring,
    // naming tracefs, with a refusal's status (2), as a bad flag's.
    if let Some(out) = as_nobody(&["wakeup", "--trace-threshold", "1us", "-n", "10"]) {
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("tracefs"));
    }
    if !common::root_or_skip("tracefs") {
        return;
    }
    // A threshold of 1 ns tags every round trip.
    let d = json(&["--primitive", "pipe", "--trace-threshold", "1ns", "--iterations", "50"]);
    let Some(before) = tracing_on() else {
        panic!("a successful traced run must have mounted tracefs");
    };
    assert_eq!(d["trace"]["tagged"], 50);
    assert_eq!(d["trace"]["stopped"], false);
    let buffer = std::fs::read_to_string("/sys/kernel/tracing/trace").unwrap();
    assert!(buffer.contains("contend-wakeup: pair 0 cpu"), "the tags are in the buffer");
    assert_eq!(tracing_on().unwrap(), before, "tracing_on is put back");

    // --trace-stop freezes the buffer at the first tag and says where to
    // read it; --trace-sched events are switched off again afterwards.
    let sched = "/sys/kernel/tracing/events/sched/sched_switch/enable";
    let sched_before = std::fs::read_to_string(sched).unwrap();
    contend()
        .args(["wakeup", "-P", "futex", "-n", "50", "--interval", "0", "--warmup", "0"])
        .args(["--trace-threshold", "1ns", "--trace-stop", "--trace-sched"])
        .assert()
        .success()
        .stdout(predicate::str::contains("tracing was stopped at the first one"))
        .stdout(predicate::str::contains("/sys/kernel/tracing/trace"));
    assert_eq!(tracing_on().unwrap(), "0", "stopped on purpose stays stopped");
    assert_eq!(std::fs::read_to_string(sched).unwrap(), sched_before);
    std::fs::write("/sys/kernel/tracing/tracing_on", &before).unwrap();
}

#[test]
fn histogram_rows_add_up_to_the_samples() {
    let out = contend()
        .args(["wakeup", "-P", "eventfd", "-n", "400", "--runs", "1", "--interval", "0", "--pairs", "2"])
        .args(["--histogram", "2us"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let block = text.split("round-trip histogram").nth(1).expect("a histogram block");
    let mut per_pair = [0u64; 2];
    for line in block.lines().skip(1) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let counts = match fields.first() {
            Some(&"#") if fields.get(1) == Some(&"overflows") => &fields[2..],
            Some(&"#") => continue,
            Some(_) => &fields[1..],
            None => break,
        };
        for (j, c) in counts.iter().enumerate() {
            per_pair[j] += c.parse::<u64>().unwrap();
        }
    }
    assert_eq!(per_pair, [400, 400], "{block}");
}

#[test]
fn csv_and_markdown_exports_have_a_row_per_pair() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, md) = (dir.path().join("w.csv"), dir.path().join("w.md"));
    contend()
        .args(["wakeup", "-P", "futex,pipe", "-n", "100", "--interval", "0", "--pairs", "2"])
        .arg("--export-csv")
        .arg(&csv)
        .arg("--export-markdown")
        .arg(&md)
        .assert()
        .success();
    let csv = std::fs::read_to_string(csv).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("primitive,mode,affinity,pairs,pair,"));
    // Two points, each two pairs plus an "all" row.
    assert_eq!(lines.len(), 1 + 2 * 3);
    assert!(lines.iter().filter(|l| l.contains(",all,")).count() == 2);
    let md = std::fs::read_to_string(md).unwrap();
    assert!(md.contains("| primitive") && md.contains("| pipe"));
}

#[test]
fn bad_input_is_refused_with_status_2() {
    let cases: &[(&[&str], &str)] = &[
        (&["--proc-pairs", "1", "-P", "mutex-handoff"], "work between processes"),
        (&["--proc-pairs", "2", "--pairs", "2"], "cannot be used with"),
        (&["-P", "smoke"], "unknown primitive"),
        (&["--priority", "5"], "needs --policy fifo or rr"),
        (&["--policy", "fifo", "--priority", "100"], "outside 1..=99"),
        (&["--policy", "idle"], "unknown --policy"),
        (&["--affinity", "near"], "unknown affinity"),
        (&["--cpus", "3-1"], "runs backwards"),
        (&["--cpus", "4095"], "may run on"),
        (&["--cpus", "0", "--affinity", "cross"], "only CPU 0"),
        (&["--cpus", "0", "--exclude-cpus", "0"], "no CPU left"),
        (&["--pairs", "0"], ">= 1"),
        (&["--iterations", "0"], "at least 1"),
        (&["--iterations", "5", "--duration", "1s"], "cannot be used with"),
        (&["--trace-stop"], "--trace-threshold"),
        (&["--histogram", "0"], "above 0"),
    ];
    for (args, says) in cases {
        contend()
            .arg("wakeup")
            .args(*args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(*says))
            .stderr(predicate::str::contains("panicked").not());
    }
}

#[test]
fn list_primitives_says_which_cross_processes() {
    contend()
        .args(["list", "primitives"])
        .assert()
        .success()
        .stdout(predicate::str::contains("mutex-handoff  -"))
        .stdout(predicate::str::contains("sysv-sem       yes"));
}

#[test]
fn interrupt_reports_what_was_measured() {
    let _serial = SCRATCH.lock().unwrap_or_else(|e| e.into_inner());
    use nix::sys::signal::{kill, Signal};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.json");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("contend"))
        .args(["wakeup", "-P", "futex", "--proc-pairs", "1", "--duration", "30s", "--interval", "100us"])
        .arg("--export-json")
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(800));
    kill(nix::unistd::Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    let d: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let s = &d["points"][0]["sample"];
    assert_eq!(s["interrupted"], "SIGINT");
    assert!(u(&s["round_trip"]["summary"]["samples"]) > 0);
}

#[test]
fn runs_merge_into_one_distribution_with_an_interval_on_the_median() {
    let dir = tempfile::tempdir().unwrap();
    let (plot, gnuplot) = (dir.path().join("w.svg"), dir.path().join("w.dat"));
    let d = json(&[
        "-P",
        "futex,pipe",
        "-n",
        "200",
        "--runs",
        "2",
        "--plot",
        plot.to_str().unwrap(),
        "--export-gnuplot",
        gnuplot.to_str().unwrap(),
    ]);
    assert_eq!(d["schema_version"], 5);
    for p in d["points"].as_array().unwrap() {
        // Two measured runs (plus, as root, the counting run, which
        // stays out of the distribution and the statistics).
        let all = p["runs"].as_array().unwrap();
        let runs: Vec<&Value> = all.iter().filter(|r| r["status"] == "measured").collect();
        assert_eq!(runs.len(), 2);
        assert!(all.len() - runs.len() <= 1 || all.iter().any(|r| r["status"] == "rejected"));
        assert_eq!(p["stats"]["n"], 2);
        // The sample holds every round trip of both runs.
        assert_eq!(u(&p["sample"]["round_trip"]["summary"]["samples"]), 400);
        for run in &runs {
            check_pair(&run["pairs"][0], 200, "a run");
        }
        let p50s: Vec<f64> =
            runs.iter().map(|r| r["round_trip"]["summary"]["p50_ns"].as_f64().unwrap()).collect();
        assert_eq!(p["stats"]["mean"].as_f64().unwrap(), (p50s[0] + p50s[1]) / 2.0);
    }
    let svg = std::fs::read_to_string(plot).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("percentile") && svg.contains("futex none"));
    let dat = std::fs::read_to_string(gnuplot).unwrap();
    assert_eq!(dat.matches("# futex").count() + dat.matches("# pipe").count(), 2);
}
