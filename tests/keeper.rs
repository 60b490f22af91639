//! Nothing a `contend run` program starts outlives the keeper that ends
//! it, however the keeper goes, and one event is one signal. Each test
//! replays what broke:
//!
//! - the keeper is SIGKILLed: the program's setsid daemon kept running,
//!   contend said only "keeper ... SIGKILL", and cleanup found nothing;
//! - contend and the keeper are SIGKILLed together: `contend cleanup`
//!   must end what the program left;
//! - `timeout 1 contend run -- server.sh`: GNU timeout signals contend and
//!   then its process group, and contend took the second SIGTERM for a
//!   second Ctrl-C and killed the server without its grace.
//!
//! Waits are bounded by events, with a generous cap against a hang.

mod common;

use common::run::{alive, read_pid, until};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn contend_bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("contend")
}

/// A program that leaves a setsid daemon and then runs on, each writing
/// its pid to a file in `dir` (`daemon`, `program`).
fn daemonizing(dir: &Path) -> String {
    format!(
        "setsid sh -c 'echo $$ > {d}.tmp; mv {d}.tmp {d}; exec sleep 300' </dev/null >/dev/null 2>&1 & \
         echo $$ > {p}.tmp; mv {p}.tmp {p}; exec sleep 300",
        d = dir.join("daemon").display(),
        p = dir.join("program").display()
    )
}

/// Starts `contend run` of `script` with its ledger in `ledger`; waits for
/// the program and its daemon: (contend, keeper, program, daemon).
fn start(script: &str, dir: &Path, ledger: &Path) -> (std::process::Child, i32, i32, i32) {
    let contend = Command::new(contend_bin())
        .args(["run", "--runs", "1", "--count-futex", "off", "--no-progress", "--", "sh", "-c", script])
        .env("XDG_RUNTIME_DIR", ledger)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (daemon_file, program_file) = (dir.join("daemon"), dir.join("program"));
    until("the program and its daemon start", || daemon_file.exists() && program_file.exists());
    let keeper = common::run::children(contend.id())[0];
    let (program, daemon) = (read_pid(&program_file).unwrap(), read_pid(&daemon_file).unwrap());
    assert!(alive(program) && alive(daemon));
    (contend, keeper, program, daemon)
}

fn sigkill(pid: i32) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL).unwrap();
}

#[test]
fn a_sigkilled_keeper_leaves_nothing_running_and_contend_says_what_it_ended() {
    let (dir, ledger) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (contend, keeper, program, daemon) = start(&daemonizing(dir.path()), dir.path(), ledger.path());
    sigkill(keeper);
    let out = contend.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("keeper process was killed") && err.contains("contend ended the"), "{err}");
    until("the program dies", || !alive(program));
    until("the daemon dies", || !alive(daemon));
    // contend removed its own directory and record: nothing to clean up.
    let out =
        Command::new(contend_bin()).arg("cleanup").env("XDG_RUNTIME_DIR", ledger.path()).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "nothing to clean up");
}

#[test]
fn when_contend_and_its_keeper_both_die_cleanup_ends_what_the_program_left() {
    let (dir, ledger) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (mut contend, keeper, _program, daemon) = start(&daemonizing(dir.path()), dir.path(), ledger.path());
    // contend is stopped first: a running contend sees its keeper die and
    // ends the program's tree itself (the first test) before the second
    // SIGKILL lands, which is what CI caught once on a loaded machine.
    let contend_pid = nix::unistd::Pid::from_raw(contend.id() as i32);
    nix::sys::signal::kill(contend_pid, nix::sys::signal::Signal::SIGSTOP).unwrap();
    until("contend is stopped", || common::run::stopped(contend.id() as i32));
    sigkill(keeper);
    sigkill(contend.id() as i32);
    contend.wait().unwrap();
    // Nobody is left to end the daemon; the ledger knows the run.
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(alive(daemon), "the daemon outlived both, as a daemon would");
    let out =
        Command::new(contend_bin()).arg("cleanup").env("XDG_RUNTIME_DIR", ledger.path()).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("left running") && said.contains(&daemon.to_string()), "{said}");
    until("cleanup ends the daemon", || !alive(daemon));
}

#[test]
fn timeout_around_a_server_script_gives_it_its_grace() {
    let Some(timeout) = common::which("timeout") else {
        common::skip("needs GNU timeout");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("graceful");
    // A server that takes 0.3 s to shut down on SIGTERM, well inside the
    // 5 s grace; killed at once, it leaves no mark.
    let script = format!("trap 'sleep 0.3; echo yes > {}; exit 0' TERM; sleep 300 & wait", mark.display());
    // Three times: whether contend reads the first SIGTERM before the
    // second arrives is up to the scheduler.
    for round in 0..3 {
        let _ = std::fs::remove_file(&mark);
        let out = Command::new(&timeout)
            .args(["1"])
            .arg(contend_bin())
            .args(["run", "--runs", "1", "--count-futex", "off", "--no-progress", "--grace", "5s", "--"])
            .args(["sh", "-c", &script])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(124), "timeout's own status: {err}");
        assert!(!err.contains("exiting at once"), "round {round}: one event taken for two: {err}");
        assert!(mark.exists(), "round {round}: the server was killed without its grace: {err}");
    }
}

#[test]
fn a_run_interrupted_before_any_execution_ended_says_nothing_of_the_programs_mutexes() {
    let dir = tempfile::tempdir().unwrap();
    let started = dir.path().join("started");
    let script = format!("touch {}; exec sleep 300", started.display());
    let contend = Command::new(contend_bin())
        .args(["run", "--runs", "3", "--count-futex", "off", "--no-progress", "--", "sh", "-c", &script])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    until("the program starts", || started.exists());
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(contend.id() as i32), nix::sys::signal::Signal::SIGINT)
        .unwrap();
    let out = contend.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(!err.contains("took no pthread mutex"), "nothing is known of its mutexes: {err}");
}
