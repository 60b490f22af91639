//! What-if by delay (`CONTEND_RUN_DELAY=0xADDR@NS`, `contend run
//! --what-if`): every critical section of one mutex is lengthened by NS
//! nanoseconds of busy waiting, right after the mutex is acquired, so that
//! contend can measure how the program's time moves with the length of
//! that mutex's critical sections and extrapolate what shortening them
//! would buy.
//!
//! Busy waiting, not sleeping: a critical section is work on a CPU, and a
//! sleeping holder would let another thread run where the real one would
//! not. The wait reads CLOCK_MONOTONIC (the vDSO, no syscall) until NS
//! have passed, so a preempted holder does not wait longer than asked.
//! Every acquisition is lengthened: by the program's lock calls, by this
//! library's condition variables, and at the return of glibc's condition
//! wait (which re-takes the mutex inside glibc).

use libc::pthread_mutex_t;
use locks::sys::clock::monotonic_ns;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

static ADDRESS: AtomicUsize = AtomicUsize::new(0);
static NS: AtomicU64 = AtomicU64::new(0);
/// Critical sections lengthened, and by how long in all, as the clock
/// saw it: a short delay is longer than asked (each clock read costs tens
/// of ns) and a preempted one much longer, so contend fits what was added,
/// not what was asked. Written by the mutex's holder alone (the mutex
/// orders the plain loads and stores).
static DELAYED: AtomicU64 = AtomicU64::new(0);
static DELAYED_NS: AtomicU64 = AtomicU64::new(0);

/// Critical sections lengthened and their added time, ns (None without a
/// delay).
pub fn totals() -> Option<(u64, u64)> {
    (ADDRESS.load(Relaxed) != 0).then(|| (DELAYED.load(Relaxed), DELAYED_NS.load(Relaxed)))
}

/// A forked child counts its own.
pub fn clear_in_child() {
    DELAYED.store(0, Relaxed);
    DELAYED_NS.store(0, Relaxed);
}

/// Parses `0xADDR@NS` (once, from `mode::decide`).
pub fn parse(spec: &str) -> Result<(), String> {
    let (address, ns) = locks::in_mutex::input::parse_at(spec, "nanoseconds")?;
    ADDRESS.store(address, Relaxed);
    NS.store(ns, Relaxed);
    Ok(())
}

/// Lengthens the critical section just entered, if `m` is the mutex.
#[inline]
pub fn entered(m: *mut pthread_mutex_t) {
    if m as usize != ADDRESS.load(Relaxed) {
        return;
    }
    let ns = NS.load(Relaxed);
    let start = monotonic_ns();
    let mut now = start;
    while now.wrapping_sub(start) < ns {
        std::hint::spin_loop();
        now = monotonic_ns();
    }
    // The holder alone writes them (see DELAYED).
    DELAYED.store(DELAYED.load(Relaxed) + 1, Relaxed);
    DELAYED_NS.store(DELAYED_NS.load(Relaxed) + now.wrapping_sub(start), Relaxed);
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_mutex_and_its_delay_are_read_and_a_bad_spec_refused() {
        assert!(super::parse("0x1000@2000").is_ok());
        let t = std::time::Instant::now();
        super::entered(0x1000 as *mut _);
        assert!(t.elapsed() >= std::time::Duration::from_nanos(2000), "the delay is at least what was asked");
        super::entered(0x2000 as *mut _);
        let (count, ns) = super::totals().unwrap();
        assert_eq!(count, 1, "only the chosen mutex's sections are lengthened");
        assert!(ns >= 2000);
        assert!(super::parse("0x1000").is_err() && super::parse("4096@1").is_err());
        assert!(super::parse("0x1000@1us").is_err());
    }
}
