//! Helpers shared by the integration tests: running contend as an
//! unprivileged user, finding programs on PATH, and skipping visibly.
//!
//! A test that cannot check what it is about (no root, a missing package,
//! one CPU) calls [`skip`]. Skips are never silent: each is appended to
//! `target/skipped-tests.txt`, which scripts/test.sh prints and counts at
//! the end; and with `CONTEND_NO_SKIP=1` (set by scripts/test.sh as root,
//! where it installs every precondition) a skip fails the test instead.

#![allow(dead_code)] // each test crate uses its own subset

pub mod browser;
pub mod run;

/// Every file under `dir` (recursively) whose name ends in `.{ext}`.
pub fn files_under(dir: &std::path::Path, ext: &str) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_under(&p, ext));
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
    out
}

/// tests/programs/NAME.c compiled into `dir` with `cc -g -O1 -pthread`
/// (no sibling calls: a wrapper must call, not jump; not
/// position-independent, so that its static locks have the same address
/// in every execution of a run).
pub fn compile(name: &str, dir: &std::path::Path) -> std::path::PathBuf {
    let flags = ["-g", "-O1", "-fno-optimize-sibling-calls", "-no-pie", "-pthread"];
    build("cc", &format!("{name}.c"), name, &flags, dir)
}

/// tests/programs/SOURCE built by `compiler` with `flags` into
/// `dir/OUTPUT`.
pub fn build(
    compiler: &str,
    source: &str,
    output: &str,
    flags: &[&str],
    dir: &std::path::Path,
) -> std::path::PathBuf {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs").join(source);
    let exe = dir.join(output);
    let out = std::process::Command::new(compiler)
        .args(flags)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("{compiler} runs: {e}"));
    assert!(out.status.success(), "{compiler} {}: {}", src.display(), String::from_utf8_lossy(&out.stderr));
    exe
}

#[track_caller]
/// A command that runs `program` as `nobody` (setpriv), where the suite
/// runs as root; `None` (the test is skipped) elsewhere.
pub fn as_nobody_cmd(program: &std::path::Path) -> Option<std::process::Command> {
    if !nix::unistd::geteuid().is_root() || which("setpriv").is_none() {
        skip("needs root and setpriv to drop privileges");
        return None;
    }
    let mut cmd = std::process::Command::new("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--"])
        .arg(program)
        .env_remove("XDG_RUNTIME_DIR");
    Some(cmd)
}

#[track_caller]
/// Runs contend as `nobody` with `args`.
pub fn as_nobody(args: &[&str]) -> Option<std::process::Output> {
    let bin = assert_cmd::cargo::cargo_bin("contend");
    let out = as_nobody_cmd(&bin)?.args(args).output().expect("setpriv runs");
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("Permission denied") && err.contains("setpriv") {
        skip(&format!("user nobody cannot execute {} (a checkout under /root?)", bin.display()));
        return None;
    }
    Some(out)
}

/// The path of `program` on PATH, if installed.
pub fn which(program: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|dir| std::path::Path::new(dir).join(program))
        .find(|p| p.is_file())
}

/// Records that the calling test could not check what it is about, and
/// why; fails it instead when `CONTEND_NO_SKIP=1`. The test name comes
/// from the test thread's name.
#[track_caller]
pub fn skip(why: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("?");
    let here = std::panic::Location::caller();
    let line = format!("{test} ({}:{}): {why}", here.file(), here.line());
    if std::env::var_os("CONTEND_NO_SKIP").is_some_and(|v| v == "1") {
        panic!("precondition missing, and CONTEND_NO_SKIP=1 forbids skipping: {line}");
    }
    eprintln!("skipped: {line}");
    let log = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/skipped-tests.txt");
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(log) {
        use std::io::Write;
        let _ = writeln!(f, "{line}");
    }
}

/// True when running as root; otherwise records a skip for `what`.
#[track_caller]
pub fn root_or_skip(what: &str) -> bool {
    let root = nix::unistd::geteuid().is_root();
    if !root {
        skip(&format!("needs root for {what}"));
    }
    root
}

/// Runs contend with `args`, expecting bad input: exit status 2, `says`
/// on stderr, no panic, and nothing measured (stdout empty).
#[track_caller]
pub fn refused(args: &[&str], says: &str) {
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("contend"))
        .args(args)
        .output()
        .expect("contend runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(says), "{args:?}: expected `{says}` in:\n{err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?} measured before refusing");
}

/// `contend lock ARGS` with a short window (200 ms after 50 ms, one run),
/// its JSON export read back; the run must succeed.
pub fn lock_json(args: &[&str]) -> serde_json::Value {
    lock_json_under(&[], args)
}

/// [`lock_json`], with contend started by `wrapper` (for instance
/// `["chrt", "-f", "1"]`); an empty wrapper starts contend itself.
pub fn lock_json_under(wrapper: &[&str], args: &[&str]) -> serde_json::Value {
    let bin = assert_cmd::cargo::cargo_bin("contend");
    let mut cmd = match wrapper.split_first() {
        Some((first, rest)) => {
            let mut c = std::process::Command::new(first);
            c.args(rest).arg(&bin);
            c
        }
        None => std::process::Command::new(&bin),
    };
    let out = cmd
        .args(["lock", "--duration", "200ms", "--warmup", "50ms", "--runs", "1", "--no-progress"])
        .args(args)
        .args(["--export-json", "-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{wrapper:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}
