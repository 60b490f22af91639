//! Checks of glibc's mutex and condition variable API as a program uses
//! it, for the tests of `contend run`: run inside a program with the
//! interposer preloaded, they call `pthread_*` like any C program, and
//! fail when the swapped lock breaks the semantics. Here because they
//! need the unsafe condition-wait calls (the binary forbids unsafe code).
//!
//! - [`kinds`]: recursive and error-checking mutexes keep glibc's semantics.
//! - [`condvar`]: producers and consumers over a bounded ring, every wait
//!   timed (one condition variable on CLOCK_MONOTONIC, one on
//!   CLOCK_REALTIME); every item arrives exactly once; a timed wait with
//!   no signal times out, and not before its deadline.
//! - [`codes`]: every error a lock call can return that the interposer
//!   sees (EBUSY, ETIMEDOUT, EINVAL, EDEADLK, EPERM, EAGAIN, EOWNERDEAD,
//!   ENOTRECOVERABLE), as a list to compare with glibc's run directly.
//! - [`fork`]: a process whose threads are locking forks; the child uses a
//!   mutex and a condition variable of its own with two threads, and exits
//!   normally (so that an interposer's report at exit is written).

use crate::sys::pthread::{Kind, Mutex};
use crate::sys::pthread_cond::Cond;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// Increments `counter` `n` times under `m`, as a load and a store, so
/// that two holders at once lose an update.
pub fn hammer(m: &Mutex, counter: &AtomicU64, n: u64) {
    for _ in 0..n {
        m.lock();
        counter.store(counter.load(Relaxed) + 1, Relaxed);
        unlock(m);
    }
}

fn unlock(m: &Mutex) {
    let r = m.unlock_code();
    assert_eq!(r, 0, "pthread_mutex_unlock: errno {r}");
}

/// Waits on `c` for at most `ms`, holding `m`; true if it timed out.
fn wait(c: &Cond, m: &Mutex, ms: u64, monotonic: bool) -> bool {
    // SAFETY: every caller holds `m`, and made `c` with this clock; each
    // condition variable here is used with one mutex.
    unsafe { c.wait_timeout(m, Duration::from_millis(ms), monotonic) }
}

/// Recursive and error-checking mutexes.
pub fn kinds() -> Result<(), String> {
    let r = Mutex::new(Kind::Recursive, false);
    if (r.lock_code(), r.lock_code()) != (0, 0) {
        return Err("a recursive mutex refused its owner".into());
    }
    let stolen = std::thread::scope(|s| s.spawn(|| r.try_lock()).join().unwrap_or(true));
    if stolen {
        return Err("another thread took a held recursive mutex".into());
    }
    if (r.unlock_code(), r.unlock_code()) != (0, 0) {
        return Err("a recursive mutex refused its owner's unlocks".into());
    }
    let e = Mutex::new(Kind::ErrorCheck, false);
    if e.lock_code() != 0 {
        return Err("an error-checking mutex refused a first lock".into());
    }
    let again = e.lock_code();
    if again != libc::EDEADLK {
        return Err(format!("relocking an error-checking mutex gave {again}, not EDEADLK"));
    }
    let foreign = std::thread::scope(|s| s.spawn(|| e.unlock_code()).join().unwrap_or(0));
    if foreign != libc::EPERM {
        return Err(format!("unlocking another thread's error-checking mutex gave {foreign}, not EPERM"));
    }
    unlock(&e);
    Ok(())
}

/// A deadline `offset_s` from now on `clock`, with `nsec` added to its
/// nanoseconds (1e9 and above make it invalid).
fn deadline(clock: libc::clockid_t, offset_s: i64, nsec: i64) -> libc::timespec {
    // SAFETY: plain data for clock_gettime to fill.
    let mut t: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid clock id and a live timespec.
    unsafe { libc::clock_gettime(clock, &mut t) };
    t.tv_sec += offset_s;
    t.tv_nsec = if nsec >= 1_000_000_000 { nsec } else { (t.tv_nsec + nsec).min(999_999_999) };
    t
}

/// The name of an errno a pthread call returns.
fn code(rc: libc::c_int) -> &'static str {
    match rc {
        0 => "0",
        libc::EBUSY => "EBUSY",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::EINVAL => "EINVAL",
        libc::EDEADLK => "EDEADLK",
        libc::EPERM => "EPERM",
        libc::EAGAIN => "EAGAIN",
        libc::EOWNERDEAD => "EOWNERDEAD",
        libc::ENOTRECOVERABLE => "ENOTRECOVERABLE",
        _ => "other",
    }
}

/// Runs `f` on a thread of its own and returns its result (a thread that
/// locks and exits is how a robust mutex's owner dies).
fn on_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| s.spawn(f).join().expect("the check's thread"))
}

/// Every error a mutex call can return, each provoked once: the list of
/// (case, result) is the same whichever lock the interposer swapped in
/// and whether it profiles, as long as the semantics are glibc's. The
/// default mutex (swapped under a swapped lock) gives EBUSY, ETIMEDOUT
/// and EINVAL; the error-checking, recursive and robust kinds (left to
/// glibc) give the rest, through the interposer's entry points.
pub fn codes() -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    let rt = libc::CLOCK_REALTIME;
    let normal = Mutex::new(Kind::Default, false);
    out.push(("default: trylock, free".into(), code(normal.try_lock_code())));
    on_thread(|| {
        out.push(("default: trylock, held by another thread".into(), code(normal.try_lock_code())));
        out.push((
            "default: timedlock, held, deadline passed".into(),
            code(normal.timed_lock_code(&deadline(rt, -1, 0))),
        ));
        out.push((
            "default: timedlock, held, tv_nsec out of range".into(),
            code(normal.timed_lock_code(&deadline(rt, 1, 1_000_000_007))),
        ));
        out.push((
            "default: clocklock, held, monotonic deadline passed".into(),
            code(normal.clock_lock_code(libc::CLOCK_MONOTONIC, &deadline(libc::CLOCK_MONOTONIC, -1, 0))),
        ));
    });
    out.push(("default: unlock".into(), code(normal.unlock_code())));
    out.push((
        "default: clocklock, free, unsupported clock".into(),
        code(normal.clock_lock_code(libc::CLOCK_PROCESS_CPUTIME_ID, &deadline(rt, 1, 0))),
    ));

    let e = Mutex::new(Kind::ErrorCheck, false);
    out.push(("errorcheck: unlock, not held".into(), code(e.unlock_code())));
    out.push(("errorcheck: lock".into(), code(e.lock_code())));
    out.push(("errorcheck: lock again by its owner".into(), code(e.lock_code())));
    out.push(("errorcheck: trylock by its owner".into(), code(e.try_lock_code())));
    out.push(("errorcheck: timedlock by its owner".into(), code(e.timed_lock_code(&deadline(rt, 1, 0)))));
    out.push(("errorcheck: unlock by another thread".into(), code(on_thread(|| e.unlock_code()))));
    out.push(("errorcheck: unlock".into(), code(e.unlock_code())));

    let r = Mutex::new(Kind::Recursive, false);
    out.push(("recursive: lock".into(), code(r.lock_code())));
    // SAFETY: recursive, and held by this thread.
    unsafe { r.set_recursion_count(u32::MAX) };
    out.push(("recursive: lock at the count's limit".into(), code(r.lock_code())));
    out.push(("recursive: trylock at the count's limit".into(), code(r.try_lock_code())));
    // SAFETY: as above.
    unsafe { r.set_recursion_count(1) };
    out.push(("recursive: unlock".into(), code(r.unlock_code())));

    for how in ["lock", "trylock", "timedlock"] {
        let m = Mutex::new(Kind::Robust, false);
        // The owner dies holding it.
        on_thread(|| m.lock_code());
        let rc = match how {
            "lock" => m.lock_code(),
            "trylock" => m.try_lock_code(),
            _ => m.timed_lock_code(&deadline(rt, 1, 0)),
        };
        out.push((format!("robust: {how}, owner died"), code(rc)));
        if how == "lock" {
            out.push(("robust: consistent".into(), code(m.consistent_code())));
            out.push(("robust: unlock after consistent".into(), code(m.unlock_code())));
            out.push(("robust: lock after recovery".into(), code(m.lock_code())));
            out.push(("robust: unlock".into(), code(m.unlock_code())));
        } else {
            // Unlocked without consistent: never usable again.
            out.push((format!("robust ({how}): unlock, not made consistent"), code(m.unlock_code())));
            out.push((format!("robust ({how}): lock, not recoverable"), code(m.lock_code())));
            out.push((format!("robust ({how}): trylock, not recoverable"), code(m.try_lock_code())));
        }
    }
    out
}

/// A bounded ring of items under a pthread mutex: plain loads and stores,
/// so two threads inside at once would lose or repeat items.
struct Ring {
    slots: [AtomicU64; 16],
    head: AtomicU64,
    tail: AtomicU64,
    consumed: AtomicU64,
    sum: AtomicU64,
}

/// The producer/consumer stress of the condition variable: `pairs`
/// producers and as many consumers.
pub fn condvar(pairs: u64) -> Result<(), String> {
    let producers = pairs;
    const ITEMS: u64 = 20_000;
    let m = Mutex::new(Kind::Default, false);
    let (not_full, not_empty) = (Cond::with_clock(true), Cond::with_clock(false));
    let ring = Ring {
        slots: std::array::from_fn(|_| AtomicU64::new(0)),
        head: AtomicU64::new(0),
        tail: AtomicU64::new(0),
        consumed: AtomicU64::new(0),
        sum: AtomicU64::new(0),
    };
    let total = producers * ITEMS;
    let timeouts = AtomicU64::new(0);
    std::thread::scope(|s| {
        for p in 0..producers {
            let (m, ring, not_full, not_empty, timeouts) = (&m, &ring, &not_full, &not_empty, &timeouts);
            s.spawn(move || {
                for i in 1..=ITEMS {
                    m.lock();
                    while ring.tail.load(Relaxed) - ring.head.load(Relaxed) == 16 {
                        if wait(not_full, m, 2, true) {
                            timeouts.fetch_add(1, Relaxed);
                        }
                    }
                    let t = ring.tail.load(Relaxed);
                    ring.slots[(t % 16) as usize].store(p * ITEMS + i, Relaxed);
                    ring.tail.store(t + 1, Relaxed);
                    not_empty.signal();
                    unlock(m);
                }
            });
        }
        for _ in 0..pairs {
            let (m, ring, not_full, not_empty, timeouts) = (&m, &ring, &not_full, &not_empty, &timeouts);
            s.spawn(move || loop {
                m.lock();
                while ring.tail.load(Relaxed) == ring.head.load(Relaxed)
                    && ring.consumed.load(Relaxed) < total
                {
                    if wait(not_empty, m, 2, false) {
                        timeouts.fetch_add(1, Relaxed);
                    }
                }
                if ring.consumed.load(Relaxed) == total {
                    not_empty.broadcast();
                    unlock(m);
                    return;
                }
                let h = ring.head.load(Relaxed);
                let v = ring.slots[(h % 16) as usize].load(Relaxed);
                ring.head.store(h + 1, Relaxed);
                ring.consumed.store(ring.consumed.load(Relaxed) + 1, Relaxed);
                ring.sum.store(ring.sum.load(Relaxed) + v, Relaxed);
                not_full.signal();
                unlock(m);
            });
        }
    });
    let want: u64 = (1..=total).sum();
    let (got, sum) = (ring.consumed.load(Relaxed), ring.sum.load(Relaxed));
    if got != total || sum != want {
        return Err(format!(
            "{got} of {total} items consumed, sum {sum} (expected {want}): items lost or repeated"
        ));
    }
    eprintln!("condvar: {total} items, {} timed waits timed out", timeouts.load(Relaxed));
    // Nobody signals: the wait must time out, and not before its deadline.
    for monotonic in [true, false] {
        let c = Cond::with_clock(monotonic);
        m.lock();
        let start = Instant::now();
        let timed_out = wait(&c, &m, 5, monotonic);
        let waited = start.elapsed();
        unlock(&m);
        // A spurious wake-up is allowed; one that is neither that nor a
        // timeout would loop: retry once to tell them apart.
        if !timed_out {
            continue;
        }
        if waited < Duration::from_millis(5) {
            return Err(format!("a 5 ms timed wait (monotonic {monotonic}) timed out after {waited:?}"));
        }
    }
    Ok(())
}

/// Fork in a multithreaded program.
pub fn fork() -> Result<(), String> {
    let m = Mutex::new(Kind::Default, false);
    let counter = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let child = std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                while !stop.load(Relaxed) {
                    hammer(&m, &counter, 100);
                }
            });
        }
        std::thread::sleep(Duration::from_millis(50));
        let child = crate::sys::process::fork_exiting(|| {
            // The child: one thread left, with memory of the parent's
            // mutex in whatever state; it uses its own.
            let own = Mutex::statically_initialized();
            let cond = Cond::with_clock(true);
            let turn = AtomicU64::new(0);
            std::thread::scope(|s| {
                for me in 0..2u64 {
                    let (own, cond, turn) = (&own, &cond, &turn);
                    s.spawn(move || {
                        for _ in 0..500 {
                            own.lock();
                            while turn.load(Relaxed) % 2 != me {
                                wait(cond, own, 10, true);
                            }
                            turn.store(turn.load(Relaxed) + 1, Relaxed);
                            cond.broadcast();
                            unlock(own);
                        }
                    });
                }
            });
            i32::from(turn.load(Relaxed) != 1000)
        });
        std::thread::sleep(Duration::from_millis(50));
        stop.store(true, Relaxed);
        child
    });
    let pid = child.map_err(|e| format!("fork: {e}"))?;
    let usage = crate::sys::process::wait4(pid).map_err(|e| format!("wait4: {e}"))?;
    if usage.status != 0 {
        return Err(format!("the forked child failed (wait status {:#x})", usage.status));
    }
    let n = counter.load(Relaxed);
    if n % 100 != 0 || n == 0 {
        return Err(format!("the parent's counter is {n}, not a positive multiple of 100: updates lost"));
    }
    Ok(())
}
