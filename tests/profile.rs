//! `contend run --profile` on programs compiled here, whose mutexes and
//! call sites are known: the stacks of contended acquisitions, the
//! holders that caused the waits, the wrapper frames folded away, and
//! names from DWARF, from a separate debug file, or by offset with a hint
//! when there are no symbols.
//!
//! Needs a C compiler and binutils' objcopy (scripts/test.sh runs where
//! Rust builds, which needs both).

mod common;

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

fn contend() -> Command {
    Command::cargo_bin("contend").expect("binary built")
}

use common::compile;

fn objcopy(args: &[&str], dir: &Path) {
    let out =
        std::process::Command::new("objcopy").args(args).current_dir(dir).output().expect("objcopy runs");
    assert!(out.status.success(), "objcopy {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// `contend run --profile` of `exe`, one run: the sample and the table.
fn profile(exe: &Path) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let (doc, table) = profile_into(exe, &json, &["--runs", "1"]);
    (doc["points"][0]["sample"].clone(), table)
}

/// `contend run --profile` of `exe` with `args`, exported to `json`: the
/// export and the table.
fn profile_into(exe: &Path, json: &Path, args: &[&str]) -> (Value, String) {
    let out = contend()
        .args(["run", "--profile", "--count-futex", "off", "--no-progress"])
        .args(args)
        .arg("--export-json")
        .arg(json)
        .arg("--")
        .arg(exe)
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .expect("contend runs");
    let table = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{table}");
    let doc: Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    (doc, table)
}

/// The value process `pid` printed as `KEY=VALUE` on its line (`pid=PID
/// ...`): contend runs the program more than once (profiled, and
/// unprofiled for the profile's cost), and their counts may differ.
fn said(stdout: &str, pid: u64, key: &str) -> String {
    let line = stdout.lines().find(|l| l.starts_with(&format!("pid={pid} ")));
    let line = line.unwrap_or_else(|| panic!("no line of pid {pid} in {stdout}"));
    let word = line.split_whitespace().find_map(|w| w.strip_prefix(&format!("{key}=")));
    word.unwrap_or_else(|| panic!("no {key}= in {line}")).to_string()
}

/// An address process `pid` printed.
fn address(stdout: &str, pid: u64, key: &str) -> u64 {
    u64::from_str_radix(said(stdout, pid, key).trim_start_matches("0x"), 16).unwrap()
}

/// The mutexes that were contended, by where they wait.
fn contended(sample: &Value) -> Vec<&Value> {
    let all = sample["mutexes"].as_array().expect("mutexes");
    all.iter().filter(|m| m["contended"].as_u64().unwrap() > 0).collect()
}

#[test]
fn a_wrapped_mutex_is_named_by_its_callers_with_their_lines() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile("two_mutexes", dir.path());
    let (sample, table) = profile(&exe);
    let mutexes = contended(&sample);
    // Both mutexes are contended (each run has 40 rounds in which waiter_a
    // almost surely finds `a` held for 5 ms; `b` is held 100 µs by three
    // threads).
    assert_eq!(mutexes.len(), 2, "{table}");
    for m in &mutexes {
        let st = &m["stacks"][0];
        let frames: Vec<&str> =
            st["frames"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
        // The wrapper is the innermost frame of every stack, and folded.
        assert!(frames[0].starts_with("take (two_mutexes.c:"), "{frames:?}");
        assert_eq!(st["wrappers"], 1, "{frames:?}");
        assert!(
            m["site"].as_str().unwrap().starts_with("take (two_mutexes.c:"),
            "first locked in the wrapper"
        );
    }
    let names: Vec<&str> = mutexes.iter().map(|m| m["waits_at"].as_str().unwrap()).collect();
    assert!(names.iter().any(|n| n.starts_with("waiter_a (two_mutexes.c:")), "{names:?}\n{table}");
    assert!(names.iter().any(|n| n.starts_with("waiter_b (two_mutexes.c:")), "{names:?}\n{table}");
    assert!(table.contains("waits at") && table.contains("[take (two_mutexes.c:"), "{table}");
    // contend's part of stderr (from the profile on) fits 100 columns.
    let ours = &table[table.find("profile under").expect("the profile is printed")..];
    let widest = ours.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(widest <= 100, "{widest} columns:\n{ours}");
    // The holders' side: the long holder caused the most wait, named past
    // the unlock wrapper.
    let mut holders: Vec<&Value> = mutexes.iter().flat_map(|m| m["holders"].as_array().unwrap()).collect();
    holders.sort_by_key(|h| std::cmp::Reverse(h["caused_wait_ns"].as_u64().unwrap()));
    let top = holders[0];
    let frames = top["frames"].as_array().unwrap();
    assert!(frames[0].as_str().unwrap().starts_with("give (two_mutexes.c:"), "{top}");
    let held_at = frames[top["wrappers"].as_u64().unwrap() as usize].as_str().unwrap();
    assert!(held_at.starts_with("long_holder (two_mutexes.c:"), "{top}\n{table}");
    assert!(table.contains("the holders that caused the waits"), "{table}");
    // Every wait went to a release or is counted as unattributed.
    for m in &mutexes {
        let caused: u64 =
            m["holders"].as_array().unwrap().iter().map(|h| h["caused_wait_ns"].as_u64().unwrap()).sum();
        assert_eq!(
            caused + m["unattributed_wait_ns"].as_u64().unwrap(),
            m["wait_ns"].as_u64().unwrap(),
            "{m}"
        );
    }
    assert_eq!(sample["symbol_hints"], serde_json::json!([]), "every name came from DWARF");

    // The same program stripped, its DWARF in a separate file found by
    // .gnu_debuglink: the same names.
    objcopy(&["--only-keep-debug", "two_mutexes", "two_mutexes.debug"], dir.path());
    objcopy(&["--strip-all", "--add-gnu-debuglink=two_mutexes.debug", "two_mutexes"], dir.path());
    let (sample, table) = profile(&exe);
    let names: Vec<&str> = contended(&sample).iter().map(|m| m["waits_at"].as_str().unwrap()).collect();
    assert!(names.iter().any(|n| n.starts_with("waiter_b (two_mutexes.c:")), "{names:?}\n{table}");

    // No symbols at all: named by offset, and the table says how to get
    // names.
    std::fs::remove_file(dir.path().join("two_mutexes.debug")).unwrap();
    let (sample, table) = profile(&exe);
    let names: Vec<&str> = contended(&sample).iter().map(|m| m["waits_at"].as_str().unwrap()).collect();
    assert!(names.iter().all(|n| n.starts_with("two_mutexes+0x")), "{names:?}");
    let hints = sample["symbol_hints"].as_array().unwrap();
    assert!(hints.len() == 1 && hints[0].as_str().unwrap().contains("rebuild it with -g"), "{hints:?}");
    assert!(table.contains("has no debug symbols"), "{table}");
}

/// `--sort KEY` orders the table (only): its rows go down the key, as the
/// export counts it, and the heading says the key; the export keeps its
/// order, most waited-on first. (Which mutex of two_mutexes.c had to wait
/// more often varies from run to run; the ordering itself is unit-tested
/// in model/mutex_profile.rs.)
#[test]
fn the_profile_table_sorts_by_the_key_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile("two_mutexes", dir.path());
    let json = dir.path().join("run.json");
    let (doc, table) = profile_into(&exe, &json, &["--runs", "1", "--sort", "contended"]);
    let mutexes = doc["points"][0]["sample"]["mutexes"].as_array().unwrap();
    let ours = &table[table.find("profile under").expect("the profile is printed")..];
    let heading = &ours[..ours.find(" mutex ").expect("a table")];
    assert!(heading.contains("by acquisitions that had to wait:"), "{ours}");
    let contended_of = |row: &str| {
        let address = row.split_whitespace().next().unwrap();
        let m = mutexes.iter().find(|m| format!("0x{:x}", m["address"].as_u64().unwrap()) == address);
        m.unwrap_or_else(|| panic!("{address} is not in the export"))
            .get("contended")
            .unwrap()
            .as_u64()
            .unwrap()
    };
    // The first block of the table (a table wider than the terminal
    // continues in blocks below, repeating the mutex column).
    let rows: Vec<u64> = ours
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("mutex "))
        .take_while(|l| !l.is_empty() && !l.starts_with("mutex:"))
        .filter(|l| l.trim_start().starts_with("0x"))
        .map(contended_of)
        .collect();
    assert_eq!(rows.len(), 2, "{ours}");
    assert!(rows.windows(2).all(|w| w[0] >= w[1]), "{rows:?}\n{ours}");
    let waits: Vec<u64> = mutexes.iter().map(|m| m["wait_ns"].as_u64().unwrap()).collect();
    assert!(waits.windows(2).all(|w| w[0] >= w[1]), "the export's order: {waits:?}");
}

#[test]
fn a_profiled_export_goes_through_compare_report_and_plot() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile("two_mutexes", dir.path());
    let json = dir.path().join("run.json");
    let (doc, table) = profile_into(&exe, &json, &["--lock", "pthread,tas", "--runs", "2"]);
    for p in doc["points"].as_array().unwrap() {
        for m in contended(&p["sample"]) {
            // The wait histogram holds every contended acquisition.
            let counted: u64 =
                m["wait_histogram"].as_array().unwrap().iter().map(|b| b["count"].as_u64().unwrap()).sum();
            assert_eq!(counted, m["contended"].as_u64().unwrap(), "{m}");
        }
    }
    // compare: against itself, and tas against pthread by round.
    let out = contend().arg("compare").arg(&json).arg(&json).arg("--json").assert().success();
    let report: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(report["points"].as_array().unwrap().len(), 3, "pthread, tas, pthread unprofiled: {report}");
    contend().arg("compare").arg(&json).args(["--baseline", "pthread"]).assert().success();
    // report: the profile's tables under the points', named by function
    // and line, and a page a browser shows.
    let html = dir.path().join("run.html");
    contend().arg("report").arg(&json).arg("-o").arg(&html).assert().success();
    let page = std::fs::read_to_string(&html).unwrap();
    for needle in [
        "pthread: the top mutexes by wait (median run)",
        "tas: the holders that caused the waits",
        "<td>long_holder (two_mutexes.c:",
        "<td>waiter_a (two_mutexes.c:",
        "The program under each lock, and its top mutexes",
    ] {
        assert!(page.contains(needle), "the page lacks `{needle}`\n{table}");
    }
    common::browser::shows_without_errors(&html);
    // plot: each lock's wall time and the top mutexes' waits.
    let svg = dir.path().join("run.svg");
    contend().arg("plot").arg(&json).arg("-o").arg(&svg).assert().success();
    let figure = std::fs::read_to_string(&svg).unwrap();
    for needle in
        ["wall s, 95% intervals", "pthread: waiter_a (two_mutexes.c:", "tas: waiter_b (two_mutexes.c:"]
    {
        assert!(figure.contains(needle), "the figure lacks `{needle}`");
    }
}

#[test]
fn rwlock_and_spinlock_counts_equal_the_calls_the_program_made() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile("rw_spin", dir.path());
    let (doc, stdout, table) = common::run::profiled_printing(&exe, &["--count-futex", "off"], dir.path());
    let json = dir.path().join("run.json");
    let locks = doc["points"][0]["sample"]["rwlocks"].as_array().unwrap().clone();
    let pid = locks[0]["pid"].as_u64().unwrap();
    let n = |key: &str| said(&stdout, pid, key).parse::<u64>().unwrap();
    let lock = |key: &str| {
        let at = address(&stdout, pid, key);
        locks.iter().find(|l| l["address"] == at).unwrap_or_else(|| panic!("no lock at {at:#x}: {locks:?}"))
    };
    let (rw, wpref, spin) = (lock("rw"), lock("wpref"), lock("spin"));
    let sum = |side: &str, field: &str| -> u64 {
        [rw, wpref].iter().map(|l| l[side][field].as_u64().unwrap()).sum()
    };
    assert_eq!(sum("read", "acquisitions"), n("reads"), "{table}");
    assert_eq!(sum("write", "acquisitions"), n("writes"), "{table}");
    assert_eq!(sum("read", "try_failed"), n("read_busy"), "{table}");
    assert_eq!(sum("write", "try_failed"), n("write_busy"), "{table}");
    assert_eq!(spin["kind"], "spinlock");
    assert_eq!(spin["write"]["acquisitions"].as_u64().unwrap(), n("spins"), "{table}");
    assert_eq!(spin["write"]["try_failed"].as_u64().unwrap(), n("spin_busy"), "{table}");
    assert_eq!(spin["read"]["acquisitions"], 0);
    // Every kind of wait happened: a reader behind a writer, a writer
    // behind a reader, a spinner behind a holder (each round's holder
    // keeps the lock until the other thread asks for it).
    for (l, side) in [(rw, "read"), (rw, "write"), (spin, "write")] {
        assert!(l[side]["contended"].as_u64().unwrap() > 0, "{side}: {l}");
        assert!(l[side]["wait_ns"].as_u64().unwrap() > 0, "{side}: {l}");
    }
    assert!(rw["site"].as_str().unwrap().contains("(rw_spin.c:"), "{rw}");
    assert!(table.contains("rwlocks and spinlocks under pthread"), "{table}");
    // contend report shows them too.
    let html = dir.path().join("run.html");
    contend().arg("report").arg(&json).arg("-o").arg(&html).assert().success();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("pthread: rwlocks and spinlocks (glibc&#39;s)"), "{page}");
    assert!(page.contains("<td>spinlock</td>"));
}

#[test]
fn the_reacquisition_inside_glibcs_condition_wait_shows_as_kernel_waits() {
    if !common::root_or_skip("counting kernel waits (the futex tracepoint)") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile("cond_reacquire", dir.path());
    let (doc, stdout, table) = common::run::profiled_printing(&exe, &[], dir.path());
    // The kernel waits are counted in the futex-counting run (the default
    // plan), whose profile the table shows.
    let runs = doc["points"][0]["runs"].as_array().unwrap();
    let sample = runs.iter().find(|r| r["status"] == "counting").expect("a futex-counting run");
    let pid = sample["mutexes"][0]["pid"].as_u64().unwrap();
    let address = address(&stdout, pid, "mutex");
    let cond_waits: u64 = said(&stdout, pid, "cond_waits").parse().unwrap();
    assert!(table.contains("the futex-counting run"), "{table}");
    let m = sample["mutexes"].as_array().unwrap().iter().find(|m| m["address"] == address).unwrap();
    assert_eq!(m["cond_waits"].as_u64().unwrap(), cond_waits, "{m}");
    // Each condition wait's re-acquisition slept on the mutex (the program
    // holds it until every woken waiter is asleep on its word), inside
    // glibc: the kernel count sees them, the failed try-locks do not.
    let kernel = m["kernel_waits"].as_u64().expect("counted as root");
    assert!(kernel >= cond_waits, "{kernel} kernel waits for {cond_waits} condition waits\n{table}");
    assert!(kernel > m["contended"].as_u64().unwrap(), "{m}");
    let totals = &sample["kernel_waits"];
    assert!(totals["on_mutexes"].as_u64().unwrap() >= kernel && totals["all"].as_u64().unwrap() >= kernel);
    assert_eq!(totals["lost"], 0);
    assert!(table.contains("kernel waits") && table.contains("cond waits"), "{table}");
}

#[test]
fn a_contend_copied_alone_profiles_with_the_interposer_it_carries() {
    // What `cargo install` leaves: the binary by itself, run from another
    // directory, with no $CONTEND_INTERPOSER. Its private directory is a
    // fresh $XDG_RUNTIME_DIR, where the copy must appear.
    let bin_dir = tempfile::tempdir().unwrap();
    let bin = bin_dir.path().join("contend");
    std::fs::copy(assert_cmd::cargo::cargo_bin("contend"), &bin).unwrap();
    let runtime = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let exe = compile("two_mutexes", elsewhere.path());
    let json = elsewhere.path().join("run.json");
    let out = std::process::Command::new(&bin)
        .current_dir(elsewhere.path())
        .env_remove("CONTEND_INTERPOSER")
        .env("XDG_RUNTIME_DIR", runtime.path())
        .args(["run", "--profile", "--runs", "1", "--count-futex", "off", "--no-progress", "--export-json"])
        .arg(&json)
        .arg("--")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let used = doc["spec"]["interposer"].as_str().unwrap().to_string();
    assert!(used.starts_with(&runtime.path().join("contend").display().to_string()), "{used}");
    assert!(Path::new(&used).is_file());
    let sample = &doc["points"][0]["sample"];
    assert_eq!(sample["loaded"], 1, "{sample}");
    let acquisitions: u64 =
        sample["mutexes"].as_array().unwrap().iter().map(|m| m["acquisitions"].as_u64().unwrap()).sum();
    assert_eq!(acquisitions, 240, "two_mutexes takes each of its two mutexes 120 times");
}

#[test]
fn a_function_named_with_escape_sequences_reaches_no_terminal_raw() {
    // A program may name its functions anything: this one calls the
    // function that waits on `a` ESC[2J (clear the screen) ESC]0;...BEL
    // (retitle the window).
    let dir = tempfile::tempdir().unwrap();
    let exe = compile("two_mutexes", dir.path());
    objcopy(
        &["--strip-debug", "--redefine-sym", "waiter_a=waiter_a\x1b[2J\x1b]0;pwned\x07", "two_mutexes"],
        dir.path(),
    );
    let json = dir.path().join("run.json");
    let (doc, table) = profile_into(&exe, &json, &["--runs", "1"]);
    assert!(!table.contains('\x1b') && !table.contains('\x07'), "a raw control character: {table:?}");
    assert!(table.contains("waiter_a\\x1b[2J\\x1b]0;pwned\\x07"), "shown escaped: {table}");
    // The export keeps the name as it is (JSON escapes it its own way).
    let text = doc.to_string();
    assert!(text.contains("waiter_a\\u001b[2J"), "the export has the real name");
    // So does what is made from the export: the page and the Markdown.
    let page = dir.path().join("page.html");
    let out = contend().args(["report"]).arg(&json).arg("-o").arg(&page).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains('\x1b') && html.contains("waiter_a\\x1b[2J"), "the page escapes it");
}
