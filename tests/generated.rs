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
    }
    Command::cargo_bin("contend").unwrap().args(["completions", "tcsh"]).assert().code(2);
}

#[test]
fn the_manual_has_a_page_per_command() {
    let roff = stdout(&["man"]);
    for page in
        ["contend", "contend-lock", "contend-wakeup", "contend-alloc", "contend-compare", "contend-cleanup"]
    {
        assert!(roff.contains(&format!(".TH {page} 1")), "no page {page}");
    }
    for flag in ["kill\\-holder\\-after", "trace\\-threshold", "max\\-steal"] {
        assert!(roff.contains(flag), "the manual lacks {flag}");
    }
}
