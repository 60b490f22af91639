//! The house rules a reviewer would otherwise check by hand: every Rust
//! file (src/, crates/, tests/, benches/, build.rs) opens with a `//!`
//! comment that says what it is for, and none is longer than 500 lines
//! (a file past that is doing more than one thing: split it by what it
//! does, as ARCHITECTURE.md says).

mod common;

use std::path::{Path, PathBuf};

/// The most lines a Rust file of the tree may have.
const MOST_LINES: usize = 500;

fn tree() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("build.rs")];
    for dir in ["src", "crates", "tests", "benches"] {
        files.extend(common::files_under(&root.join(dir), "rs"));
    }
    files
}

fn shown(p: &Path) -> String {
    p.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(p).display().to_string()
}

#[test]
fn every_rust_file_says_what_it_is_for_and_stays_under_the_line_limit() {
    let files = tree();
    assert!(files.len() > 250, "only {} Rust files found: is the walk broken?", files.len());
    let mut long = Vec::new();
    let mut undocumented = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let lines = text.lines().count();
        if lines > MOST_LINES {
            long.push(format!("{}: {lines} lines", shown(f)));
        }
        if !text.starts_with("//!") {
            undocumented.push(shown(f));
        }
    }
    assert!(long.is_empty(), "over {MOST_LINES} lines:\n{}", long.join("\n"));
    assert!(undocumented.is_empty(), "no `//!` comment first:\n{}", undocumented.join("\n"));
}

/// The words of ARCHITECTURE.md's file-list paragraph that starts with
/// `head` (up to the next unindented line).
fn listed(head: &str) -> String {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md")).unwrap();
    let start = text.find(&format!("\n{head}")).unwrap_or_else(|| panic!("ARCHITECTURE.md lists no {head}"));
    let mut out = String::new();
    for (i, line) in text[start + 1..].lines().enumerate() {
        if i > 0 && !line.starts_with(' ') {
            break;
        }
        out.push_str(line);
        out.push(' ');
    }
    out
}

/// Whether `name` stands in `text` as a word of its own (not inside
/// another name: `run` in `run_safety` does not count).
fn names(text: &str, name: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name)
        .any(|(i, _)| !text[..i].ends_with(word) && !text[i + name.len()..].starts_with(word))
}

#[test]
fn the_architecture_names_every_test_file_and_every_file_of_the_interposer() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut missing = Vec::new();
    for (head, dir, strip) in
        [("tests/", "tests", true), ("crates/interpose/", "crates/interpose/src", false)]
    {
        let text = listed(head);
        for e in std::fs::read_dir(root.join(dir)).unwrap().flatten() {
            let file = e.file_name().to_string_lossy().into_owned();
            let is_rs = file.ends_with(".rs");
            if strip && !is_rs {
                continue; // tests/common and tests/programs are named as folders
            }
            let name = if strip {
                file.trim_end_matches(".rs").to_string()
            } else if is_rs {
                file
            } else {
                format!("{file}/")
            };
            if !names(&text, &name) {
                missing.push(format!("{dir}/{name}"));
            }
        }
    }
    assert!(missing.is_empty(), "ARCHITECTURE.md's file lists leave out:\n{}", missing.join("\n"));
}
