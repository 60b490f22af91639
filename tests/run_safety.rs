//! `contend run` as root on a shared machine: what another user can and
//! cannot make it do, what it leaves behind, and what the program it runs
//! gets. Each test replays the fault it guards against:
//!
//! - a process that outlives the run, with the run's environment, exits
//!   after another user planted a symlink where its report would go;
//! - another user tries to read what the program printed;
//! - a program leaves a `setsid` daemon behind;
//! - `contend run` itself is SIGKILLed mid-run;
//! - a program checks its signal mask, and a shell waits for its child;
//! - a program writes binary data to stdout through a pipe;
//! - robust, error-checking and recursive mutexes return every error code
//!   glibc returns, under every lock, profiled or not;
//! - a lock that never ran, and a process that never reported.
//!
//! Waits here are bounded by events (a file appears, a process is gone),
//! with a generous cap only as a guard against a hang.

mod common;

use common::run::{alive, read_pid, until};

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn contend_bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("contend")
}

/// The interposer, where `cargo build --release --workspace` leaves it.
fn interposer() -> PathBuf {
    let so = contend_bin().with_file_name("libcontend_interpose.so");
    assert!(so.is_file(), "{} is missing: run `cargo build --release --workspace` first", so.display());
    so
}

/// `contend run --runs 1 --count-futex off --no-progress ARGS -- PROGRAM`,
/// its output; a hang past the guard fails.
fn run(args: &[&str], program: &[&str]) -> Output {
    interposer();
    assert_cmd::Command::new(contend_bin())
        .args(["run", "--runs", "1", "--count-futex", "off", "--no-progress", "--max-slowdown", "0"])
        .args(args)
        .arg("--")
        .args(program)
        .timeout(Duration::from_secs(600))
        .output()
        .expect("contend runs")
}

/// A directory `nobody` can enter (the test's files live in it).
fn shared_tempdir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

fn nobody_sh(script: &str) -> Option<Output> {
    let mut cmd = common::as_nobody_cmd(Path::new("/bin/sh"))?;
    Some(cmd.args(["-c", script]).output().expect("setpriv runs"))
}

#[test]
fn a_process_that_outlives_the_run_cannot_be_made_to_write_another_users_file() {
    if !common::root_or_skip("replaying the attack as another user") {
        return;
    }
    let dir = shared_tempdir();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    // A real run's environment, as a process that outlives it keeps it.
    let env_file = dir.path().join("env");
    let script =
        format!("printf '%s\\n%s\\n' \"$CONTEND_RUN_DIR\" \"$CONTEND_RUN_DIR_ID\" > {}", env_file.display());
    let out = run(&[], &["sh", "-c", &script]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&env_file).unwrap();
    let mut lines = text.lines();
    let (run_dir, run_id) = (lines.next().unwrap().to_string(), lines.next().unwrap().to_string());
    assert!(!Path::new(&run_dir).exists(), "the run's directory outlived it: {run_dir}");

    // The daemon: the interposer loaded with the run's environment. It
    // waits on stdin, so its pid is known before it exits.
    let mut daemon = Command::new("sh")
        .args(["-c", "read line; exit 0"])
        .env("LD_PRELOAD", interposer())
        .env("CONTEND_RUN_LOCK", "pthread")
        .env("CONTEND_RUN_DIR", &run_dir)
        .env("CONTEND_RUN_DIR_ID", &run_id)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = daemon.id();
    // Another user recreates the directory and plants the report's name
    // as a symlink to the victim (and, to be sure, the pid's neighbours
    // and the loaded marker's name too).
    let plant = format!(
        "mkdir -p '{run_dir}' && chmod 700 '{run_dir}' && for p in $(seq {} {}); do \
         ln -s '{v}' '{run_dir}/interpose.'$p'.tsv'; ln -s '{v}' '{run_dir}/loaded.'$p'.tsv'; done",
        pid.saturating_sub(5),
        pid + 5,
        v = victim.display()
    );
    let planted = nobody_sh(&plant);
    drop(daemon.stdin.take());
    let Some(planted) = planted else {
        daemon.wait().unwrap();
        return;
    };
    assert!(planted.status.success(), "the planting failed: {}", String::from_utf8_lossy(&planted.stderr));
    assert!(daemon.wait().unwrap().success());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious", "the victim's file was written");
    let regular: Vec<_> = std::fs::read_dir(&run_dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_symlink()))
        .map(|e| e.file_name())
        .collect();
    assert!(regular.is_empty(), "root wrote into another user's directory: {regular:?}");
    // The planted directory is the other user's to remove.
    let top = Path::new(&run_dir).parent().unwrap().to_path_buf();
    let _ = nobody_sh(&format!("rm -rf '{}'", top.display()));
}

#[test]
fn another_user_cannot_read_what_the_program_printed() {
    if !common::root_or_skip("reading as another user") || common::which("setpriv").is_none() {
        common::skip("needs setpriv");
        return;
    }
    // Captured for --metric: the capture is the only copy on disk.
    let script = "echo 'rate: 7 secret-token'; \
        for f in \"$CONTEND_RUN_DIR/stdout\" \"$(dirname \"$CONTEND_RUN_DIR\")\"; do \
          if setpriv --reuid=65534 --regid=65534 --clear-groups cat \"$f\" >/dev/null 2>&1 || \
             setpriv --reuid=65534 --regid=65534 --clear-groups ls \"$f\" >/dev/null 2>&1; then \
            echo \"LEAK: $f\" >&2; exit 9; fi; done";
    let out = run(&["--metric", r"rate: ([0-9]+)"], &["sh", "-c", script]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("secret-token"), "passed on to the user");
}

#[test]
fn a_setsid_daemon_the_program_leaves_is_ended_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("daemon.pid");
    let json = dir.path().join("run.json");
    let p = pidfile.display();
    // The program waits until its daemon has started, then exits.
    let script = format!(
        "setsid sh -c 'echo $$ > {p}.tmp; mv {p}.tmp {p}; exec sleep 300' </dev/null >/dev/null 2>&1 & \
         while [ ! -s {p} ]; do sleep 0.01; done"
    );
    let out = run(&["--export-json", json.to_str().unwrap()], &["sh", "-c", &script]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let daemon = read_pid(&pidfile).expect("the daemon's pid");
    assert!(!alive(daemon), "the setsid daemon {daemon} outlived the run");
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let left = &doc["points"][0]["sample"]["leftovers"];
    assert_eq!(left["found"], 1, "{left}");
    assert_eq!(left["killed"], 0, "sleep dies of SIGTERM: {left}");
    assert_eq!(left["survivors"], 0, "{left}");
    let kinds: Vec<&str> =
        doc["warnings"].as_array().unwrap().iter().filter_map(|w| w["kind"].as_str()).collect();
    assert!(kinds.contains(&"left_running"), "{kinds:?}");
}

#[test]
fn a_sigkilled_run_takes_its_program_and_daemons_with_it_and_cleanup_removes_its_directory() {
    interposer();
    let dir = tempfile::tempdir().unwrap();
    let ledger = tempfile::tempdir().unwrap();
    let (daemon_file, program_file, run_dir_file) =
        (dir.path().join("daemon"), dir.path().join("program"), dir.path().join("dir"));
    let script = format!(
        "echo \"$CONTEND_RUN_DIR\" > {r}; setsid sh -c 'echo $$ > {d}.tmp; mv {d}.tmp {d}; exec sleep 300' \
         </dev/null >/dev/null 2>&1 & echo $$ > {p}.tmp; mv {p}.tmp {p}; exec sleep 300",
        r = run_dir_file.display(),
        d = daemon_file.display(),
        p = program_file.display()
    );
    let mut contend = Command::new(contend_bin())
        .args(["run", "--runs", "1", "--count-futex", "off", "--no-progress", "--", "sh", "-c", &script])
        .env("XDG_RUNTIME_DIR", ledger.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    until("the program and its daemon start", || daemon_file.exists() && program_file.exists());
    let (daemon, program) = (read_pid(&daemon_file).unwrap(), read_pid(&program_file).unwrap());
    assert!(alive(daemon) && alive(program));
    contend.kill().unwrap();
    contend.wait().unwrap();
    until("the program dies with contend", || !alive(program));
    until("the daemon dies with contend", || !alive(daemon));
    // Its private directory is in the ledger; cleanup removes it.
    let run_dir = PathBuf::from(std::fs::read_to_string(&run_dir_file).unwrap().trim());
    let top = run_dir.parent().unwrap().to_path_buf();
    assert!(top.exists(), "the directory is there to clean up");
    let out =
        Command::new(contend_bin()).arg("cleanup").env("XDG_RUNTIME_DIR", ledger.path()).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains(&format!("removed {}", top.display())), "{said}");
    assert!(!top.exists());
}

/// The signals the program should find ignored: those contend was started
/// with ignored, as a shell passes them on. Usually none; but a shell
/// ignores SIGINT and SIGQUIT in a job it puts in the background, and the
/// test, contend and the program all inherit that. Read from a program
/// this test starts itself, less what contend never passes on (SIGPIPE,
/// which Rust ignores for itself, and glibc's signals 32 and 33, which a
/// child of posix_spawn starts with ignored: locks::sys::spawn).
fn inherited_ignored() -> String {
    let out = Command::new("sh").args(["-c", "grep '^SigIgn' /proc/self/status"]).output().unwrap();
    let line = String::from_utf8(out.stdout).unwrap();
    let mask = line.trim().strip_prefix("SigIgn:").unwrap().trim();
    let never = [13, 32, 33].iter().fold(0u64, |m, sig| m | 1 << (sig - 1));
    format!("SigIgn:\t{:016x}", u64::from_str_radix(mask, 16).unwrap() & !never)
}

#[test]
fn the_program_gets_a_shells_signals_and_its_own_streams() {
    // dash's `wait` hangs for ever if SIGCHLD is blocked.
    let out =
        run(&[], &["sh", "-c", "grep -E '^Sig(Blk|Ign)' /proc/self/status; sleep 0.1 & wait; echo waited"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("SigBlk:\t0000000000000000"), "{stdout}");
    let ignored = inherited_ignored();
    assert!(stdout.contains(&ignored), "{stdout} (expected {ignored})");
    assert!(stdout.ends_with("waited\n"), "the program's stdout is contend's stdout: {stdout}");
    assert!(stderr.contains("wall s"), "the table is on stderr: {stderr}");
    // A program that terminates on SIGTERM does: the signal's default.
    let out = run(&[], &["sh", "-c", "kill -TERM $$; sleep 5; echo survived"]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("survived"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("killed by SIGTERM"));
}

#[test]
fn binary_output_passes_through_unchanged_with_or_without_a_metric() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data.bin");
    let bytes: Vec<u8> = (0..1_000_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    std::fs::write(&data, &bytes).unwrap();
    let path = data.to_str().unwrap();
    let out = run(&[], &["cat", path]);
    assert!(out.status.success());
    assert!(
        out.stdout == bytes,
        "stdout holds {} bytes, not the program's {}",
        out.stdout.len(),
        bytes.len()
    );
    let json = dir.path().join("m.json");
    let script = format!("cat {path}; echo 'rate: 5' >&2");
    let out = run(
        &["--metric", r"rate: ([0-9]+)", "--export-json", json.to_str().unwrap()],
        &["sh", "-c", &script],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout == bytes, "captured for the metric, then passed on: {} bytes", out.stdout.len());
    assert!(String::from_utf8_lossy(&out.stderr).contains("rate: 5"));
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["points"][0]["sample"]["metric"], 5.0);
    // An export to stdout would be mixed into the program's output.
    common::refused(&["run", "--export-json", "-", "--", "true"], "stdout belongs to the program");
}

#[test]
fn every_error_code_is_glibcs_under_every_lock_profiled_or_not() {
    let bin = contend_bin();
    let direct = Command::new(&bin).args(["__interpose-check", "codes"]).output().unwrap();
    assert!(direct.status.success());
    let expected = String::from_utf8(direct.stdout).unwrap();
    for code in
        ["EOWNERDEAD", "ENOTRECOVERABLE", "EDEADLK", "EPERM", "EINVAL", "ETIMEDOUT", "EAGAIN", "EBUSY"]
    {
        assert!(expected.contains(code), "the check provokes {code}: {expected}");
    }
    let locks: Vec<&str> = locks::in_mutex::Swap::all().map(|s| s.name()).collect();
    let list = locks.join(",");
    let check = [bin.to_str().unwrap(), "__interpose-check", "codes"];
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("codes.json");
    for profile in [false, true] {
        let mut args = vec!["--lock", list.as_str(), "--export-json", json.to_str().unwrap()];
        if profile {
            args.push("--profile");
        }
        // A robust mutex whose owner died hung here under --profile.
        let out = run(&args, &check);
        let got = String::from_utf8(out.stdout).unwrap();
        assert!(out.status.success(), "profile {profile}: {}", String::from_utf8_lossy(&out.stderr));
        // One copy per execution (each one's output is passed on): one per
        // lock, and with --profile one more, glibc's mutex unprofiled for
        // the profile's cost; on a loaded machine, more: an execution
        // screened out for the load is made again, and the export keeps
        // it (as rejected).
        let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let made: usize =
            doc["points"].as_array().unwrap().iter().map(|p| p["runs"].as_array().unwrap().len()).sum();
        assert!(made >= locks.len() + usize::from(profile), "profile {profile}: {made} executions");
        assert_eq!(got, expected.repeat(made), "profile {profile}: some lock returned another code");
    }
}

#[test]
fn a_lock_that_never_ran_gets_no_ratio_and_a_process_that_never_reported_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let bin = contend_bin();
    // The program runs its work in a child with the preload cleared (the
    // `true` after it keeps the shell from exec'ing it in its place).
    let script = format!("LD_PRELOAD= {} __interpose-check exclusion --threads 2; true", bin.display());
    let out =
        run(&["--lock", "pthread,mcs", "--export-json", json.to_str().unwrap()], &["sh", "-c", &script]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("not used"), "the table says so: {err}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let mcs = &doc["vs_glibc"][0];
    assert_eq!(mcs["lock"], "mcs");
    assert!(mcs.get("ratio").is_none(), "no ratio for a lock that never ran: {mcs}");
    let kinds: Vec<&str> =
        doc["warnings"].as_array().unwrap().iter().filter_map(|w| w["kind"].as_str()).collect();
    assert!(kinds.contains(&"unexercised"), "{kinds:?}");

    // A program that leaves by a raw exit_group (as Go's runtime does):
    // loaded, but no report.
    if common::which("perl").is_none() {
        common::skip("perl is not installed");
        return;
    }
    let exit_group = if cfg!(target_arch = "aarch64") { 94 } else { 231 };
    let perl = format!("syscall({exit_group}, 0)");
    let out =
        run(&["--lock", "pthread,tas", "--export-json", json.to_str().unwrap()], &["perl", "-e", &perl]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("loaded into") && err.contains("wrote no report"), "{err}");
    assert!(
        err.lines().any(|l| l.trim_start().starts_with("tas") && l.contains("no report")),
        "the table says so: {err}"
    );
    assert!(!err.contains("statically linked") && !err.contains("took no pthread mutex"), "{err}");
}

#[test]
fn address_randomization_is_off_only_where_a_choice_by_address_needs_it() {
    // The program prints its personality: 0x0040000 is ADDR_NO_RANDOMIZE.
    let personality = |args: &[&str]| -> (String, String) {
        let out = run(args, &["sh", "-c", "cat /proc/self/personality"]);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let first =
            String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or_default().trim().to_string();
        (first, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let off = |p: &str| u32::from_str_radix(p, 16).unwrap() & 0x0040000 != 0;
    for args in [&[][..], &["--profile"], &["--lock", "pthread,tas"]] {
        let (p, table) = personality(args);
        assert!(!off(&p), "{args:?}: randomization stays on ({p})");
        assert!(!table.contains("address randomization off"), "{args:?}: {table}");
    }
    let (p, table) = personality(&["--lock", "tas@0x10"]);
    assert!(off(&p), "a choice by address turns it off ({p})");
    assert!(table.contains("address randomization off"), "and says so: {table}");
    let (p, _) = personality(&["--lock", "tas@0x10", "--aslr", "on"]);
    assert!(!off(&p), "--aslr on refuses it ({p})");
    let (p, _) = personality(&["--aslr", "off"]);
    assert!(off(&p), "--aslr off asks for it ({p})");
    // A profile made with it on says its addresses are its own.
    let dir = tempfile::tempdir().unwrap();
    let exe = common::compile("two_mutexes", dir.path());
    let out = run(&["--profile"], &[exe.to_str().unwrap()]);
    let table = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && table.contains("addresses are this execution's"), "{table}");
}

#[test]
fn a_program_that_drops_root_still_reports_its_mutexes() {
    if !common::root_or_skip("a program that changes its user id needs root to start") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = common::compile("drops_root", dir.path());
    let json = dir.path().join("r.json");
    let out =
        run(&["--lock", "pthread,tas", "--export-json", json.to_str().unwrap()], &[exe.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("left without running library destructors"), "{err}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    for p in doc["points"].as_array().unwrap() {
        let s = &p["sample"];
        assert_eq!(s["program_reported"], true, "{}", p["point"]["lock"]);
        // 2 threads x 1000, before and after the drop, one mutex.
        let took = s["swapped"].as_u64().unwrap() + s["to_glibc"].as_u64().unwrap();
        assert_eq!(took, 2000, "{}: every acquisition, before and after setuid", p["point"]["lock"]);
    }
}
