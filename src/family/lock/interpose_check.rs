//! `contend __interpose-check WHAT`: a program whose mutexes and condition
//! variables go through glibc's API, for the tests of `contend run` to run
//! under each lock with the interposer preloaded. Here, in the lock
//! family, because its main check is the lock workload run on the
//! registry's pthread locks. Each check fails (exit
//! 1, a message on stderr) when the semantics break: a lost update, a lost
//! item, a wrong error code, a hang past its watchdog.
//!
//! - `exclusion`: the lock conformance suite's workload for every
//!   `pthread*` registry lock (N threads, no hold and a sleeping hold; the
//!   workload fails on any overlap), their try-lock checks, and a
//!   statically initialized mutex (PTHREAD_MUTEX_INITIALIZER) guarding a
//!   read-modify-write counter.
//! - `kinds`, `condvar`, `fork`: [`locks::pthread_check`].
//! - `codes`: every error code a lock call returns, one line per case on
//!   stdout ([`locks::pthread_check::codes`]), to compare across locks.

use crate::family::lock::registry::LOCKS;
use crate::family::lock::spec::{Mode, Point};
use crate::family::lock::workload::RunContext;
use crate::model::value::{Work, WorkMode};
use locks::sys::pthread::Mutex;
use locks::LockConfig;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// Acquisitions the exclusion check sees per lock and hold, at least.
const MIN_ACQUISITIONS: u64 = 1_000;

/// How long a check may run before it is taken for a hang (a lost
/// wake-up or a deadlock): generous, because a busy machine slows the
/// checks down by a large factor and only a hang must fail.
const WATCHDOG: Duration = Duration::from_secs(900);

/// The checks, by name.
pub const CHECKS: [&str; 5] = ["exclusion", "kinds", "condvar", "fork", "codes"];

/// `contend __interpose-check WHAT --threads N`: exit 0 when the check
/// passes, else 1 with what failed.
pub fn command(what: &str, threads: u32) -> std::process::ExitCode {
    match run_check(what, threads) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("__interpose-check {what}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Runs check `what` with `threads` threads (FIFO spinlocks such as mcs
/// and ticket convoy with more runnable threads than CPUs, so their
/// checks run with as many threads as CPUs).
pub fn run_check(what: &str, threads: u32) -> Result<(), String> {
    let watchdog = std::thread::spawn(|| {
        std::thread::sleep(WATCHDOG);
        eprintln!("__interpose-check: no end after {WATCHDOG:?}: a lost wake-up or a deadlock");
        std::process::exit(3);
    });
    drop(watchdog);
    match what {
        "exclusion" => exclusion(threads.max(2)),
        "kinds" => locks::pthread_check::kinds(),
        "condvar" => locks::pthread_check::condvar(u64::from(threads / 2).max(1)),
        "fork" => locks::pthread_check::fork(),
        "codes" => {
            // Printed, for the test to compare with glibc's run directly.
            for (case, code) in locks::pthread_check::codes() {
                println!("{case}\t{code}");
            }
            Ok(())
        }
        other => Err(format!("no check {other:?} (checks: {})", CHECKS.join(", "))),
    }
}

fn exclusion(threads: u32) -> Result<(), String> {
    let ctx = RunContext::default();
    let sleep = Work { mode: WorkMode::Sleep, ns: 20_000 };
    let mut checked = 0;
    for entry in
        LOCKS.iter().filter(|e| e.name.starts_with("pthread") && e.caps.threads && !e.caps.rw && !e.test_only)
    {
        if let Some(check) = entry.try_check {
            check(&LockConfig::default()).map_err(|e| format!("{}: try-lock: {e}", entry.name))?;
        }
        for hold in [Work::NONE, sleep] {
            let p = Point {
                hold,
                duration_ns: 100_000_000,
                warmup_ns: 10_000_000,
                ..Point::new(entry.name, Mode::Threads, threads)
            };
            // Bounded by work, not by a window: on a machine busy with
            // something else a window may see few acquisitions (or none,
            // for a FIFO lock whose next owner is not running), so
            // windows are run until enough acquisitions were checked.
            // Only a hang (the watchdog) fails for lack of progress.
            let mut checked = 0;
            while checked < MIN_ACQUISITIONS {
                let s = (entry.run)(&p, &ctx).map_err(|e| format!("{} hold {hold}: {e:#}", entry.name))?;
                checked += s.acquisitions;
            }
        }
        checked += 1;
    }
    if checked < 4 {
        return Err(format!("only {checked} pthread locks in the registry"));
    }
    let m = Mutex::statically_initialized();
    let counter = AtomicU64::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| locks::pthread_check::hammer(&m, &counter, 50_000));
        }
    });
    let want = 50_000 * u64::from(threads);
    match counter.load(Relaxed) {
        n if n == want => Ok(()),
        n => Err(format!("a statically initialized mutex lost {} of {want} updates", want - n)),
    }
}
