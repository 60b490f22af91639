//! Faults round two, end to end: every input that can be checked before
//! measuring is refused in milliseconds with exit status 2 (export paths,
//! repeated list values, a lock directory nothing can be created in);
//! `compare` distinguishes no regression (0), regression (1) and bad
//! input or nothing compared (2); blocking opens outside the measurement
//! end on a signal; and `contend alloc` takes SIGTERM like the others, its
//! child dying with the coordinator.

mod common;

use common::refused;
use common::run::{alive, children};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("contend")
}

#[test]
fn export_paths_are_checked_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    // A 30 s window: only a check before measuring returns at once.
    let long = ["lock", "--threads", "2", "--duration", "30s", "--runs", "1"];
    for (flag, path, says) in [
        ("--export-csv", "/nonexistent/x.csv", "--export-csv /nonexistent/x.csv"),
        ("--export-json", d, "is a directory"),
        ("--export-markdown", "/proc/contend.md", "--export-markdown /proc/contend.md"),
        ("--export-gnuplot", "/nonexistent/x.dat", "--export-gnuplot"),
        ("--plot", "/nonexistent/x.svg", "--plot"),
    ] {
        refused(&[&long[..], &[flag, path]].concat(), says);
    }
    let same = dir.path().join("x").to_str().unwrap().to_string();
    refused(&[&long[..], &["--export-csv", &same, "--export-json", &same]].concat(), "both name");
    refused(&["alloc", "--allocator", "glibc", "--export-csv", "/nonexistent/a.csv"], "--export-csv");
    refused(&["wakeup", "--export-json", "/nonexistent/w.json"], "--export-json");
    // Nothing was left: no file is made before the results exist.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn repeated_list_values_and_unusable_lock_dirs_are_refused() {
    refused(&["lock", "--threads", "2,2"], "`2` repeats `2`");
    refused(&["lock", "--lock", "futex,seed,futex"], "`futex` repeats `futex`");
    refused(&["lock", "--hold", "1us,1000ns"], "`1000ns` repeats `1us`");
    refused(&["alloc", "--allocator", "glibc,glibc"], "`glibc` repeats `glibc`");
    refused(&["alloc", "--pattern", "local,local"], "repeats");
    refused(&["wakeup", "--primitive", "pipe,pipe"], "repeats");
    refused(&["lock", "--lock", "flock", "--lock-dir", "/proc"], "--lock-dir /proc");
    refused(&["lock", "--duration", "18446744073s", "--runs", "4294967295"], "longer than a week");
    refused(
        &["alloc", "--allocator", "glibc", "--pattern", "local", "--batch", "18446744073709551615"],
        "--batch",
    );
}

/// A JSON export to stdout, not a file named `-`, for alloc as for the
/// others, and no table mixed into it.
#[test]
fn alloc_exports_json_to_stdout_with_a_dash() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(bin())
        .current_dir(dir.path())
        .args(["alloc", "--allocator", "glibc", "--pattern", "local", "--threads", "1"])
        .args(["--iterations", "10", "--batch", "8", "--runs", "1", "--export-json", "-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON alone");
    assert_eq!(v["family"], "alloc");
    assert!(!dir.path().join("-").exists());
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn compare_fails_closed_with_distinct_codes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let stub = write(d, "stub.json", r#"{"schema_version":2,"family":"lock","points":5}"#);
    let empty = write(d, "empty.json", r#"{"schema_version":2,"family":"lock","points":[]}"#);
    refused(&["compare", &stub, &stub], "not a complete `lock` export");
    refused(&["compare", &empty, &empty], "nothing was compared");
    refused(&["compare", "/nonexistent.json", &empty], "reading /nonexistent.json");
    refused(&["compare", &empty, "--baseline", "futex"], "--baseline futex");

    // Two real exports with no point in common compare nothing: exit 2.
    let run = |lock: &str, name: &str| {
        let path = d.join(name);
        let ok = Command::new(bin())
            .args(["lock", "--lock", lock, "--threads", "2", "--duration", "50ms", "--warmup", "0"])
            .args(["--runs", "2", "--count-futex", "off", "--export-json"])
            .arg(&path)
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(ok.success());
        path.to_str().unwrap().to_string()
    };
    let (a, b) = (run("futex", "a.json"), run("seed", "b.json"));
    refused(&["compare", &a, &b], "nothing was compared");
    // The same point compared with itself: no regression, exit 0.
    let same = Command::new(bin()).args(["compare", &a, &a]).output().unwrap();
    assert_eq!(same.status.code(), Some(0), "{}", String::from_utf8_lossy(&same.stderr));
}

/// Waits for `child` to end, at most `limit`.
fn wait(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("contend did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Opening a FIFO with no reader blocks; outside the measurement that
/// open must still end on SIGTERM (it used to need SIGKILL).
#[test]
fn a_blocking_open_ends_on_a_signal() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let fifo = fifo.to_str().unwrap();
    for args in [
        &["compare", fifo, fifo][..],
        &["lock", "--threads", "2", "--duration", "100ms", "--export-json", fifo][..],
    ] {
        let mut child =
            Command::new(bin()).args(args).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(500));
        assert!(child.try_wait().unwrap().is_none(), "{args:?}: the open should block");
        kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).unwrap();
        let status = wait(&mut child, Duration::from_secs(120));
        assert_eq!(status.signal(), Some(Signal::SIGTERM as i32), "{args:?}: {status:?}");
    }
}

/// A long alloc run, and its allocator child once it exists.
fn start_alloc() -> (std::process::Child, i32) {
    let mut child = Command::new(bin())
        .args(["alloc", "--allocator", "glibc", "--pattern", "local", "--threads", "2"])
        .args(["--iterations", "30000000", "--runs", "3", "--count-futex", "off"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        if let Some(&kid) = children(child.id()).first() {
            return (child, kid);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("the allocator child never started");
}

#[test]
fn alloc_takes_sigterm_and_its_child_dies_with_it() {
    let (mut run, kid) = start_alloc();
    kill(Pid::from_raw(run.id() as i32), Signal::SIGTERM).unwrap();
    let status = wait(&mut run, Duration::from_secs(120));
    assert_eq!(status.code(), Some(143), "{status:?}");
    assert!(!alive(kid), "the allocator child outlived the run");

    // SIGKILL of the coordinator: the child goes too (PR_SET_PDEATHSIG).
    let (mut run, kid) = start_alloc();
    run.kill().unwrap();
    run.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(kid) {
        assert!(Instant::now() < deadline, "the allocator child outlived a SIGKILLed coordinator");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn readers_of_exports_refuse_a_stream_and_writers_an_unwritable_path_with_2() {
    // /dev/zero never ends: read up to the cap, then refused.
    let out = Command::new(bin()).args(["compare", "/dev/zero", "/dev/null"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a contend export"));
    for args in [
        &["plot", "/dev/zero", "-o", "/tmp/contend-unused.svg"][..],
        &["report", "/dev/zero", "-o", "/tmp/contend-unused.html"],
    ] {
        let out = Command::new(bin()).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
    // An unwritable -o is bad input, found before any export is read.
    refused(&["plot", "/nonexistent.json", "-o", "/nonexistent/dir/x.svg"], "-o /nonexistent/dir/x.svg");
    refused(&["report", "/nonexistent.json", "-o", "/proc/x.html"], "-o /proc/x.html");
}

#[test]
fn a_sigkilled_run_leaves_no_empty_export() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let mut child = Command::new(bin())
        .args([
            "lock",
            "--lock",
            "futex",
            "--threads",
            "1",
            "--duration",
            "60s",
            "--runs",
            "1",
            "--count-futex",
        ])
        .args(["off", "--no-progress", "--export-json"])
        .arg(&json)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Running: its worker thread exists (bounded by a hang guard).
    let guard = Instant::now() + Duration::from_secs(120);
    while std::fs::read_dir(format!("/proc/{}/task", child.id())).map_or(0, |d| d.count()) < 2 {
        assert!(Instant::now() < guard, "the run never started its worker");
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    assert_eq!(child.wait().unwrap().signal(), Some(9));
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(left.is_empty(), "a killed run left {left:?}");
}

/// A large valid export is read in memory bounded by a small multiple of
/// its size: a profiled run whose executions each carry their whole
/// profile, grown to 80 MB, is reported and plotted under a 600 MB
/// address-space limit (held as JSON values whole, it took about 17
/// times its size).
#[test]
fn a_large_export_is_read_within_a_small_multiple_of_its_size() {
    let Some(prlimit) = common::which("prlimit") else {
        common::skip("needs prlimit to bound the reader's memory");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let exe = common::compile("two_mutexes", dir.path());
    let small = dir.path().join("small.json");
    let out = Command::new(bin())
        .args(["run", "--profile", "--runs", "1", "--count-futex", "off", "--no-progress", "--export-json"])
        .arg(&small)
        .arg("--")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Each point's runs: its first run, again and again, to 80 MB.
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&small).unwrap()).unwrap();
    let mut runs = Vec::new();
    for (i, p) in doc["points"].as_array_mut().unwrap().iter_mut().enumerate() {
        runs.push(p["runs"][0].to_string());
        p["runs"] = serde_json::json!([format!("@RUNS{i}@")]);
    }
    let per_copy: usize = runs.iter().map(String::len).sum();
    let copies = 80_000_000 / per_copy;
    let mut text = doc.to_string();
    for (i, run) in runs.iter().enumerate() {
        text = text.replace(&format!("\"@RUNS{i}@\""), &vec![run.as_str(); copies].join(","));
    }
    let big = dir.path().join("big.json");
    std::fs::write(&big, &text).unwrap();
    drop(text);
    for (what, out) in [("report", "big.html"), ("plot", "big.svg")] {
        let status = Command::new(&prlimit)
            .arg("--as=600000000")
            .arg(bin())
            .arg(what)
            .arg(&big)
            .arg("-o")
            .arg(dir.path().join(out))
            .status()
            .unwrap();
        assert!(status.success(), "{what} of an 80 MB export within 600 MB: {status}");
    }
}

/// A tiny tmpfs, full, mounted for one test and unmounted after.
struct FullDisk(tempfile::TempDir);

impl FullDisk {
    fn mount() -> Option<Self> {
        if !common::root_or_skip("mounting a full file system") {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=8k,mode=1777", "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            common::skip("cannot mount a tmpfs here (a container without CAP_SYS_ADMIN?)");
            return None;
        }
        // Fill it: what fits, then nothing.
        let _ = std::fs::write(dir.path().join("fill"), vec![0u8; 64 << 10]);
        Some(FullDisk(dir))
    }
}

impl Drop for FullDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

/// A full disk where contend must write its record or its interposer copy
/// fails the run (1), for every command alike, naming the directory, and
/// blames no flag that was not given (`lock` blamed --lock-dir).
#[test]
fn a_full_disk_fails_every_command_with_1_and_names_where() {
    if std::path::Path::new(&format!("/run/user/{}", nix::unistd::geteuid())).is_dir() {
        common::skip("the ledger lives in /run/user/UID here, not in TMPDIR");
        return;
    }
    let Some(full) = FullDisk::mount() else { return };
    let tmp = full.0.path().to_str().unwrap().to_string();
    let quick = ["--duration", "50ms", "--runs", "1", "--no-progress"];
    for args in [
        &[&["lock", "--lock", "flock", "--threads", "2"][..], &quick[..]].concat(),
        &[&["wakeup", "--pairs", "1", "--no-progress"][..]].concat(),
        &[&["run", "--runs", "1", "--no-progress", "--", "true"][..]].concat(),
    ] {
        let out = Command::new(bin())
            .args(args)
            .env_remove("XDG_RUNTIME_DIR")
            .env_remove("CONTEND_INTERPOSER")
            .env("TMPDIR", &tmp)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(&tmp) && err.contains("No space left"), "{args:?}: names where: {err}");
        assert!(!err.contains("--lock-dir"), "{args:?}: --lock-dir was not given: {err}");
    }
}
