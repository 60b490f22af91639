//! `contend plot`: figures from lock and wakeup exports, as SVG and as
//! PNG, one export or several; and what it refuses. And `contend run
//! --plot`, which draws its figure as the run ends.

mod common;

use assert_cmd::Command;
use predicates::prelude::*;
use std::path::Path;

fn contend() -> Command {
    Command::cargo_bin("contend").expect("binary built")
}

/// A short mixed sweep (adaptive's policies, pthread as the reference)
/// exported to `path`.
fn export(path: &Path, hold: &str) {
    contend()
        .args(["lock", "--lock", "adaptive,pthread", "--spinners", "none,many", "--threads", "2,4"])
        .args(["--hold", hold, "--duration", "20ms", "--warmup", "0", "--runs", "2", "--export-json"])
        .arg(path)
        .assert()
        .success();
}

#[test]
fn an_export_becomes_a_png_of_the_promised_size_that_is_not_blank() {
    let dir = tempfile::tempdir().unwrap();
    let (json, png) = (dir.path().join("a.json"), dir.path().join("a.png"));
    export(&json, "1us");
    contend().arg("plot").arg(&json).arg("-o").arg(&png).assert().success();
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    // IHDR: width and height, big-endian, at bytes 16..24.
    let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    // 780 px for cs/s and fairness, 300 more for the wait panel (a lock
    // run times acquisitions by default).
    assert_eq!((width, height), (1100, 1080));
    // A white canvas compresses to almost nothing; lines and text do not.
    assert!(bytes.len() > 20_000, "{} bytes: blank?", bytes.len());
}

#[test]
fn several_exports_share_one_figure_with_series_named_after_their_files() {
    let dir = tempfile::tempdir().unwrap();
    let (before, after, svg) =
        (dir.path().join("before.json"), dir.path().join("after.json"), dir.path().join("f.svg"));
    export(&before, "1us");
    export(&after, "100ns");
    contend()
        .arg("plot")
        .args([&before, &after])
        .args(["-o".as_ref(), svg.as_os_str(), "--title".as_ref(), "before and after".as_ref()])
        .assert()
        .success();
    let text = std::fs::read_to_string(&svg).unwrap();
    for needle in [
        "before and after",
        "before: adaptive spinners=none",
        "after: adaptive spinners=many",
        "after: pthread",
    ] {
        assert!(text.contains(needle), "the figure lacks `{needle}`");
    }
    assert!(text.contains("before: contend lock --lock adaptive,pthread"), "no caption");
}

#[test]
fn a_wakeup_export_becomes_a_percentile_figure() {
    let dir = tempfile::tempdir().unwrap();
    let (json, svg, png) = (dir.path().join("w.json"), dir.path().join("w.svg"), dir.path().join("w.png"));
    contend()
        .args(["wakeup", "--primitive", "futex,pipe", "--iterations", "300", "--runs", "2", "--export-json"])
        .arg(&json)
        .assert()
        .success();
    contend().arg("plot").arg(&json).arg("-o").arg(&svg).assert().success();
    let text = std::fs::read_to_string(&svg).unwrap();
    for needle in [
        "Round-trip latency by percentile",
        "futex none",
        "pipe none",
        "\n50%\n",
        "\n90%\n",
        "contend wakeup",
    ] {
        assert!(text.contains(needle), "the figure lacks `{needle}`");
    }
    // 600 round trips a curve: 99% would rest on 6 samples beyond it, so
    // neither it nor the percentiles past it are labelled.
    for tail in ["\n99%\n", "\n99.9%\n", "\n99.99%\n"] {
        assert!(!text.contains(tail), "the figure labels `{tail}` from 600 samples");
    }
    contend().arg("plot").arg(&json).arg("-o").arg(&png).assert().success();
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert!(bytes.len() > 20_000, "{} bytes: blank?", bytes.len());
}

#[test]
fn what_it_cannot_draw_is_refused_with_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("a.json");
    export(&json, "1us");
    let refused = |args: &[&std::ffi::OsStr], says: &str| {
        contend().arg("plot").args(args).assert().code(2).stderr(predicate::str::contains(says));
    };
    refused(&[json.as_os_str(), "-o".as_ref(), "f.pdf".as_ref()], "name the figure .svg or .png");
    let alloc = dir.path().join("alloc.json");
    std::fs::write(&alloc, r#"{"schema_version":3,"family":"alloc","points":[]}"#).unwrap();
    refused(
        &[alloc.as_os_str(), "-o".as_ref(), "f.svg".as_ref()],
        "contend plot draws lock, wakeup and run exports",
    );
    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, r#"{"schema_version":3,"family":"wakeup","points":[]}"#).unwrap();
    refused(&[empty.as_os_str(), "-o".as_ref(), "f.svg".as_ref()], "no points to draw");
    let wakeup = dir.path().join("w.json");
    contend()
        .args(["wakeup", "--primitive", "futex", "--iterations", "200", "--runs", "1", "--export-json"])
        .arg(&wakeup)
        .assert()
        .success();
    refused(
        &[json.as_os_str(), wakeup.as_os_str(), "-o".as_ref(), "f.svg".as_ref()],
        "make different figures",
    );
    refused(&["/nonexistent.json".as_ref(), "-o".as_ref(), "f.svg".as_ref()], "reading /nonexistent.json");
}

#[test]
fn a_lock_export_gives_each_points_waits_by_percentile() {
    let dir = tempfile::tempdir().unwrap();
    let (json, svg) = (dir.path().join("rw.json"), dir.path().join("waits.svg"));
    contend()
        .args([
            "lock",
            "--lock",
            "futex-rw,pthread",
            "--read",
            "50%,90%",
            "--threads",
            "2",
            "--hold",
            "200ns",
        ])
        .args(["--latency-every", "1", "--duration", "50ms", "--warmup", "0", "--runs", "2", "--export-json"])
        .arg(&json)
        .assert()
        .success();
    contend().arg("plot").arg("--percentiles").arg(&json).arg("-o").arg(&svg).assert().success();
    let text = std::fs::read_to_string(&svg).unwrap();
    // A curve per point, a reader-writer lock's reads (dashed) and writes
    // in one colour, each named by what differs between the points
    // (pthread has no spin budget, so futex-rw's is named).
    for needle in [
        "Wait to acquire by percentile",
        "wait to acquire, µs (writes; reads dashed)",
        "futex-rw spin=100 read=50%",
        "futex-rw spin=100 read=90%",
        "pthread",
        "\n50%\n",
    ] {
        assert!(text.contains(needle), "the figure lacks `{needle}`");
    }

    // Nothing timed, nothing to draw: said, with status 2.
    let off = dir.path().join("off.json");
    contend()
        .args(["lock", "--lock", "futex", "--threads", "2", "--latency-every", "off", "--duration", "20ms"])
        .args(["--warmup", "0", "--runs", "1", "--export-json"])
        .arg(&off)
        .assert()
        .success();
    contend()
        .arg("plot")
        .arg("--percentiles")
        .arg(&off)
        .args(["-o", "f.svg"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no timed waits to draw"));
}

/// Up to 35 series each get a look of their own (colour, then marker
/// shape) and a legend entry that fits the figure; past that the figure
/// is refused, saying why, instead of recycling seven colours.
#[test]
fn thirty_series_are_drawn_each_their_own_way_and_more_than_35_refused() {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("host0.json");
    contend()
        .args([
            "wakeup",
            "--primitive",
            "posix-sem,sysv-sem,futex,eventfd,pipe,condvar",
            "--iterations",
            "200",
        ])
        .args(["--interval", "0", "--runs", "1", "--count-futex", "off", "--export-json"])
        .arg(&one)
        .assert()
        .success();
    let copies: Vec<_> = (1..=6)
        .map(|i| {
            let p = dir.path().join(format!("host{i}.json"));
            std::fs::copy(&one, &p).unwrap();
            p
        })
        .collect();
    let svg = dir.path().join("thirty.svg");
    contend().arg("plot").args(&copies[..5]).arg("-o").arg(&svg).assert().success();
    let text = std::fs::read_to_string(&svg).unwrap();
    for i in 1..=5 {
        let named = text.matches(&format!("host{i}: ")).count();
        let in_caption = text.matches(&format!("host{i}: contend")).count();
        assert_eq!(named - in_caption, 6, "six legend entries of host{i}");
    }
    // Past the seventh series the markers change shape: squares are
    // drawn (as rects) besides circles.
    assert!(text.contains("<circle") && text.contains("<rect") && text.contains("<polygon"), "shapes");
    contend()
        .arg("plot")
        .args(&copies)
        .arg("-o")
        .arg(dir.path().join("thirty-six.svg"))
        .assert()
        .failure()
        .stderr(predicate::str::contains("36 series in one figure: past 35 they cannot be told apart"));
}

/// futex and pthread at `threads`, one run each, with `args`, exported
/// to `json`.
fn one_run_export(json: &Path, threads: &str, args: &[&str]) {
    contend()
        .args(["lock", "--lock", "futex,pthread", "--threads", threads, "--duration", "20ms", "--runs", "1"])
        .args(args)
        .arg("--export-json")
        .arg(json)
        .assert()
        .success();
}

/// A figure of one-run points has no error bars, and its axis says so
/// instead of promising 95% intervals.
#[test]
fn one_run_figures_say_they_have_no_interval() {
    let dir = tempfile::tempdir().unwrap();
    let (json, svg) = (dir.path().join("one.json"), dir.path().join("one.svg"));
    one_run_export(&json, "2", &[]);
    contend().arg("plot").arg(&json).arg("-o").arg(&svg).assert().success();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("one run: no interval") && !text.contains("95% intervals"), "the axis");
}

/// A point that was not measured (here removed from the export, as an
/// interrupted sweep or a failed point leaves it) is a gap in its line,
/// not a line drawn across it.
#[test]
fn no_line_is_drawn_across_a_point_that_was_not_measured() {
    let dir = tempfile::tempdir().unwrap();
    let (json, svg) = (dir.path().join("gap.json"), dir.path().join("gap.svg"));
    one_run_export(&json, "1,2,3", &["--latency-every", "off"]);
    // Each polyline's colour and number of points.
    let lines = |svg: &Path| -> Vec<(String, usize)> {
        contend().arg("plot").arg(&json).arg("-o").arg(svg).assert().success();
        let text = std::fs::read_to_string(svg).unwrap();
        let attr = |p: &str, name: &str| {
            p.split(&format!("{name}=\"")).nth(1).and_then(|r| r.split('"').next()).unwrap_or("").to_string()
        };
        text.split("<polyline")
            .skip(1)
            .map(|p| (attr(p, "stroke"), attr(p, "points").split_whitespace().count()))
            .collect()
    };
    let count = |lines: &[(String, usize)], colour: &str, n: usize| {
        lines.iter().filter(|(c, k)| c == colour && *k == n).count()
    };
    let whole = lines(&svg);
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let points = doc["points"].as_array_mut().unwrap();
    let at = |p: &serde_json::Value| (p["point"]["lock"].clone(), p["point"]["workers"].as_u64());
    let before = points.len();
    points.retain(|p| at(p) != (serde_json::json!("futex"), Some(2)));
    assert_eq!(points.len(), before - 1, "futex at 2 threads was in the export");
    std::fs::write(&json, serde_json::to_vec(&doc).unwrap()).unwrap();
    let gapped = lines(&svg);
    // The colour whose three-point lines (throughput, fairness) went:
    // futex's. What is left of it are two-point lines: its legend's
    // sample only, as many as before, and no line from 1 to 3 threads.
    let lost: Vec<&String> =
        whole.iter().filter(|(c, n)| *n == 3 && count(&gapped, c, 3) == 0).map(|(c, _)| c).collect();
    assert!(!lost.is_empty(), "futex's lines: {whole:?} whole, {gapped:?} with the gap");
    let futex = lost[0];
    assert_eq!(count(&gapped, futex, 2), count(&whole, futex, 2), "{whole:?} whole, {gapped:?} with the gap");
    assert!(gapped.iter().filter(|(c, _)| c == futex).all(|&(_, n)| n <= 2), "{gapped:?}");
}

#[test]
fn contend_run_draws_its_figure_with_plot() {
    // The run docs promise `contend run --plot` (run.md, "Reading an
    // export later"); it was refused as a command that draws none.
    let dir = tempfile::tempdir().unwrap();
    let exe = common::compile("two_mutexes", dir.path());
    let svg = dir.path().join("run.svg");
    contend()
        .args(["run", "--profile", "--runs", "2", "--lock", "pthread,tas", "--count-futex", "off"])
        .args(["--no-progress", "--plot"])
        .arg(&svg)
        .arg("--")
        .arg(&exe)
        .assert()
        .success();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") || text.contains("<svg"), "an SVG");
    assert!(text.contains("percentile of the mutex"), "the waits by percentile, with --profile");
}
