//! `contend report`: one self-contained HTML page from exports of every
//! family. What a browser shows of it is checked by headless Chromium
//! where it is installed (scripts/test.sh installs it as root).

mod common;

use assert_cmd::Command;
use predicates::prelude::*;
use std::path::Path;

fn contend() -> Command {
    Command::cargo_bin("contend").expect("binary built")
}

fn run(args: &[&str], export: &Path) {
    contend().args(args).arg("--export-json").arg(export).assert().success();
}

/// A page from a lock, a wakeup and an alloc export.
fn page(dir: &Path) -> std::path::PathBuf {
    let (lock, wakeup, alloc) = (dir.join("lock.json"), dir.join("wakeup.json"), dir.join("alloc.json"));
    run(&["lock", "--lock", "futex,pthread", "--threads", "2,4", "--duration", "20ms", "--runs", "2"], &lock);
    run(&["wakeup", "--primitive", "futex", "--iterations", "200", "--runs", "1"], &wakeup);
    run(
        &[
            "alloc",
            "--allocator",
            "glibc",
            "--pattern",
            "local",
            "--threads",
            "1",
            "--iterations",
            "50",
            "--runs",
            "1",
        ],
        &alloc,
    );
    let html = dir.join("report.html");
    contend()
        .arg("report")
        .args([&lock, &wakeup, &alloc])
        .arg("-o")
        .arg(&html)
        .args(["--title", "a <b> & c"])
        .assert()
        .success();
    html
}

#[test]
fn the_page_holds_every_export_and_loads_nothing_from_outside() {
    let dir = tempfile::tempdir().unwrap();
    let html = std::fs::read_to_string(page(dir.path())).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<title>a &lt;b&gt; &amp; c</title>"), "the title is escaped");
    for needle in [
        "lock.json",
        "wakeup.json",
        "alloc.json",
        "cs/s (critical sections per second), fairness and wait to acquire against workers",
        "Round-trip latency by percentile",
        "<th>cs/s</th>",
        "<th>p99.9 µs</th>",
        "<th>vs glibc</th>",
        "contend lock --lock futex,pthread",
        "oversubscribed",
    ] {
        assert!(html.contains(needle), "the page lacks `{needle}`");
    }
    assert_eq!(html.matches("<svg").count(), 2, "one figure for lock, one for wakeup");
    // The answers first: a summary row per export before any figure, and
    // the warnings folded under each export's tables, counted by kind.
    let summary = html.find("<h2>Summary</h2>").expect("a summary");
    assert!(summary < html.find("<figure>").unwrap(), "the summary comes before the figures");
    assert_eq!(html.matches("<a href=\"#export-").count(), 3, "a linked row per export");
    assert!(html.contains("best of 4 points by cs/s: "), "the lock export's answer");
    let folded = html.find("<details class=\"warn\"><summary>").expect("folded warnings");
    assert!(folded > html.find("<th>cs/s</th>").unwrap(), "after the lock table");
    // The lock export's block (the first): its counts by kind name the
    // oversubscription (4 threads on 2 CPUs), wherever a load warning of
    // a busy host puts it in the list.
    let counts = &html[folded..];
    let counts = &counts[..counts.find("</summary>").unwrap()];
    assert!(counts.contains(" oversubscribed"), "counted by kind: {counts}");
    // Nothing fetched: no script, stylesheet link, image or URL but the
    // SVG namespace name.
    for absent in ["<script", "<link", "<img", "src=", "url("] {
        assert!(!html.contains(absent), "the page loads something: `{absent}`");
    }
    let urls = html.matches("http").count();
    assert_eq!(
        urls,
        html.matches("http://www.w3.org/2000/svg").count(),
        "a URL other than the SVG namespace"
    );
}

#[test]
fn a_browser_shows_the_page_without_errors_and_not_blank() {
    let dir = tempfile::tempdir().unwrap();
    common::browser::shows_without_errors(&page(dir.path()));
}

#[test]
fn it_is_written_only_as_html() {
    contend()
        .args(["report", "/nonexistent.json", "-o", "r.pdf"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("name the report .html"));
}

/// A figure or page written into a FIFO whose reader stopped reading
/// blocks in the write for ever: SIGTERM must still end contend, as it
/// ends any program (before, contend kept the signal blocked for its
/// signalfd and only SIGKILL ended it). The reader's pipe is cut to one
/// page so that any figure fills it.
#[test]
fn sigterm_ends_a_write_into_a_stalled_fifo() {
    use nix::fcntl::{fcntl, FcntlArg, OFlag};
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("lock.json");
    run(&["lock", "--lock", "futex,pthread", "--threads", "2,4", "--duration", "20ms", "--runs", "1"], &lock);
    for (command, name) in [("plot", "out.svg"), ("report", "out.html")] {
        let fifo = dir.path().join(name);
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("contend"))
            .args([command, lock.to_str().unwrap(), "-o", fifo.to_str().unwrap()])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Opened without blocking, and never read: contend's open then
        // returns, and its write stops once this one page is full.
        let reader = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(OFlag::O_NONBLOCK.bits())
            .open(&fifo)
            .unwrap();
        fcntl(reader.as_raw_fd(), FcntlArg::F_SETPIPE_SZ(4096)).unwrap();
        common::run::until("contend filled the pipe", || {
            let mut queued: nix::libc::c_int = 0;
            // SAFETY: FIONREAD writes one int through the pointer, which
            // points at a live local of that type.
            unsafe { nix::libc::ioctl(reader.as_raw_fd(), nix::libc::FIONREAD, &mut queued) };
            queued >= 4096
        });
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        )
        .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("contend {command} ignored SIGTERM while blocked writing into a FIFO");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        assert_eq!(status.signal(), Some(nix::libc::SIGTERM), "contend {command}: {status}");
        drop(reader);
    }
}

/// A run export's table carries what the terminal's does: each lock's
/// ratio to glibc's mutex with its interval and run count, and glibc's
/// mutex run without the profile named so, not a second "pthread".
#[test]
fn the_run_table_carries_the_ratio_its_interval_and_the_unprofiled_row() {
    let dir = tempfile::tempdir().unwrap();
    let exe = common::compile("two_mutexes", dir.path());
    let export = dir.path().join("run.json");
    contend()
        .args(["run", "--profile", "--lock", "pthread,tas", "--runs", "2", "--count-futex", "off"])
        .args(["--no-progress", "--max-slowdown", "0", "--export-json"])
        .arg(&export)
        .arg("--")
        .arg(&exe)
        .assert()
        .success();
    let page = dir.path().join("page.html");
    contend().arg("report").arg(&export).arg("-o").arg(&page).assert().success();
    let html = std::fs::read_to_string(&page).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&export).unwrap()).unwrap();
    let tas = doc["vs_glibc"].as_array().unwrap().iter().find(|v| v["lock"] == "tas").unwrap();
    let (ratio, lo, hi) =
        (tas["ratio"].as_f64().unwrap(), tas["ci95"][0].as_f64().unwrap(), tas["ci95"][1].as_f64().unwrap());
    for needle in [
        "<th>vs pthread</th>".to_string(),
        "<th>95% interval</th>".to_string(),
        "<th>runs</th>".to_string(),
        format!("<td>{ratio:.3}</td><td>{lo:.3}..{hi:.3}</td>"),
        "<td>pthread (unprofiled)</td>".to_string(),
    ] {
        assert!(html.contains(&needle), "the page lacks `{needle}`");
    }
}
