//! Names a developer can use (issue 57, item 3), on programs compiled
//! here: a C++ mutex is named by its member function, not by libstdc++'s
//! wrappers, and chosen with `--lock` by any name the profile printed
//! (with its parameter list's comma, or without the list); a library the
//! program unloaded before it exited still names its sites; and
//! `--process NAME` keeps one process's mutexes of a script that runs
//! two programs.
//!
//! Needs a C and a C++ compiler (scripts/test.sh installs g++).

mod common;

use common::run::exported;
use serde_json::Value;
use std::ffi::OsStr;

/// The mutexes of the export's first point's sample.
fn mutexes(doc: &Value) -> &Vec<Value> {
    doc["points"][0]["sample"]["mutexes"].as_array().expect("a profiled point has mutexes")
}

#[test]
fn a_cpp_mutex_is_named_by_its_members_and_chosen_by_either_name_as_printed() {
    let dir = tempfile::tempdir().unwrap();
    let exe = common::build("g++", "ledger.cc", "ledger", &["-g", "-O2", "-pthread"], dir.path());
    let (doc, table) = exported(&[exe.as_os_str()], &["--profile", "--runs", "1"], dir.path());
    let m = &mutexes(&doc)[0];
    let waits_at = m["waits_at"].as_str().unwrap();
    assert!(waits_at.starts_with("shop::Ledger::"), "named by a member, not libstdc++: {waits_at}\n{table}");
    // Both members, as the profile printed them: one with its parameter
    // list (a comma inside), one by its bare name; the list's own comma
    // splits them into two points.
    let pick = "tas@shop::Ledger::take(int, long),mcs@shop::Ledger::add";
    let (doc, table) = exported(&[exe.as_os_str()], &["--lock", pick, "--runs", "1"], dir.path());
    let points = doc["points"].as_array().unwrap();
    for want in ["tas@shop::Ledger::take(int, long)", "mcs@shop::Ledger::add"] {
        let p = points
            .iter()
            .find(|p| p["point"]["lock"] == want)
            .unwrap_or_else(|| panic!("no point {want}\n{table}"));
        let swapped = p["sample"]["swapped"].as_u64().unwrap();
        assert_eq!(swapped, 40_000, "{want}: every acquisition of the one mutex swapped\n{table}");
    }
}

#[test]
fn a_library_unloaded_before_exit_still_names_its_sites() {
    let dir = tempfile::tempdir().unwrap();
    let flags = ["-g", "-O1", "-shared", "-fPIC", "-pthread"];
    let lib = common::build("cc", "plugin.c", "libplugin.so", &flags, dir.path());
    let host = common::build("cc", "plugin_host.c", "plugin_host", &["-g", "-O1"], dir.path());
    let program = [host.as_os_str(), lib.as_os_str()];
    let (doc, table) = exported(&program, &["--profile", "--runs", "1"], dir.path());
    let m = mutexes(&doc).iter().find(|m| m["acquisitions"] == 40_000).expect("the plugin's mutex");
    let waits_at = m["waits_at"].as_str().unwrap();
    assert!(waits_at.starts_with("plugin_work (plugin.c:"), "{waits_at}\n{table}");
    assert!(m["module"].as_str().unwrap().ends_with("libplugin.so"), "{m}");
}

#[test]
fn process_keeps_one_programs_mutexes_and_names_the_others_when_it_matches_none() {
    let dir = tempfile::tempdir().unwrap();
    let first = common::compile("two_mutexes", dir.path());
    let second = dir.path().join("second_prog");
    std::fs::copy(&first, &second).unwrap();
    let script = format!("{} & {}; wait", first.display(), second.display());
    let program = [OsStr::new("sh"), OsStr::new("-c"), OsStr::new(&script)];
    let (doc, table) = exported(&program, &["--profile", "--runs", "1"], dir.path());
    let comms: std::collections::BTreeSet<&str> =
        mutexes(&doc).iter().map(|m| m["comm"].as_str().unwrap()).collect();
    assert_eq!(comms, ["second_prog", "two_mutexes"].into(), "{table}");
    assert!(table.contains("two_mutexes/"), "each mutex says its process: {table}");
    let (doc, table) =
        exported(&program, &["--profile", "--runs", "1", "--process", "second_prog"], dir.path());
    assert!(mutexes(&doc).iter().all(|m| m["comm"] == "second_prog"), "{table}");
    let words = table.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("named second_prog (--process"), "{table}");
    let out = assert_cmd::Command::cargo_bin("contend")
        .unwrap()
        .args([
            "run",
            "--profile",
            "--runs",
            "1",
            "--count-futex",
            "off",
            "--no-progress",
            "--process",
            "third",
        ])
        .arg("--")
        .args(program)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("--process third: no process of that name") && said.contains("second_prog"),
        "{said}"
    );
}
