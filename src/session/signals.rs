//! Signals, handled synchronously: SIGINT, SIGTERM, SIGHUP (the terminal
//! closed), SIGQUIT (Ctrl-\\) and SIGCHLD are blocked in every thread from
//! the start of `main` (threads and forked workers inherit the mask) and
//! read from a signalfd. The four that end a run are all treated alike:
//! partial results, nothing left behind, exit 128 + the signal. The
//! coordinator's waits (the measured window, the start gate, the drain)
//! are polls on that fd with a timeout, so Ctrl-C or a dying worker ends
//! them at once, and the cleanup runs on the coordinator's own stack
//! instead of in a handler.
//! Workers never see SIGINT: the coordinator stops them.
//!
//! A second SIGINT/SIGTERM takes the emergency exit at once: resources are
//! removed through the ledger and the process exits, even if a worker is
//! stuck in a lock. Every coordinator wait is a poll on the signal fd, so
//! the second interrupt is seen within milliseconds. The same signal from
//! the same sender within 50 ms is one event that reached contend twice
//! (GNU timeout signals its child, then its process group), not a second
//! interrupt. This is the one place below `report` that prints: the user
//! must learn at once what the second Ctrl-C does.
//!
//! Outside the measurement, a blocking call that only a signal can end (an
//! `open` of a FIFO that has no reader yet) runs inside [`interruptible`]:
//! the ending signals are unblocked for it, so they end contend with their
//! default action, as they would any program.

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{SigSet, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// What ended a wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The deadline passed.
    Deadline,
    /// SIGINT, SIGTERM, SIGHUP or SIGQUIT arrived.
    Interrupted(Signal),
    /// A child process changed state.
    Child,
}

static SIGNALS: OnceLock<SignalFd> = OnceLock::new();
static ORIGINAL: OnceLock<locks::sys::spawn::SignalState> = OnceLock::new();
static STOPPING: OnceLock<String> = OnceLock::new();

/// What the first interrupt stops, in the line it prints ("the workers"
/// unless a command says otherwise: `contend run` stops a program).
pub fn set_stopping(what: String) {
    let _ = STOPPING.set(what);
}
static ALREADY_INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// The first ending signal read, kept: a wait that reads it and cannot act
/// on it (the drain after a window, which must let workers finish their
/// hold) leaves it here for the sweep to stop on.
static LATCHED: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// The signals that end a run.
pub const ENDING: [Signal; 4] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP, Signal::SIGQUIT];

fn ending() -> SigSet {
    let mut set = SigSet::empty();
    for sig in ENDING {
        set.add(sig);
    }
    set
}

fn mask() -> SigSet {
    let mut set = ending();
    set.add(Signal::SIGCHLD);
    set
}

/// Blocks the signals and opens the signalfd. Call first thing in `main`,
/// before any thread exists.
pub fn install() -> nix::Result<()> {
    original();
    mask().thread_block()?;
    let fd = SignalFd::with_flags(&mask(), SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)?;
    let _ = SIGNALS.set(fd);
    Ok(())
}

/// The signal mask and ignored signals contend was started with, noted
/// by [`install`] before it blocks anything: what a program `contend run`
/// starts gets, as a shell would pass them on.
pub fn original() -> locks::sys::spawn::SignalState {
    *ORIGINAL.get_or_init(locks::sys::spawn::SignalState::capture)
}

/// Unblocks the ending signals and SIGCHLD in the calling thread: for a
/// process exec'd by contend (it inherits the blocked mask across exec)
/// that should die of Ctrl-C like any program.
pub fn restore_default() -> nix::Result<()> {
    mask().thread_unblock()
}

/// Runs `f` with the ending signals unblocked in this thread, so one
/// that arrives during a blocking call or a long computation (or is
/// already pending) ends the process with its default action. Only for
/// work that owns nothing to clean up: no workers, no recorded resources,
/// no temporary file. Nests: the mask `f` found is the one restored, so
/// an inner call (reading an export inside a render) does not block the
/// signals again for the rest of the outer one.
pub fn interruptible<T>(f: impl FnOnce() -> T) -> T {
    if SIGNALS.get().is_none() {
        return f();
    }
    let before = ending().thread_swap_mask(nix::sys::signal::SigmaskHow::SIG_UNBLOCK);
    let value = f();
    if let Ok(before) = before {
        let _ = before.thread_set_mask();
    }
    value
}

/// The exit status for a run ended by `signal`, as a shell reports it.
pub fn exit_status(signal: Signal) -> u8 {
    128 + signal as u8
}

/// Waits until `deadline` or a signal. Without `install` (library use, as in
/// the tests), sleeps until the deadline.
pub fn wait_until(deadline: Instant) -> Event {
    let Some(fd) = SIGNALS.get() else {
        std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
        return Event::Deadline;
    };
    loop {
        if let Some(event) = drain(fd) {
            return event;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Event::Deadline;
        }
        // Round up so a sub-millisecond remainder does not become a busy
        // loop of zero timeouts.
        let ms = left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
        let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLIN)];
        let _ = poll(&mut fds, PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX));
    }
}

/// Waits until `fd` is readable (or its writer closed it), or until an
/// ending signal arrives, which is returned. Without `install`, just
/// returns (the caller's read blocks instead).
pub fn wait_readable(fd: std::os::fd::BorrowedFd<'_>) -> Option<Signal> {
    match wait_readable_until(fd, None) {
        Readable::Signal(sig) => Some(sig),
        _ => None,
    }
}

/// What [`wait_readable_until`] saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readable {
    /// The descriptor is readable (or closed).
    Ready,
    /// An ending signal arrived.
    Signal(Signal),
    /// The deadline passed first.
    TimedOut,
}

/// As [`wait_readable`], until `deadline` at the latest.
pub fn wait_readable_until(fd: std::os::fd::BorrowedFd<'_>, deadline: Option<Instant>) -> Readable {
    let timeout = || match deadline {
        None => PollTimeout::NONE,
        Some(d) => {
            // Rounded up: poll must not return before the deadline.
            let ms =
                d.saturating_duration_since(Instant::now()).as_micros().div_ceil(1000).min(i32::MAX as u128);
            PollTimeout::try_from(ms as i32).unwrap_or(PollTimeout::MAX)
        }
    };
    let past = || deadline.is_some_and(|d| Instant::now() >= d);
    let Some(signals) = SIGNALS.get() else {
        if deadline.is_none() {
            return Readable::Ready;
        }
        loop {
            let mut fds = [PollFd::new(fd, PollFlags::POLLIN)];
            let _ = poll(&mut fds, timeout());
            if fds[0].any().unwrap_or(true) {
                return Readable::Ready;
            }
            if past() {
                return Readable::TimedOut;
            }
        }
    };
    loop {
        if let Some(Event::Interrupted(sig)) = drain(signals) {
            return Readable::Signal(sig);
        }
        let mut fds = [PollFd::new(fd, PollFlags::POLLIN), PollFd::new(signals.as_fd(), PollFlags::POLLIN)];
        let _ = poll(&mut fds, timeout());
        if fds[0].any().unwrap_or(true) {
            return Readable::Ready;
        }
        if past() {
            return Readable::TimedOut;
        }
    }
}

/// Waits for `d` (see [`wait_until`]).
pub fn wait_for(d: Duration) -> Event {
    wait_until(Instant::now() + d)
}

/// How close together one sender's same signal arrives when it is one
/// event sent twice: GNU timeout signals its child and then its process
/// group, which holds the child too, microseconds apart.
const ECHO: Duration = Duration::from_millis(50);

/// The first ending signal: which, from whom (pid), when.
static FIRST: std::sync::Mutex<Option<(Signal, u32, Instant)>> = std::sync::Mutex::new(None);

/// Whether `sig` from `sender` is the first one again, within [`ECHO`]:
/// not a second interrupt. The first one is recorded here.
fn echo(sig: Signal, sender: u32) -> bool {
    let mut first = FIRST.lock().unwrap_or_else(|e| e.into_inner());
    match *first {
        Some((s, from, at)) => s == sig && from == sender && at.elapsed() < ECHO,
        None => {
            *first = Some((sig, sender, Instant::now()));
            false
        }
    }
}

/// Reads pending signals; an interrupt wins over a child event.
fn drain(fd: &SignalFd) -> Option<Event> {
    let mut event = None;
    while let Ok(Some(info)) = fd.read_signal() {
        match Signal::try_from(info.ssi_signo as i32) {
            // An echo of the first was acted on already.
            Ok(sig) if ENDING.contains(&sig) && !echo(sig, info.ssi_pid) => {
                event = Some(Event::Interrupted(sig))
            }
            Ok(Signal::SIGCHLD) if event.is_none() => event = Some(Event::Child),
            _ => {}
        }
    }
    if let Some(Event::Interrupted(sig)) = event {
        let _ = LATCHED.compare_exchange(0, sig as i32, Ordering::Relaxed, Ordering::Relaxed);
        if ALREADY_INTERRUPTED.swap(true, Ordering::Relaxed) {
            crate::session::emergency::exit(exit_status(sig), &format!("second {sig}: exiting at once"));
        }
        let what = STOPPING.get().map_or("the workers", String::as_str);
        crate::session::terminal::say(&format!(
            "{sig}: stopping {what} and reporting what was measured; interrupt again to exit at once"
        ));
    }
    event
}

/// The first ending signal this process read, whoever read it: a sweep
/// checks it after each run, so an interrupt that arrived while workers
/// drained (and was read by that wait) still ends the sweep.
pub fn latched() -> Option<Signal> {
    if let Some(fd) = SIGNALS.get() {
        drain(fd);
    }
    match LATCHED.load(Ordering::Relaxed) {
        0 => None,
        n => Signal::try_from(n).ok(),
    }
}

/// Whether an interrupt is pending right now (without waiting).
pub fn interrupted() -> Option<Signal> {
    match SIGNALS.get().and_then(drain) {
        Some(Event::Interrupted(sig)) => Some(sig),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_wait_until_a_deadline_ends_at_it_or_when_data_comes() {
        let (mut a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let t = Instant::now();
        let r = wait_readable_until(b.as_fd(), Some(Instant::now() + Duration::from_millis(50)));
        assert_eq!(r, Readable::TimedOut);
        assert!(t.elapsed() >= Duration::from_millis(50), "not before the deadline");
        a.write_all(b"x").unwrap();
        assert_eq!(
            wait_readable_until(b.as_fd(), Some(Instant::now() + Duration::from_secs(60))),
            Readable::Ready
        );
    }
}
