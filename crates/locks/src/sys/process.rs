//! Worker processes: fork a child that runs a closure and leaves with
//! _exit, dying with its parent.

use std::io;

/// Forks a child that runs `body` and exits with its result (101 if it
/// panics). The child dies if the parent dies (PR_SET_PDEATHSIG = SIGKILL),
/// never runs destructors or atexit handlers, and keeps the parent's signal
/// mask (contend blocks SIGINT/SIGTERM there, so Ctrl-C reaches only the
/// coordinator, which stops the workers itself).
///
/// Returns the child's pid to the parent.
pub fn fork_worker(body: impl FnOnce() -> i32) -> io::Result<libc::pid_t> {
    // SAFETY: getpid cannot fail.
    let parent = unsafe { libc::getpid() };
    // SAFETY: fork in a multi-threaded parent is safe for a child that only
    // uses async-signal-safe operations plus memory it owns: the worker loop
    // touches atomics in the shared arena, futexes, the vDSO clock and
    // nanosleep. glibc resets its malloc locks in the child, so even a
    // panic's allocation cannot deadlock on a lock another parent thread held.
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        0 => {
            // SAFETY: prctl with PR_SET_PDEATHSIG and a valid signal.
            unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
            // The parent may have died before the prctl took effect.
            // SAFETY: getppid cannot fail.
            if unsafe { libc::getppid() } != parent {
                // SAFETY: leaving the child without running any destructor.
                unsafe { libc::_exit(1) };
            }
            let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).unwrap_or(101);
            // SAFETY: as above: the child must not run the parent's
            // destructors (they would, for example, remove the SysV set).
            unsafe { libc::_exit(code) }
        }
        pid => Ok(pid),
    }
}
