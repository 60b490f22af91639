//! Root's exports into a directory another user can write: each attack is
//! replayed as `nobody`, who owns `share/` and plants what it likes there
//! before root writes `share/res.json`:
//!
//! - a symlink to a root-owned file (root replaced that file before);
//! - a symlink to a device (root wrote over its first bytes);
//! - a FIFO (root handed the whole export to nobody's reader);
//! - a symlink in place of a directory on the way (`share/sub -> /etc`);
//!
//! for `lock --export-json`, `run --export-json`, `plot -o`, `report -o`
//! and `man --dir`. Each is refused with exit 2 naming the owner, and
//! what the link pointed at is untouched. Root's own links and streams
//! still work.

mod common;

use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

fn contend(args: &[&str]) -> Output {
    assert_cmd::Command::new(assert_cmd::cargo::cargo_bin("contend"))
        .args(args)
        .timeout(Duration::from_secs(120))
        .output()
        .expect("contend runs")
}

/// A lock run that would take 30 s: only a check before measuring ends it
/// at once.
const LONG: [&str; 8] = ["lock", "--threads", "2", "--duration", "30s", "--runs", "1", "--no-progress"];

/// The playground: a root-owned directory everyone can enter, holding
/// `share/` (nobody's), `victim` (root's file) and `rootdir/` (root's).
struct Ground {
    dir: tempfile::TempDir,
}

impl Ground {
    fn new() -> Option<Self> {
        if !common::root_or_skip("replaying export attacks as another user") {
            return None;
        }
        common::as_nobody_cmd(Path::new("/bin/true"))?;
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let share = dir.path().join("share");
        std::fs::create_dir(&share).unwrap();
        std::os::unix::fs::chown(&share, Some(65534), Some(65534)).unwrap();
        std::fs::write(dir.path().join("victim"), "precious").unwrap();
        std::fs::create_dir(dir.path().join("rootdir")).unwrap();
        Some(Ground { dir })
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn text(&self, name: &str) -> String {
        self.path(name).to_str().unwrap().to_string()
    }

    /// Runs `script` as nobody (sh -c), which must succeed.
    fn as_nobody(&self, script: &str) {
        let out = common::as_nobody_cmd(Path::new("/bin/sh")).unwrap().args(["-c", script]).output().unwrap();
        assert!(out.status.success(), "as nobody: {script}: {}", String::from_utf8_lossy(&out.stderr));
    }

    fn victim_intact(&self) {
        assert_eq!(std::fs::read_to_string(self.path("victim")).unwrap(), "precious");
    }
}

/// `contend ARGS` was refused with 2, naming nobody, at once.
fn refused_naming_nobody(args: &[&str]) -> String {
    let started = std::time::Instant::now();
    let out = contend(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "contend {args:?}: {err}");
    assert!(err.contains("nobody (uid 65534)"), "the owner is named: {err}");
    assert!(started.elapsed() < Duration::from_secs(20), "refused before measuring: {err}");
    err
}

#[test]
fn another_users_symlink_to_a_file_or_a_device_is_not_followed() {
    let Some(g) = Ground::new() else { return };
    let res = g.text("share/res.json");
    g.as_nobody(&format!("ln -s {} {res}", g.text("victim")));
    let err = refused_naming_nobody(&[&LONG[..], &["--export-json", &res]].concat());
    assert!(err.contains("symlink owned by nobody"), "{err}");
    g.victim_intact();
    assert!(g.path("share/res.json").symlink_metadata().unwrap().file_type().is_symlink());
    // A link to a device: refused for its owner, whatever the device.
    let dev = g.text("share/dev.json");
    g.as_nobody(&format!("ln -s /dev/null {dev}"));
    refused_naming_nobody(&[&LONG[..], &["--export-csv", &dev]].concat());
}

#[test]
fn another_users_fifo_gets_no_export_and_nothing_waits_for_a_reader() {
    let Some(g) = Ground::new() else { return };
    let res = g.text("share/res.json");
    g.as_nobody(&format!("mkfifo -m 0666 {res}"));
    let err = refused_naming_nobody(&[&LONG[..], &["--export-json", &res]].concat());
    assert!(err.contains("a FIFO owned by nobody"), "{err}");
    assert!(g.path("share/res.json").metadata().unwrap().file_type().is_fifo());
}

#[test]
fn a_directory_swapped_for_another_users_link_is_not_entered() {
    let Some(g) = Ground::new() else { return };
    g.as_nobody(&format!("ln -s {} {}", g.text("rootdir"), g.text("share/sub")));
    let res = g.text("share/sub/res.json");
    refused_naming_nobody(&[&LONG[..], &["--export-markdown", &res]].concat());
    assert_eq!(std::fs::read_dir(g.path("rootdir")).unwrap().count(), 0, "nothing made through the link");
}

#[test]
fn run_plot_report_and_man_refuse_the_planted_link_too() {
    let Some(g) = Ground::new() else { return };
    let res = g.text("share/res");
    g.as_nobody(&format!(
        "for x in json svg png html; do ln -s {} {res}.$x; done; mkdir {dir}/man; \
         ln -s {} {dir}/man/contend.1",
        g.text("victim"),
        g.text("victim"),
        dir = g.text("share")
    ));
    // A real export for plot and report to read.
    let input = g.text("in.json");
    let out =
        contend(&["lock", "--threads", "1", "--duration", "20ms", "--runs", "1", "--export-json", &input]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    refused_naming_nobody(&["run", "--runs", "1", "--export-json", &format!("{res}.json"), "--", "true"]);
    refused_naming_nobody(&["plot", &input, "-o", &format!("{res}.svg")]);
    refused_naming_nobody(&["plot", &input, "-o", &format!("{res}.png")]);
    refused_naming_nobody(&["report", &input, "-o", &format!("{res}.html")]);
    refused_naming_nobody(&["man", "--dir", &g.text("share/man")]);
    g.victim_intact();
    assert_eq!(std::fs::read_dir(g.path("share/man")).unwrap().count(), 1, "no page written beside it");
}

#[test]
fn roots_own_links_and_streams_still_work() {
    let Some(g) = Ground::new() else { return };
    // Root's link to root's file: the file is replaced, the link stays.
    std::fs::write(g.path("rootdir/old.json"), "old").unwrap();
    std::fs::set_permissions(g.path("rootdir/old.json"), std::fs::Permissions::from_mode(0o640)).unwrap();
    std::os::unix::fs::symlink(g.path("rootdir/old.json"), g.path("mine.json")).unwrap();
    let quick = ["lock", "--threads", "1", "--duration", "20ms", "--runs", "1", "--no-progress"];
    let out = contend(&[&quick[..], &["--export-json", &g.text("mine.json")]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(g.path("mine.json").symlink_metadata().unwrap().file_type().is_symlink());
    let written = std::fs::read_to_string(g.path("rootdir/old.json")).unwrap();
    assert!(written.contains("\"family\""), "the export replaced the file the link names");
    assert_eq!(g.path("rootdir/old.json").metadata().unwrap().mode() & 0o777, 0o640, "its mode kept");
    // nobody's regular file in nobody's directory is replaced by root's,
    // which does not take nobody's 0666.
    g.as_nobody(&format!("touch {0}; chmod 666 {0}", g.text("share/plain.json")));
    let out = contend(&[&quick[..], &["--export-json", &g.text("share/plain.json")]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let meta = g.path("share/plain.json").metadata().unwrap();
    assert_eq!((meta.uid(), meta.mode() & 0o002), (0, 0), "root's file, not writable by others");
    // The process's own stream, by name.
    let out = Command::new(assert_cmd::cargo::cargo_bin("contend"))
        .args(quick)
        .args(["--export-csv", "/dev/stdout"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("lock,"), "the CSV reached stdout");
}
