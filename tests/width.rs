//! The terminal's width: every family's table, legend and notes fit the
//! width contend is given (`COLUMNS` here, since a test's output is a
//! pipe), at 80, 100 and 160 columns; columns that do not fit go in
//! blocks that repeat the row's name, and a call site is never squeezed.

mod common;

use assert_cmd::Command;

/// contend's output (stdout, or stderr for `run`, whose program owns
/// stdout) of `args` at `width` columns.
fn at(width: usize, args: &[&str]) -> String {
    let out = Command::cargo_bin("contend")
        .unwrap()
        .env("COLUMNS", width.to_string())
        .args(args)
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    if args[0] == "run" {
        String::from_utf8(out.stderr).unwrap()
    } else {
        stdout
    }
}

fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// Every line fits `width`, and the table's blocks (header lines that
/// start with `key`) are fewer the wider the terminal.
fn fits_in_fewer_blocks_when_wider(args: &[&str], key: &str) {
    let mut blocks = Vec::new();
    for width in [80, 100, 160] {
        let text = at(width, args);
        assert!(widest(&text) <= width, "{} columns at {width}:\n{text}", widest(&text));
        blocks.push(text.lines().filter(|l| l.trim_start().starts_with(key)).count());
    }
    assert!(blocks[0] > blocks[2] && blocks[2] >= 1, "blocks at 80, 100, 160: {blocks:?}");
}

#[test]
fn the_lock_table_fits_every_width() {
    fits_in_fewer_blocks_when_wider(
        &["lock", "--lock", "ttas,pthread", "--threads", "2", "--duration", "20ms", "--warmup", "0"]
            .into_iter()
            .chain(["--runs", "2", "--wide", "--no-progress"])
            .collect::<Vec<_>>(),
        "lock ",
    );
}

#[test]
fn the_wakeup_table_fits_every_width() {
    fits_in_fewer_blocks_when_wider(
        &["wakeup", "--primitive", "futex", "--pairs", "2", "--iterations", "300", "--runs", "2", "--wide"],
        "primitive ",
    );
}

#[test]
fn the_alloc_table_fits_every_width() {
    fits_in_fewer_blocks_when_wider(
        &"alloc --allocator glibc --threads 2 --pairs 1 --iterations 20 --batch 8 --runs 2 --wide --no-progress"
            .split(' ')
            .collect::<Vec<_>>(),
        "pattern ",
    );
}

/// The profile at 80 columns: every line of it fits, and each mutex's
/// call site is printed whole on one line (it used to shrink to one
/// character when a kind column or a long verdict took the room).
#[test]
fn the_profile_keeps_its_call_sites_whole_at_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    let exe = common::compile("two_mutexes", dir.path());
    let json = dir.path().join("run.json");
    let exe = exe.to_str().unwrap();
    let json_arg = json.to_str().unwrap();
    let args =
        ["run", "--profile", "--runs", "1", "--count-futex", "off", "--no-progress", "--output", "null"];
    let text = at(80, &[&args[..], &["--export-json", json_arg, "--", exe]].concat());
    let profile = &text[text.find("profile under").expect("the profile is printed")..];
    assert!(widest(profile) <= 80, "{} columns:\n{profile}", widest(profile));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let mutexes = doc["points"][0]["sample"]["mutexes"].as_array().unwrap();
    assert!(!mutexes.is_empty());
    for m in mutexes.iter().take(10) {
        let site = m["waits_at"].as_str().unwrap();
        assert!(profile.lines().any(|l| l.contains(site)), "{site} is not whole on a line:\n{profile}");
    }
}
