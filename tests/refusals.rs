//! Bad input and system limits, refused before anything runs: exit
//! status 2, one line naming the flag or the limit and how to raise it;
//! and what an unprivileged user still gets.

mod common;

use common::{as_nobody, as_nobody_cmd, refused, which};
use serde_json::Value;

#[test]
fn bad_input_is_refused_with_status_2() {
    refused(&["lock", "--threads", "0"], "0 is not allowed");
    // A negative value names its flag (not clap's "unexpected argument").
    refused(&["lock", "--precision", "-5%"], "for '--precision <PERCENT>'");
    refused(&["lock", "--seed", "-1"], "for '--seed <N>'");
    refused(&["run", "--top", "-1", "--", "true"], "for '--top <N>'");
    refused(&["run", "--grace", "-1s", "--", "true"], "for '--grace <DURATION>'");
    refused(&["run", "--lock", "clh@0x10", "--", "true"], "clh is not a lock a mutex can be given");
    refused(&["run", "--lock", "tas@", "--", "true"], "no mutex after @");
    refused(&["run", "--delays", "1us", "--", "true"], "--delays goes with --what-if");
    refused(&["run", "--threshold", "5%", "--", "true"], "--threshold goes with --recommend");
    refused(&["run", "--mutexes", "5", "--", "true"], "--mutexes goes with --recommend");
    refused(&["run", "--recommend", "--threshold", "0", "--", "true"], "a percentage above 0");
    refused(&["run", "--what-if", "top:0", "--", "true"], "top:N ranks 1 to 8 mutexes");
    refused(&["run", "--what-if", "0x10,0x20", "--delays", "1us", "--", "true"], "one mutex at a time");
    refused(&["run", "--what-if", "0x10", "--delays", "0,1us", "--", "true"], "no delay is the baseline");
    refused(&["run", "--what-if", "0x10", "--profile", "--", "true"], "--what-if with --profile");
    refused(&["run", "--recommend", "--profile", "--", "true"], "--recommend with --profile");
    refused(&["run", "--recommend", "--mutexes", "17", "--", "true"], "--mutexes 17: from 1 to 16");
    // As `--lock tas@0x0` is, before anything runs.
    refused(&["run", "--what-if", "0x0", "--", "true"], "--what-if 0x0: not an address");
    // Every list flag refuses a repeated value, and a choice a repeated mutex.
    refused(&["run", "--what-if", "0x10", "--delays", "1ns,1ns", "--", "true"], "1ns is given twice");
    refused(&["run", "--lock", "tas@work+tas@work", "--", "true"], "work is chosen twice");
    refused(&["run", "--lock", "tas@0x10+mcs@0x10", "--", "true"], "0x10 is chosen twice");
    refused(&["run", "--interposer", "/dev/null", "--", "true"], "/dev/null: not a regular file");
    refused(&["run", "--ignore-failure=0", "--", "true"], "not an exit status from 1 to 255");
    refused(&["run", "--max-slowdown", "0.5", "--", "true"], "a factor of at least 1");
    refused(&["compare", "a.json", "b.json", "--threshold", "-3%"], "for '--threshold <PERCENT>'");
    refused(&["lock", "--max-steal", "-3"], "for '--max-steal <PERCENT|off>'");
    // A percent flag takes a %: a bare fraction is refused with what it
    // probably meant (0.05 read as 0.05% ran --precision to --max-time).
    refused(&["lock", "--precision", "0.05"], "write 5% if 0.05 is a fraction");
    refused(&["lock", "--period", "1ms", "--duty", "0.5"], "write 50%");
    refused(&["compare", "a.json", "b.json", "--threshold", "0.05"], "write 5%");
    refused(&["lock", "--max-steal", "10"], "write 10%");
    refused(&["wakeup", "--pairs", "-1"], "for '--pairs <N>'");
    refused(&["wakeup", "--proc-pairs", "-1"], "for '--proc-pairs <N>'");
    refused(&["lock", "--threads", "-2"], "negative");
    refused(&["lock", "--threads", "two"], "not a whole number");
    refused(&["lock", "--spin", "0"], "0 is not allowed");
    refused(&["lock", "--spin", "-5"], "negative");
    refused(&["lock", "--lock", "nope"], "unknown lock `nope`; known locks: seed, futex,");
    // A mistyped name gets the nearest known one.
    refused(&["lock", "--lock", "Futex"], "did you mean `futex`?");
    refused(&["alloc", "--allocator", "tcmaloc"], "did you mean `tcmalloc`?");
    refused(&["wakeup", "--primitive", "evenfd"], "did you mean `eventfd`?");
    refused(&["lock", "--lock", "futex", "--spinners", "many"], "--spinners does not apply to futex");
    refused(&["lock", "--lock", "adaptive", "--spinners", "few"], "unknown spinner policy `few`");
    refused(
        &["lock", "--lock", "mcs,tas", "--spin", "10"],
        "locks that take --spin: seed, futex, futex2, futex-rw)",
    );
    refused(&["lock", "--lock", "adaptive", "--threads", "70000"], "takes at most 65536 workers");
    refused(&["lock", "--hold", "5"], "no unit");
    refused(&["lock", "--hold", "5 parsecs"], "unknown unit");
    refused(&["lock", "--hold", "nap:5us"], "unknown mode `nap`");
    refused(&["lock", "--idle", "-1us"], "negative");
    refused(&["lock", "--duration", "-2s"], "negative");
    refused(&["lock", "--period", "-1us", "--duty", "5%"], "negative");
    refused(&["lock", "--duration", "0"], "--duration must be longer than 0");
    refused(&["lock", "--duration", "soon"], "not a duration");
    refused(&["lock", "--lock", "pthread", "--spin", "10"], "--spin does not apply to pthread");
    refused(&["lock", "--plot", "x.png"], "--plot x.png: the plot is written as SVG; name the file .svg");
    refused(&["lock", "--lock", "noop", "--threads", "2"], "no mutual exclusion");
    refused(&["lock", "--threads", "4000000000"], "kernel.threads-max");
    refused(&["lock", "--period", "1us"], "--duty");
    refused(&["lock", "--period", "1us", "--duty", "150%"], "below 100%");
    refused(&["lock", "--hold", "1us", "--period", "1us", "--duty", "5%"], "cannot be used with");
    refused(&["lock", "--threads", "1,,2"], "empty element");
    refused(&["lock", "--format", "csv"], "invalid value 'csv'");
    refused(&["frobnicate"], "unrecognized subcommand");
    refused(&["lock", "--lock", "std,futex", "--procs", "2"], "std cannot");
    refused(&["lock", "--lock", "lockf", "--threads", "2"], "run it with --procs");
    refused(&["lock", "--threads", "2", "--procs", "2"], "cannot be used with");
    refused(
        &["lock", "--lock", "flock", "--lock-dir", "/nonexistent"],
        "--lock-dir /nonexistent is not a directory",
    );
    refused(&["lock", "--procs", "0"], "0 is not allowed");
    refused(&["lock", "--threads", "2", "--kill-holder-after", "1s"], "needs --procs");
    refused(
        &["lock", "--procs", "2", "--duration", "1s", "--kill-holder-after", "2s"],
        "shorter than --duration",
    );
    refused(&["lock", "--stall-timeout", "0"], "--stall-timeout must be longer than 0");
    refused(&["lock", "--procs", "4000000000"], "kernel.threads-max");
}

/// Without privileges the futex columns say unavailable, one warning says
/// why, and everything else still works: threads, worker processes, file
/// locks, SysV semaphores, with nothing left behind.
#[test]
fn unprivileged_runs_degrade_to_one_warning() {
    // SysV sets created by nobody (the cuid column): other tests of this
    // binary create and remove sets of root's concurrently.
    let sets = || {
        std::fs::read_to_string("/proc/sysvipc/sem")
            .map_or(0, |s| s.lines().skip(1).filter(|l| l.split_whitespace().nth(6) == Some("65534")).count())
    };
    let sets_before = sets();
    let short = ["--duration", "100ms", "--warmup", "0", "--export-json", "-"];
    for workers in
        [&["lock", "--threads", "2"][..], &["lock", "--procs", "2", "--lock", "futex,flock,sysv"][..]]
    {
        let Some(out) = as_nobody(&[workers, &short[..]].concat()) else {
            return;
        };
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        let warnings: Vec<&str> =
            err.lines().filter(|l| l.starts_with("warning: futex syscall counts")).collect();
        assert_eq!(warnings.len(), 1, "{err}");
        assert!(warnings[0].contains("unavailable"), "{err}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        for p in v["points"].as_array().unwrap() {
            let s = &p["sample"];
            assert!(s["futex"].is_null());
            assert!(s["acquisitions"].as_u64().unwrap() > 0, "{}", p["point"]["lock"]);
        }
        assert!(
            v["points"][0]["sample"]["lock_counters"].is_object(),
            "the lock's own counters need no privilege"
        );
    }
    assert_eq!(sets(), sets_before, "a SysV set created as nobody was left behind");
}

/// Too many workers for RLIMIT_NPROC: refused before anything starts, with
/// a message naming the limit and how to raise it. (Root is exempt from
/// RLIMIT_NPROC, so the run drops to nobody.)
#[test]
fn the_process_limit_is_named_when_too_low() {
    let Some(prlimit) = which("prlimit") else {
        common::skip("no prlimit (util-linux)");
        return;
    };
    for workers in [["--threads", "20"], ["--procs", "20"]] {
        let Some(mut cmd) = as_nobody_cmd(&prlimit) else {
            return;
        };
        let out = cmd
            .args(["--nproc=5:5", "--"])
            .arg(assert_cmd::cargo::cargo_bin("contend"))
            .arg("lock")
            .args(workers)
            .args(["--duration", "100ms"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("RLIMIT_NPROC = 5") && err.contains("ulimit -u"), "{err}");
    }
}

/// File locks in threads need a descriptor per worker: too low an
/// RLIMIT_NOFILE is refused up front, naming it and how to raise it.
#[test]
fn too_few_descriptors_are_named() {
    let Some(prlimit) = which("prlimit") else {
        common::skip("no prlimit (util-linux)");
        return;
    };
    let out = std::process::Command::new(prlimit)
        .args(["--nofile=100:100", "--"])
        .arg(assert_cmd::cargo::cargo_bin("contend"))
        .args(["lock", "--lock", "flock", "--threads", "200", "--duration", "100ms"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("RLIMIT_NOFILE is 100") && err.contains("ulimit -n 264"), "{err}");
}

/// The lower of kernel.threads-max and kernel.pid_max is the one named:
/// here pid_max (32768) is far below threads-max, and each thread takes a
/// pid, so a run between the two is refused up front naming pid_max.
#[test]
fn the_lowest_thread_limit_is_the_one_named() {
    let read = |path: &str| -> u64 { std::fs::read_to_string(path).unwrap().trim().parse().unwrap() };
    let (pid_max, threads_max) = (read("/proc/sys/kernel/pid_max"), read("/proc/sys/kernel/threads-max"));
    let (limit, name) =
        if pid_max < threads_max { (pid_max, "kernel.pid_max") } else { (threads_max, "kernel.threads-max") };
    let n = (limit + 10).to_string();
    refused(&["lock", "--threads", &n], name);
}
