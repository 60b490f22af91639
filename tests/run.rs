//! `contend run` end to end, with the interposer preloaded into real
//! processes: the pthread checks (`contend __interpose-check`: the lock
//! conformance workload through glibc's API, statically initialized,
//! recursive and error-checking mutexes, a condition-variable stress with
//! timed waits, fork in a multithreaded program) under every lock that
//! fits in a pthread_mutex_t; a lock that does not exclude fails them;
//! sysbench's threads test profiled; sysbench's mutex test with three
//! locks; pigz profiled under three locks, its output checked; and what
//! is refused.
//!
//! scripts/test.sh builds the interposer (`cargo build --release
//! --workspace`) and installs sysbench and pigz from Debian.

mod common;

use assert_cmd::Command;
use locks::in_mutex::Swap;
use serde_json::Value;
use std::path::PathBuf;

fn contend() -> Command {
    Command::cargo_bin("contend").expect("binary built")
}

/// The interposer, where `cargo build --release --workspace` leaves it.
fn interposer() -> PathBuf {
    let so = assert_cmd::cargo::cargo_bin("contend").with_file_name("libcontend_interpose.so");
    assert!(so.is_file(), "{} is missing: run `cargo build --release --workspace` first", so.display());
    so
}

/// `contend run ARGS -- PROGRAM...` with `--export-json` to a file (and
/// one run unless ARGS say otherwise): the document.
fn run_json(args: &[&str], program: &[&str]) -> Value {
    interposer();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let runs: &[&str] = if args.contains(&"--runs") { &[] } else { &["--runs", "1"] };
    let out = contend()
        .args(["run", "--count-futex", "off", "--no-progress", "--max-slowdown", "0", "--export-json"])
        .arg(&json)
        .args(runs)
        .args(args)
        .arg("--")
        .args(program)
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .expect("contend runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "contend run {args:?} -- {program:?}: {err}");
    let text = std::fs::read(&json).unwrap_or_else(|e| panic!("no export ({e}): {err}"));
    serde_json::from_slice(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {err}"))
}

/// The median run of `lock` in an export.
fn sample<'a>(doc: &'a Value, lock: &str) -> &'a Value {
    let points = doc["points"].as_array().expect("points");
    let p =
        points.iter().find(|p| p["point"]["lock"] == lock).unwrap_or_else(|| panic!("no point for {lock}"));
    &p["sample"]
}

fn check_program(what: &str, threads: u32) -> Vec<String> {
    let exe = assert_cmd::cargo::cargo_bin("contend").display().to_string();
    vec![exe, "__interpose-check".into(), what.into(), "--threads".into(), threads.to_string()]
}

/// FIFO locks convoy with more runnable threads than CPUs (`Caps::fifo`);
/// their checks run with 2 threads.
fn fifo(s: Swap) -> bool {
    s.caps().is_some_and(|c| c.fifo)
}

#[test]
fn every_lock_that_fits_passes_the_pthread_checks_through_the_interposer() {
    for check in ["exclusion", "kinds", "condvar", "fork"] {
        for (group, threads) in [(false, 4), (true, 2)] {
            let locks: Vec<&str> = Swap::all().filter(|&s| fifo(s) == group).map(|s| s.name()).collect();
            let list = if group { format!("pthread,{}", locks.join(",")) } else { locks.join(",") };
            let program = check_program(check, threads);
            let argv: Vec<&str> = program.iter().map(String::as_str).collect();
            let doc = run_json(&["--lock", &list], &argv);
            for lock in list.split(',') {
                let s = sample(&doc, lock);
                let what = format!("{check} under {lock}");
                assert_eq!(s["lock"], lock, "{what}");
                let procs = s["processes"].as_u64().unwrap();
                assert_eq!(procs, if check == "fork" { 2 } else { 1 }, "{what}: processes that reported");
                let inits = &s["inits"];
                let to_glibc = s["to_glibc"].as_u64().unwrap();
                let swapped = s["swapped"].as_u64().unwrap();
                if lock == "pthread" {
                    // Nothing swapped or classified; every acquisition
                    // went to glibc, and was counted.
                    assert_eq!(inits["swapped"], 0, "{what}");
                    assert_eq!(swapped, 0, "{what}");
                    assert!(to_glibc > 0, "{what}");
                    continue;
                }
                // The lock ran (kinds uses only glibc's kinds).
                assert_eq!(swapped > 0, check != "kinds", "{what}: {swapped} swapped acquisitions");
                match check {
                    "exclusion" => {
                        // pthread and pthread-adaptive are swapped;
                        // pthread-pi and pthread-robust stay glibc's.
                        assert!(inits["swapped"].as_u64().unwrap() >= 2, "{what}: {inits}");
                        assert!(inits["robust"].as_u64().unwrap() >= 1, "{what}: {inits}");
                        assert!(inits["pi_or_pp"].as_u64().unwrap() >= 1, "{what}: {inits}");
                        assert!(to_glibc > 0, "{what}: the robust and PI mutexes went to glibc");
                    }
                    "kinds" => {
                        assert_eq!(
                            (inits["recursive"].as_u64(), inits["errorcheck"].as_u64()),
                            (Some(1), Some(1))
                        );
                        // Two recursive locks and one error-checking lock
                        // succeed; the refused relock is no acquisition.
                        assert_eq!(to_glibc, 3, "{what}: recursive and error-checking locks go to glibc");
                    }
                    _ => assert!(inits["swapped"].as_u64().unwrap() >= 1, "{what}: {inits}"),
                }
            }
        }
    }
}

#[test]
fn a_lock_that_does_not_exclude_fails_the_checks() {
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("contend"))
        .args(["__interpose-check", "exclusion", "--threads", "4"])
        .env("LD_PRELOAD", interposer())
        .env("CONTEND_RUN_LOCK", "noop")
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("succeeded in a second thread while the lock was held"), "{err}");
}

#[test]
fn a_forked_child_reports_its_own_profile() {
    let program = check_program("fork", 4);
    let argv: Vec<&str> = program.iter().map(String::as_str).collect();
    let doc = run_json(&["--profile", "--lock", "pthread,adaptive"], &argv);
    for lock in ["pthread", "adaptive"] {
        let s = sample(&doc, lock);
        let mutexes = s["mutexes"].as_array().unwrap();
        let pids: std::collections::BTreeSet<u64> =
            mutexes.iter().map(|m| m["pid"].as_u64().unwrap()).collect();
        assert_eq!(pids.len(), 2, "{lock}: both processes profiled: {pids:?}");
        // The parent's hammered mutex: the most acquired one. The child
        // starts from zero, so the same address in the child, if locked
        // there at all, is not it.
        let top = mutexes.iter().max_by_key(|m| m["acquisitions"].as_u64().unwrap()).unwrap();
        // contend keeps its symbol table but no line tables (Cargo.toml's
        // release profile): the site is a function of the locks crate,
        // named from the symbol table (the function Mutex::lock was
        // inlined into, perhaps). Names with file and line, from DWARF,
        // are tests/profile.rs's.
        let site = top["site"].as_str().unwrap();
        assert!(site.starts_with("locks::") && site.contains("(contend)"), "{lock}: {site}");
        let twin = mutexes.iter().filter(|m| m["address"] == top["address"] && m["pid"] != top["pid"]);
        assert_eq!(twin.count(), 0, "{lock}: the child reported its parent's counts");
        // The child's ping-pong: 1000 turns through one mutex.
        let child = mutexes.iter().filter(|m| m["pid"] != top["pid"]);
        assert!(child.clone().any(|m| m["acquisitions"].as_u64().unwrap() >= 1000), "{lock}: {mutexes:?}");
    }
}

fn installed(program: &str) -> bool {
    let found = common::which(program).is_some();
    if !found {
        common::skip(&format!("{program} is not installed (scripts/test.sh installs it)"));
    }
    found
}

/// `--output null` sends the program's stdout and stderr nowhere, and
/// --metric still reads them; the default passes them on.
#[test]
fn the_programs_output_is_passed_on_or_dropped_and_the_metric_still_read() {
    let program = ["sh", "-c", "echo rate 42; echo to-stderr >&2"];
    let run = |args: &[&str]| {
        contend()
            .args(["run", "--count-futex", "off", "--no-progress", "--runs", "2", "--max-slowdown", "0"])
            .args(args)
            .arg("--")
            .args(program)
            .timeout(std::time::Duration::from_secs(600))
            .output()
            .expect("contend runs")
    };
    let shown = run(&[]);
    let (out, err) = (String::from_utf8_lossy(&shown.stdout), String::from_utf8_lossy(&shown.stderr));
    assert!(shown.status.success(), "{err}");
    // Two rounds or more (a run re-made for load prints again).
    assert!(out.matches("rate 42").count() >= 2, "every execution's output, by default: {out}");
    assert!(err.contains("to-stderr"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let quiet =
        run(&["--output", "null", "--metric", "rate ([0-9]+)", "--export-json", json.to_str().unwrap()]);
    let (out, err) = (String::from_utf8_lossy(&quiet.stdout), String::from_utf8_lossy(&quiet.stderr));
    assert!(quiet.status.success(), "{err}");
    assert!(!out.contains("rate 42") && !err.contains("to-stderr"), "dropped: {out}\n{err}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(sample(&doc, "pthread")["metric"].as_f64(), Some(42.0), "read all the same");
    assert_eq!(doc["spec"]["program_output"], "null");
    let dropped = run(&["--output", "null"]);
    assert!(dropped.status.success() && !String::from_utf8_lossy(&dropped.stdout).contains("rate 42"));
}

/// hyperfine's habits: `--warmup` executions come first and count in no
/// result; `--prepare` and `--conclude` wrap every execution (warm-ups
/// too), each seeing the execution's lock; `--cleanup` runs once, last;
/// `--output FILE` gathers every execution's stdout and stderr there, and
/// nothing of it reaches contend's streams.
#[test]
fn warmup_prepare_conclude_cleanup_and_output_to_a_file() {
    interposer();
    let dir = tempfile::tempdir().unwrap();
    let (log, out, json) =
        (dir.path().join("hooks.log"), dir.path().join("out.txt"), dir.path().join("run.json"));
    let hook = |word: &str| format!("echo {word} $CONTEND_LOCK >> '{}'", log.display());
    let done = contend()
        .args(["run", "--count-futex", "off", "--no-progress", "--runs", "2", "--max-slowdown", "0"])
        .args(["--lock", "pthread,tas", "--warmup", "2", "--prepare", &hook("prepare")])
        .args(["--conclude", &hook("conclude"), "--cleanup", &hook("cleanup")])
        .args(["--output", out.to_str().unwrap(), "--export-json", json.to_str().unwrap()])
        .args(["--", "sh", "-c", "echo to-stdout; echo to-stderr >&2"])
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .expect("contend runs");
    let (stdout, stderr) = (String::from_utf8_lossy(&done.stdout), String::from_utf8_lossy(&done.stderr));
    assert!(done.status.success(), "{stderr}");
    assert!(!stdout.contains("to-stdout") && !stderr.contains("to-stderr"), "{stdout}\n{stderr}");
    let lines: Vec<String> = std::fs::read_to_string(&log).unwrap().lines().map(str::to_owned).collect();
    let (last, wrapped) = lines.split_last().unwrap();
    assert_eq!(last.trim(), "cleanup", "once, last: {lines:?}");
    assert_eq!(wrapped.len() % 2, 0, "{lines:?}");
    for pair in wrapped.chunks(2) {
        let lock = pair[0].strip_prefix("prepare ").unwrap_or_else(|| panic!("{lines:?}"));
        assert_eq!(pair[1], format!("conclude {lock}"), "{lines:?}");
    }
    let executions = wrapped.len() / 2;
    assert_eq!(&wrapped[..4], ["prepare pthread", "conclude pthread", "prepare pthread", "conclude pthread"]);
    let gathered = std::fs::read_to_string(&out).unwrap();
    assert_eq!(gathered.matches("to-stdout").count(), executions, "{gathered}");
    assert_eq!(gathered.matches("to-stderr").count(), executions, "{gathered}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let runs: usize =
        doc["points"].as_array().unwrap().iter().map(|p| p["runs"].as_array().unwrap().len()).sum();
    assert_eq!(runs + 2, executions, "every execution but the two warm-ups is in the export");
    assert_eq!(doc["spec"]["warmup"], 2);
    assert_eq!(doc["spec"]["program_output"]["file"], out.to_str().unwrap());
}

/// A `--prepare` that fails ends the run, naming it; a `--cleanup` that
/// fails is a warning, and the results stand.
#[test]
fn a_failing_prepare_ends_the_run_and_a_failing_cleanup_is_a_warning() {
    interposer();
    let failed = contend()
        .args([
            "run",
            "--count-futex",
            "off",
            "--no-progress",
            "--runs",
            "1",
            "--prepare",
            "exit 3",
            "--",
            "true",
        ])
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .expect("contend runs");
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert_eq!(failed.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("--prepare `exit 3` exited 3"), "{stderr}");
    let doc = run_json(&["--cleanup", "exit 4"], &["true"]);
    let warned = doc["warnings"].as_array().unwrap().iter().any(|w| {
        w["kind"] == "after_run" && w["message"].as_str().unwrap().contains("--cleanup `exit 4` exited 4")
    });
    assert!(warned, "{}", doc["warnings"]);
}

#[test]
fn sysbench_threads_profiled_names_its_contended_mutex_and_its_wait() {
    if !installed("sysbench") {
        return;
    }
    let doc = run_json(
        &["--profile"],
        // Bounded by work, not time: 200 events of 100 acquisitions each,
        // however slowly a loaded machine runs them (`--time=1` once gave
        // exactly 1000 acquisitions under load).
        &[
            "sysbench",
            "threads",
            "--threads=4",
            "--thread-locks=1",
            "--thread-yields=100",
            "--events=200",
            "--time=0",
            "run",
        ],
    );
    let s = sample(&doc, "pthread");
    let top = &s["mutexes"][0];
    let n = |k: &str| top[k].as_u64().unwrap_or_else(|| panic!("{k} in {top}"));
    assert!(n("acquisitions") >= 20_000, "{top}");
    assert!(n("contended") > 0 && n("wait_ns") > 0, "the contended mutex comes first: {top}");
    assert!(n("p50_wait_ns") <= n("p99_wait_ns") && n("p99_wait_ns") <= n("max_wait_ns"), "{top}");
    assert!(top["mean_hold_ns"].as_f64().unwrap() > 0.0, "{top}");
    let site = top["site"].as_str().unwrap();
    assert!(site.contains("sysbench"), "named by its call site in sysbench: {site}");
    assert!(top["module"].as_str().unwrap().ends_with("sysbench"), "{top}");
    // And the table says it.
    let out = contend()
        .args(["run", "--profile", "--runs", "1", "--count-futex", "off", "--top", "3", "--"])
        .args(["sysbench", "threads", "--threads=4", "--thread-locks=1", "--events=200", "--time=0", "run"])
        .output()
        .unwrap();
    // The table is on stderr: stdout is sysbench's.
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("profile under pthread") && text.contains("sysbench+0x"), "{text}");
}

#[test]
fn sysbench_mutex_runs_with_three_locks_and_a_metric() {
    if !installed("sysbench") {
        return;
    }
    let doc = run_json(
        &["--lock", "pthread,adaptive,mcs", "--runs", "2", "--metric", r"total number of events: *([0-9]+)"],
        &[
            "sysbench",
            "mutex",
            "--threads=2",
            "--mutex-num=1",
            "--mutex-locks=20000",
            "--mutex-loops=100",
            "run",
        ],
    );
    for lock in ["pthread", "adaptive", "mcs"] {
        let s = sample(&doc, lock);
        assert_eq!(s["metric"].as_f64(), Some(2.0), "{lock}: sysbench's 2 events, read with --metric");
    }
    let vs = doc["vs_glibc"].as_array().unwrap();
    assert_eq!(vs.len(), 2, "{vs:?}");
    for v in vs {
        assert_eq!(v["rounds"], 2, "{v}");
        assert!(v["ci95"].is_array(), "2 rounds give an interval: {v}");
    }
}

#[test]
fn pigz_profiled_compresses_correctly_under_three_locks() {
    if !installed("pigz") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("data");
    // 8 MB that compresses (words from a small vocabulary, in a random order).
    let mut rng = fastrand::Rng::with_seed(7);
    let words = ["lock", "futex", "wake", "spin", "queue", "owner", "waiter", "handoff"];
    let text: String = (0..1_200_000).map(|_| words[rng.usize(..words.len())]).collect::<Vec<_>>().join(" ");
    std::fs::write(&input, &text).unwrap();
    let path = input.display().to_string();
    let doc = run_json(
        &["--lock", "pthread,adaptive,mcs", "--runs", "2", "--profile"],
        &["pigz", "-p", "2", "-k", "-f", &path],
    );
    for lock in ["pthread", "adaptive", "mcs"] {
        let s = sample(&doc, lock);
        assert!(s["wall_s"].as_f64().unwrap() > 0.0, "{lock}");
        assert!(
            s["inits"]["swapped"].as_u64().unwrap() > 0 || lock == "pthread",
            "{lock}: pigz's mutexes swapped"
        );
        // Profiled: pigz's work queues, each named in pigz, and under a
        // swapped lock holding it.
        let mutexes = s["mutexes"].as_array().unwrap();
        assert!(mutexes.len() >= 3, "{lock}: {mutexes:?}");
        for m in mutexes {
            assert!(m["site"].as_str().unwrap().contains("pigz"), "{lock}: {m}");
            assert_eq!(m["swapped"], lock != "pthread", "{lock}: {m}");
        }
        assert!(mutexes.iter().map(|m| m["acquisitions"].as_u64().unwrap()).sum::<u64>() > 100, "{lock}");
    }
    // The last run's output decompresses to the input.
    let back = std::process::Command::new("pigz")
        .args(["-d", "-c"])
        .arg(dir.path().join("data.gz"))
        .output()
        .unwrap();
    assert!(back.status.success());
    assert!(back.stdout == text.as_bytes(), "pigz's output under a swapped lock is not the input");
}

#[test]
fn what_run_refuses() {
    interposer();
    common::refused(&["run", "--lock", "clh", "--", "true"], "not a lock that can live in a pthread_mutex_t");
    common::refused(&["run", "--lock", "noop", "--", "true"], "excludes nothing");
    common::refused(&["run", "--lock", "mcs,mcs", "--", "true"], "given twice");
    common::refused(&["run", "--", "no-such-program-here"], "not found on PATH");
    common::refused(&["run", "--metric", "(", "--", "true"], "--metric");
    common::refused(&["run", "--interposer", "/nonexistent.so", "--", "true"], "does not exist");
    common::refused(&["run", "--interposer", "/etc/passwd", "--", "true"], "not an ELF shared library");
    let contend_itself = assert_cmd::cargo::cargo_bin("contend");
    common::refused(
        &["run", "--interposer", contend_itself.to_str().unwrap(), "--", "true"],
        "not contend's interposer",
    );
}

#[test]
fn arguments_that_are_not_utf8_reach_the_program_as_they_are() {
    use std::os::unix::ffi::OsStrExt;
    interposer();
    let arg = std::ffi::OsStr::from_bytes(b"caf\xe9\xff");
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("contend"))
        .args(["run", "--runs", "1", "--count-futex", "off", "--", "printf", "%s"])
        .arg(arg)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.stdout, b"caf\xe9\xff");
}

#[test]
fn a_program_the_interposer_cannot_enter_is_named() {
    // ldconfig is statically linked on Debian: the loader never reads
    // LD_PRELOAD for it.
    let Some(ldconfig) =
        common::which("ldconfig").or_else(|| Some("/sbin/ldconfig".into())).filter(|p| p.is_file())
    else {
        common::skip("no ldconfig");
        return;
    };
    interposer();
    let out = contend()
        .args(["run", "--runs", "1", "--count-futex", "off", "--"])
        .arg(&ldconfig)
        .arg("-p")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("statically linked"), "{err}");
    // A failing program: its status and its last output.
    let out = contend()
        .args(["run", "--runs", "1", "--count-futex", "off", "--", "sh", "-c", "echo oops >&2; exit 3"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("exited 3") && err.contains("oops"), "{err}");
}
