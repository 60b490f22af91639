//! The futex view of `contend run --profile` on programs whose futex
//! calls are known: a C lock on futex(2) directly (the program counts its
//! own calls and what they returned, and the view's row must equal them),
//! the same program linked statically (no interposer: the view alone),
//! Rust's std::sync::Mutex (named by its static), a waiter on two words
//! at once through futex_waitv (each word's row equal to the program's
//! counts), and the same C program
//! followed by `contend attach` while it runs. Needs root or
//! CAP_PERFMON for the tracepoints (skipped otherwise), a C compiler with
//! a static libc, and rustc.

mod common;

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

fn contend() -> Command {
    Command::cargo_bin("contend").expect("binary built")
}

/// The futex view's words of the execution that had one.
fn words(doc: &Value) -> Vec<Value> {
    view(doc)["words"].as_array().unwrap().clone()
}

/// The futex view of `doc`'s one profiled execution.
fn view(doc: &Value) -> Value {
    let samples = doc["points"].as_array().unwrap().iter().flat_map(|p| p["runs"].as_array().unwrap().iter());
    let views: Vec<&Value> = samples.filter_map(|s| s.get("futex_view")).collect();
    assert_eq!(views.len(), 1, "one execution (the profiled counting run) has the view");
    assert_eq!(views[0]["lost"], 0, "no sample lost");
    // Root here: the calls come through the in-kernel filter, not
    // per-thread events (which cost the program at its switches).
    assert!(views[0]["per_thread"].is_null(), "not through the filter: {}", views[0]["per_thread"]);
    views[0].clone()
}

/// The word named `symbol`, and the line its process printed.
fn row<'a>(words: &'a [Value], symbol: &str, stdout: &str) -> (&'a Value, String) {
    let w = words
        .iter()
        .find(|w| w["name"].as_str().unwrap().starts_with(symbol))
        .unwrap_or_else(|| panic!("no word named {symbol}: {words:?}"));
    let pid = w["pid"].as_u64().unwrap();
    let line = stdout.lines().find(|l| l.starts_with(&format!("pid={pid} ")));
    (w, line.unwrap_or_else(|| panic!("no line of pid {pid} in {stdout}")).to_string())
}

fn said_value(line: &str, key: &str) -> u64 {
    let field = line.split_whitespace().find_map(|f| f.strip_prefix(&format!("{key}=")));
    field.unwrap_or_else(|| panic!("{key} not in {line}")).parse().unwrap()
}

/// The view's counts of the program's lock word equal its own counts.
fn equals_the_programs_own_counts(exe: &Path, dir: &Path) -> String {
    let (doc, stdout, table) = common::run::profiled_printing(exe, &[], dir);
    let view = view(&doc);
    let (w, line) = row(view["words"].as_array().unwrap(), "raw_lock (", &stdout);
    for (view, own) in [
        ("waits", "waits"),
        ("woken", "woken"),
        ("eagain", "eagain"),
        ("wake_calls", "wakes"),
        ("woke", "woke"),
    ] {
        assert_eq!(
            w[view].as_u64().unwrap(),
            said_value(&line, own),
            "{view} against the program's {own}: {line}"
        );
    }
    assert!(said_value(&line, "waits") > 0, "the lock was contended: {line}");
    assert_eq!(w["interrupted"], said_value(&line, "other"));
    assert_eq!(w["pthread_mutex"], false);
    assert!(table.contains("futex words") && table.contains("raw_lock ("), "{table}");
    // Its waiters' and wakers' stacks, unwound from .eh_frame (the static
    // build too): the first waits sleep (main holds the lock until the
    // workers are started), and the first calls are within the budget.
    // The site is the program's own code: by line with -g (`futex
    // (raw_futex.c:29)`), else by symbol (`lock (raw_futex_static)`).
    let sampled = &view["stacks"];
    let waited = w["waited_at"].as_str().unwrap_or_else(|| panic!("no waiter stack: {w} {sampled}"));
    assert!(waited.contains("raw_futex"), "{w}");
    let woke = w["waker_stacks"].as_array().unwrap();
    let own = |s: &Value| s["site"].as_u64().map(|i| s["frames"][i as usize].to_string());
    assert!(woke.iter().filter_map(own).any(|f| f.contains("raw_futex")), "{w} {sampled}");
    assert!(table.contains("waited at "), "{table}");
    table
}

#[test]
fn a_raw_futex_lock_is_counted_as_the_program_counts_it() {
    if !common::root_or_skip("the futex view (syscall tracepoints)") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = common::compile("raw_futex", dir.path());
    equals_the_programs_own_counts(&exe, dir.path());
}

#[test]
fn a_static_program_has_its_futex_view_and_a_swap_is_refused() {
    if !common::root_or_skip("the futex view (syscall tracepoints)") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe =
        common::build("cc", "raw_futex.c", "raw_futex_static", &["-O1", "-static", "-pthread"], dir.path());
    let table = equals_the_programs_own_counts(&exe, dir.path());
    assert!(table.contains("the interposer was not loaded"), "{table}");
    let out = contend().args(["run", "--lock", "tas", "--runs", "1", "--"]).arg(&exe).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--profile alone still shows its futex view"), "{err}");
}

#[test]
fn rusts_std_mutex_is_found_and_named_by_its_static() {
    if !common::root_or_skip("the futex view (syscall tracepoints)") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("std_mutex");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/std_mutex.rs");
    let out = std::process::Command::new("rustc")
        .args(["-O", "-g", "--edition", "2021", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("rustc runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (doc, _, table) = common::run::profiled_printing(&exe, &[], dir.path());
    let words = words(&doc);
    let w = words.iter().find(|w| w["name"].as_str().unwrap().contains("LEDGER"));
    let w = w.unwrap_or_else(|| panic!("no word named LEDGER: {table}"));
    let waits = w["waits"].as_u64().unwrap();
    assert!(waits > 0, "{w}");
    // Every wait ended one way, or was still in the kernel at the end.
    let ended: u64 = ["woken", "eagain", "timeouts", "interrupted", "unfinished"]
        .iter()
        .map(|k| w[k].as_u64().unwrap())
        .sum();
    assert_eq!(ended, waits, "{w}");
    let sample = &doc["points"][0]["sample"];
    assert_eq!(sample["mutexes"].as_array().unwrap().len(), 0, "std's Mutex is not glibc's: {table}");
    // Its waiters are placed by their source line: where the workers
    // lock it, past std's futex code (the first waits sleep, main holding
    // it, and are within the stacks' budget).
    let source = std::fs::read_to_string(&src).unwrap();
    let line = 1 + source.lines().position(|l| l.contains("let mut total = LEDGER.lock()")).unwrap();
    let waited = w["waited_at"].as_str().unwrap_or_else(|| panic!("no waiter stack: {w}"));
    assert!(waited.contains(&format!("std_mutex.rs:{line}")), "{waited} is not line {line}: {w}");
    // Over every word, that line is one site of one word (std's Mutex
    // sleeps on the lock itself; parking_lot's would be one per waiter).
    let view = view(&doc);
    let sites = view["sites"].as_array().unwrap();
    let site = sites.iter().find(|s| s["site"].as_str().unwrap().contains(&format!("std_mutex.rs:{line}")));
    let site = site.unwrap_or_else(|| panic!("no site at line {line}: {view}"));
    assert_eq!(site["words"], 1, "{site}");
    assert!(site["waits"].as_u64().unwrap() >= 1, "{site}");
}

#[test]
fn a_futex_waitv_is_a_wait_on_each_of_its_words_read_from_the_callers_array() {
    if !common::root_or_skip("the futex view (syscall tracepoints)") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = common::compile("waitv", dir.path());
    let (doc, stdout, table) = common::run::profiled_printing(&exe, &[], dir.path());
    if stdout.contains("not in this kernel") {
        eprintln!("skipped: this kernel has no futex_waitv");
        return;
    }
    let view = view(&doc);
    let words = view["words"].as_array().unwrap().clone();
    let (a, line) = row(&words, "post_a (", &stdout);
    let (b, _) = row(&words, "post_b (", &stdout);
    let own = |key| said_value(&line, key);
    assert_eq!(view["waitv_calls"], own("calls"), "{line}");
    assert_eq!(view["waitv_unread"], 0, "the router copied every call's array");
    // Every call waits on both words; the return says which one woke it,
    // and the other counts it ended elsewhere.
    for (w, mine, other, wakes) in
        [(a, "woken_a", "woken_b", "wakes_a"), (b, "woken_b", "woken_a", "wakes_b")]
    {
        assert_eq!(w["waits"], own("calls"), "{w} {line}");
        assert_eq!(w["woken"], own(mine), "{w} {line}");
        assert_eq!(w["ended_elsewhere"], own(other), "{w} {line}");
        assert_eq!(w["eagain"], own("eagain"), "{w} {line}");
        assert_eq!(w["interrupted"], own("other"), "{w} {line}");
        assert_eq!(w["wake_calls"], own(wakes), "{w} {line}");
        assert_eq!(w["unfinished"], 0, "{w}");
    }
    assert!(own("woken_a") + own("woken_b") > 0, "the consumer slept: {line}");
    assert!(table.contains("futex_waitv calls (a wait on each of their words)"), "{table}");
    assert!(table.contains("other word: futex_waitv calls that a wake of another"), "{table}");
    // A sampled call's stack counts once over the program (on the word
    // that woke it), and its site is the program's own line.
    let source =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/waitv.c"));
    let at = 1 + source.unwrap().lines().position(|l| l.contains("syscall(SYS_futex_waitv")).unwrap();
    let sites = view["sites"].as_array().unwrap();
    let site = sites.iter().find(|s| s["site"].as_str().unwrap().contains(&format!("waitv.c:{at}")));
    let site = site.unwrap_or_else(|| panic!("no site at waitv.c:{at}: {view}"));
    let sampled: u64 = [a, b]
        .iter()
        .flat_map(|w| w["waiter_stacks"].as_array().unwrap())
        .map(|s| s["calls"].as_u64().unwrap())
        .sum();
    assert!(sampled > 0 && sampled <= own("calls") - own("eagain"), "{sampled} {line}");
    assert_eq!(site["waits"], sampled, "{site}");
}

#[test]
fn futex_stacks_0_samples_none_and_says_so() {
    if !common::root_or_skip("the futex view (syscall tracepoints)") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = common::compile("raw_futex", dir.path());
    let (doc, _, table) = common::run::profiled_printing(&exe, &["--futex-stacks", "0"], dir.path());
    let view = view(&doc);
    assert!(view["stacks"].is_null(), "{view}");
    assert!(view["no_stacks"].as_str().unwrap().contains("--futex-stacks 0"), "{view}");
    assert!(words(&doc).iter().all(|w| w["waiter_stacks"].as_array().unwrap().is_empty()));
    assert!(table.contains("stacks were not sampled: turned off"), "{table}");
}

#[test]
fn attach_follows_a_running_process_from_its_first_call_to_its_exit() {
    use std::io::{BufRead, Write};
    if !common::root_or_skip("contend attach (syscall tracepoints)") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = common::compile("raw_futex", dir.path());
    let mut program = std::process::Command::new(&exe)
        .arg("wait")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(program.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ready");
    let json = dir.path().join("attach.json");
    let mut attach = std::process::Command::new(assert_cmd::cargo::cargo_bin("contend"))
        .args(["attach", &program.id().to_string(), "--export-json"])
        .arg(&json)
        .arg("--export-csv")
        .arg(dir.path().join("attach.csv"))
        .arg("--export-gnuplot")
        .arg(dir.path().join("attach.dat"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Followed once contend says so; then the program may start.
    let mut err = std::io::BufReader::new(attach.stderr.take().unwrap());
    let mut said = String::new();
    while !said.contains("following process") {
        said.clear();
        assert!(err.read_line(&mut said).unwrap() > 0, "contend attach ended before following");
    }
    program.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let mut own = String::new();
    out.read_line(&mut own).unwrap();
    assert!(program.wait().unwrap().success(), "the program ran to its end, never stopped");
    let done = attach.wait_with_output().unwrap();
    let table = String::from_utf8_lossy(&done.stdout);
    assert!(done.status.success(), "{table}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["family"], "run");
    assert_eq!(doc["spec"]["attached"], program.id());
    let words = words(&doc);
    let (w, line) = row(&words, "raw_lock (", &own);
    for (view, own) in [("waits", "waits"), ("woken", "woken"), ("eagain", "eagain"), ("wake_calls", "wakes")]
    {
        assert_eq!(w[view].as_u64().unwrap(), said_value(&line, own), "{view}: {line}");
    }
    assert!(table.contains("raw_lock ("), "{table}");
    // The CSV has the words too, one row each.
    let csv = std::fs::read_to_string(dir.path().join("attach.csv")).unwrap();
    let row = csv.lines().find(|l| l.contains(",raw_lock (")).unwrap_or_else(|| panic!("{csv}"));
    assert_eq!(row.split(',').nth(4), Some(said_value(&line, "waits").to_string().as_str()), "{csv}");
    // With the holders' split of each word, then where it was waited on
    // and woken from, last.
    let head = csv.lines().next().unwrap();
    assert!(head.ends_with("holder_unknown_ns,holder_blocked_in,waited_at,woken_from"), "{csv}");
    assert!(row.contains("raw_futex.c:"), "its sites are named: {csv}");
    assert!(!row.contains(",,,,,"), "the split is filled in: {csv}");
    // And the gnuplot columns: waits are the fifth.
    let dat = std::fs::read_to_string(dir.path().join("attach.dat")).unwrap();
    let row = dat.lines().find(|l| l.ends_with(" raw_lock_(raw_futex)")).unwrap_or_else(|| panic!("{dat}"));
    assert_eq!(row.split(' ').nth(4), Some(said_value(&line, "waits").to_string().as_str()), "{dat}");
}

#[test]
fn attach_refuses_a_process_that_is_not_there() {
    let out = contend().args(["attach", "4194304"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no process 4194304"));
}
