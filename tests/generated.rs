//! What clap generates from the command definitions: shell completions
//! and the manual pages cover every measuring command and its flags, so
//! they cannot fall behind the CLI.

use assert_cmd::Command;

fn stdout(args: &[&str]) -> String {
    let out = Command::cargo_bin("contend").unwrap().args(args).assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

#[test]
fn completions_know_every_family_and_its_flags() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = stdout(&["completions", shell]);
        // Flags without their dashes: fish spells them `-l spinners`.
        for word in ["lock", "wakeup", "alloc", "spinners", "primitive", "allocator", "kill-holder-after"] {
            assert!(script.contains(word), "{shell} completions lack `{word}`");
        }
        assert!(!script.contains("__alloc-child"), "{shell}: the hidden child command leaked");
        // Names complete where a flag takes them (clap_complete writes
        // value completions for bash, zsh and fish only); test-only locks
        // are never offered.
        if ["bash", "zsh", "fish"].contains(&shell) {
            for name in ["parking_lot", "pthread-robust", "eventfd", "mutex-handoff", "tcmalloc"] {
                assert!(script.contains(name), "{shell} completions lack the name `{name}`");
            }
        }
        assert!(!script.contains("lost-wake"), "{shell}: a test-only lock is offered");
    }
    Command::cargo_bin("contend").unwrap().args(["completions", "tcsh"]).assert().code(2);
}

#[test]
fn the_manual_has_a_page_per_command_with_the_reader_sections() {
    let dir = tempfile::tempdir().unwrap();
    let said = stdout(&["man", "--dir", dir.path().to_str().unwrap()]);
    assert!(said.contains("pages written"), "{said}");
    for page in [
        "contend",
        "contend-lock",
        "contend-wakeup",
        "contend-alloc",
        "contend-run",
        "contend-compare",
        "contend-cleanup",
    ] {
        let roff = std::fs::read_to_string(dir.path().join(format!("{page}.1"))).expect(page);
        assert!(roff.contains(&format!(".TH {page} 1")), "no page {page}");
        for section in ["EXIT STATUS", "ENVIRONMENT", "FILES", "SEE ALSO"] {
            assert!(roff.contains(&format!(".SH \"{section}\"")), "{page} lacks {section}");
        }
    }
    assert!(!dir.path().join("contend-__alloc-child.1").exists(), "hidden commands get no page");
    // One page printed: the one asked for, only.
    let lock = stdout(&["man", "lock"]);
    assert!(lock.contains(".TH contend-lock 1") && !lock.contains(".TH contend-wakeup"));
    for flag in ["kill\\-holder\\-after", "max\\-steal"] {
        assert!(lock.contains(flag), "the manual lacks {flag}");
    }
    assert!(stdout(&["man", "wakeup"]).contains("trace\\-threshold"));
    assert!(stdout(&["man"]).contains(".TH contend 1"));
    Command::cargo_bin("contend")
        .unwrap()
        .args(["man", "lcok"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("did you mean `lock`?"));
}
