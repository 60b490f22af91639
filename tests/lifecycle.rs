//! Every resource a run creates (SysV set, lock directory, worker
//! processes, ledger record) is gone after every way a run can end: SIGINT
//! (exit 130, partial results reported), SIGTERM (143), a worker killed
//! mid-run (exit 1, naming it), and SIGKILL of the coordinator, after which
//! `contend cleanup` removes what was left. Each test uses its own lock
//! directory and ledger directory, and checks only the SysV sets its run
//! recorded (other programs make and remove sets meanwhile); the tests
//! that make sets run one at a time, to keep the machine's load sane.

mod common;

use common::run::*;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn sigint_mid_run_reports_partial_results_and_cleans_up() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let json = tempfile::NamedTempFile::new().unwrap();
    let mut run = start(
        &[&["--lock", "sysv", "--procs", "4", "--export-json", json.path().to_str().unwrap()], LONG_RUN]
            .concat(),
    );
    let workers = wait_running(&run, 4);
    let sets = wait_recorded_sets(&run, 1);
    assert_eq!(entries(run.lock_dir.path()), 1, "the run should own one lock directory");
    kill(Pid::from_raw(run.child.id() as i32), Signal::SIGINT).unwrap();
    let (code, stdout, stderr) = finish(&mut run, Duration::from_secs(120));
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stdout.contains("cs/s"), "partial results are printed:\n{stdout}");
    assert!(stderr.contains("interrupted by SIGINT"), "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(json.path()).unwrap()).unwrap();
    let sample = &v["points"][0]["sample"];
    assert_eq!(sample["interrupted"], "SIGINT");
    assert!(sample["window_s"].as_f64().unwrap() < 30.0);
    // Its only run was cut short: marked so in the export and the table.
    assert_eq!(v["points"][0]["runs"][0]["status"], "cut_short");
    assert!(stdout.contains("only run was cut short"), "{stdout}");
    assert_clean(&run, &sets, &workers);
}

#[test]
fn sigint_while_workers_drain_ends_the_sweep_with_130() {
    // Each hold lasts 5 s and the window 200 ms: the interrupt arrives
    // while the workers finish their holds after the window, where it was
    // read and dropped (the sweep went on to its next runs and exited 0).
    let mut run = start(&[
        "--lock",
        "futex",
        "--threads",
        "2",
        "--hold",
        "5s",
        "--duration",
        "200ms",
        "--warmup",
        "50ms",
        "--runs",
        "3",
        "--count-futex",
        "off",
    ]);
    let pid = run.child.id();
    let guard = Instant::now() + Duration::from_secs(120);
    while std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count()) < 3 {
        assert!(Instant::now() < guard, "the workers never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(1500));
    kill(Pid::from_raw(pid as i32), Signal::SIGINT).unwrap();
    let (code, stdout, stderr) = finish(&mut run, Duration::from_secs(300));
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stdout.contains("cs/s"), "partial results are printed:\n{stdout}");
    assert!(stderr.contains("interrupted by SIGINT"), "{stderr}");
}

#[test]
fn sighup_and_sigquit_end_a_run_like_sigterm() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for (sig, code) in [(Signal::SIGHUP, 129), (Signal::SIGQUIT, 131)] {
        let mut run = start(&[&["--lock", "sysv", "--procs", "4"], LONG_RUN].concat());
        let workers = wait_running(&run, 4);
        let sets = wait_recorded_sets(&run, 1);
        kill(Pid::from_raw(run.child.id() as i32), sig).unwrap();
        let (got, stdout, stderr) = finish(&mut run, Duration::from_secs(120));
        assert_eq!(got, Some(code), "{sig}: {stderr}");
        assert!(stdout.contains("cs/s"), "{sig}: partial results:\n{stdout}");
        assert!(stderr.contains(&format!("interrupted by {sig}")), "{stderr}");
        assert_clean(&run, &sets, &workers);
    }
}

#[test]
fn a_worker_thread_that_panics_is_an_error_line_not_a_crash() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut run = start(&[&["--lock", "sysv", "--threads", "3"], LONG_RUN].concat());
    let ids = wait_recorded_sets(&run, 1);
    // Someone removes the run's set under it (ipcrm -s): every worker's
    // semop fails and its thread panics.
    let removed = Command::new("ipcrm").args(["-s", &ids[0].to_string()]).status().unwrap();
    assert!(removed.success());
    let (code, _stdout, stderr) = finish(&mut run, Duration::from_secs(20));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("error:") && stderr.contains("panicked: ") && stderr.contains("semop"),
        "{stderr}"
    );
    assert!(!stderr.contains("a scoped thread panicked"), "{stderr}");
    assert_clean(&run, &ids, &[]);
}

#[test]
fn sigterm_in_a_thread_run_exits_143_and_cleans_up() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut run = start(&[&["--lock", "flock", "--threads", "3"], LONG_RUN].concat());
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(entries(run.lock_dir.path()), 1);
    kill(Pid::from_raw(run.child.id() as i32), Signal::SIGTERM).unwrap();
    let (code, stdout, stderr) = finish(&mut run, Duration::from_secs(120));
    assert_eq!(code, Some(143), "{stderr}");
    assert!(stdout.contains("cs/s"), "{stdout}");
    assert_clean(&run, &[], &[]);
}

#[test]
fn a_killed_worker_is_named_and_nothing_is_left() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut run = start(&[&["--lock", "sysv", "--procs", "4"], LONG_RUN].concat());
    let workers = wait_running(&run, 4);
    let sets = wait_recorded_sets(&run, 1);
    // It may die holding the semaphore; the others must not hang the run.
    kill(Pid::from_raw(workers[2]), Signal::SIGKILL).unwrap();
    let (code, _stdout, stderr) = finish(&mut run, Duration::from_secs(120));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("worker process 2 (pid {})", workers[2]))
            && stderr.contains("SIGKILL")
            && stderr.contains("s after the workers started"),
        "{stderr}"
    );
    assert_clean(&run, &sets, &workers);
}

#[test]
fn a_stopped_worker_process_is_named_as_stopped_killed_and_the_lock_word_shown() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Idle 20 ms per turn: the worker stopped is outside the lock all but
    // a millionth of the time, so the other runs on, the window ends as
    // usual, and only the stop at its end finds one that does not exit.
    let mut run = start(&[
        "--lock",
        "futex",
        "--procs",
        "2",
        "--hold",
        "0",
        "--idle",
        "20ms",
        "--duration",
        "1500ms",
        "--warmup",
        "100ms",
    ]);
    let workers = wait_running(&run, 2);
    kill(Pid::from_raw(workers[0]), Signal::SIGSTOP).unwrap();
    let (code, _stdout, stderr) = finish(&mut run, Duration::from_secs(40));
    assert_eq!(code, Some(1), "{stderr}");
    // Stopped outside the lock: named as stopped, not as stuck in it.
    assert!(
        stderr.contains(&format!("worker process(es) 0 (pid {}) were stopped", workers[0]))
            && !stderr.contains("stuck in the lock")
            && stderr.contains("; lock word: 0 (0x0)"),
        "{stderr}"
    );
    assert_clean(&run, &[], &workers);
}

#[test]
fn after_a_sigkill_cleanup_removes_what_was_left() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut run = start(&[&["--lock", "sysv", "--procs", "2"], LONG_RUN].concat());
    let workers = wait_running(&run, 2);
    let sets = wait_recorded_sets(&run, 1);
    run.child.kill().unwrap();
    run.child.wait().unwrap();
    // The workers die with their parent (PR_SET_PDEATHSIG)...
    let deadline = Instant::now() + Duration::from_secs(5);
    while workers.iter().any(|&w| alive(w)) {
        assert!(Instant::now() < deadline, "workers outlived a SIGKILLed coordinator");
        std::thread::sleep(Duration::from_millis(20));
    }
    // ...but the kernel objects stay, recorded in the ledger.
    assert!(set_exists(sets[0]), "the set outlives a SIGKILLed coordinator");
    assert_eq!(entries(run.lock_dir.path()), 1);
    let out = Command::new(assert_cmd::cargo::cargo_bin("contend"))
        .arg("cleanup")
        .env("XDG_RUNTIME_DIR", run.ledger_dir.path())
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(report.contains("removed SysV semaphore set"), "{report}");
    assert!(
        report.contains("removed ") && report.contains(run.lock_dir.path().to_str().unwrap()),
        "{report}"
    );
    assert_clean(&run, &sets, &workers);
    // A second cleanup has nothing to do.
    let again = Command::new(assert_cmd::cargo::cargo_bin("contend"))
        .arg("cleanup")
        .env("XDG_RUNTIME_DIR", run.ledger_dir.path())
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&again.stdout).contains("nothing to clean up"));
}

#[test]
fn a_stalled_lock_is_diagnosed_instead_of_hanging() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let started = Instant::now();
    let mut run = start(&[
        "--lock",
        "lost-wake",
        "--threads",
        "3",
        "--hold",
        "sleep:1ms",
        "--duration",
        "60s",
        "--stall-timeout",
        "500ms",
    ]);
    let (code, _stdout, stderr) = finish(&mut run, Duration::from_secs(20));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(20));
    for part in ["stalled", "--stall-timeout 500ms", "Lock word: 2", "holding: none", "waiting: worker"] {
        assert!(stderr.contains(part), "missing `{part}` in:\n{stderr}");
    }
}

#[test]
fn a_second_sigint_exits_at_once_and_still_cleans_up() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Holds of 300 s make the drain after the first SIGINT take minutes
    // on purpose: only the emergency exit ends the run within the guard.
    let mut run = start(&[
        "--lock",
        "sysv",
        "--threads",
        "2",
        "--hold",
        "sleep:300s",
        "--duration",
        "60s",
        "--warmup",
        "100ms",
    ]);
    let sets = wait_recorded_sets(&run, 1);
    std::thread::sleep(Duration::from_millis(800));
    let pid = Pid::from_raw(run.child.id() as i32);
    kill(pid, Signal::SIGINT).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    kill(pid, Signal::SIGINT).unwrap();
    // Within the guard, far below the drain's 300 s: the second SIGINT
    // did not wait for the workers.
    let (code, _stdout, stderr) = finish(&mut run, Duration::from_secs(120));
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("second SIGINT"), "{stderr}");
    // Workers still in semop when the set goes panic: expected, not shown.
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_clean(&run, &sets, &[]);
}

/// Restores /proc/sys/kernel/sem when dropped.
struct SemLimits(String);

impl Drop for SemLimits {
    fn drop(&mut self) {
        let _ = std::fs::write("/proc/sys/kernel/sem", &self.0);
    }
}

#[test]
fn a_system_without_sysv_semaphores_is_named() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !common::root_or_skip("changing kernel.sem") {
        return;
    }
    let original = std::fs::read_to_string("/proc/sys/kernel/sem").unwrap();
    let fields: Vec<&str> = original.split_whitespace().collect();
    let _restore = SemLimits(original.clone());
    // SEMMSL 0: no semaphore may exist in any set.
    std::fs::write("/proc/sys/kernel/sem", format!("0 {} {} {}", fields[1], fields[2], fields[3])).unwrap();
    let mut run = start(&["--lock", "sysv", "--threads", "2", "--duration", "100ms"]);
    let (code, _stdout, stderr) = finish(&mut run, Duration::from_secs(20));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("SEMMSL is 0") && stderr.contains("sysctl kernel.sem"), "{stderr}");
    assert_eq!(entries(run.lock_dir.path()), 0);
}

#[test]
fn sets_another_process_makes_and_removes_beside_a_run_do_not_confuse_its_checks() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Beside the run, sets come and go all the time, as on a machine where
    // CI shares the host with a database.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let churn = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut made = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // Created and removed (on drop) at once; a few kept a while.
                let set = locks::sys::sysv_sem::SemSet::create(4).expect("semget");
                if made % 7 == 0 {
                    std::thread::sleep(Duration::from_millis(3));
                }
                drop(set);
                made += 1;
            }
            made
        })
    };
    let mut run = start(&[&["--lock", "sysv", "--procs", "2"], LONG_RUN].concat());
    let workers = wait_running(&run, 2);
    let sets = wait_recorded_sets(&run, 1);
    kill(Pid::from_raw(run.child.id() as i32), Signal::SIGTERM).unwrap();
    let (code, _stdout, stderr) = finish(&mut run, Duration::from_secs(120));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let made = churn.join().unwrap();
    assert_eq!(code, Some(143), "{stderr}");
    assert!(made > 10, "the churn ran beside the run ({made} sets)");
    assert_clean(&run, &sets, &workers);
}
