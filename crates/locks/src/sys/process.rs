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

/// Forks a child that runs `body` and leaves with exit(3), running its
/// exit handlers and library destructors (what a program that forks does,
/// and what an LD_PRELOAD library's report at exit needs). For tests of
/// fork in a multithreaded program; workers use [`fork_worker`].
pub fn fork_exiting(body: impl FnOnce() -> i32) -> io::Result<libc::pid_t> {
    // SAFETY: as in `fork_worker`; the child may lock mutexes no other
    // parent thread held at the fork, which is what POSIX allows.
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        0 => {
            let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).unwrap_or(101);
            // SAFETY: ends the child through exit(3), on purpose.
            unsafe { libc::exit(code) }
        }
        pid => Ok(pid),
    }
}

/// Says `msg` on stderr and ends the process at once, without running
/// destructors or exit handlers: for code inside someone else's program
/// (the interposer) that cannot go on, where a destructor might lock the
/// very mutexes being interposed. Allocates the message, so not for a
/// path that may run inside the program's allocator.
pub fn die(msg: &str) -> ! {
    let line = format!("{msg}\n");
    // SAFETY: writes a valid buffer to fd 2, then ends the process.
    unsafe {
        libc::write(2, line.as_ptr() as *const libc::c_void, line.len());
        libc::_exit(127)
    }
}

/// What wait4(2) reports for a reaped child.
#[derive(Debug, Clone, Copy)]
pub struct ChildUsage {
    /// Exit status as waitpid returns it.
    pub status: libc::c_int,
    /// User CPU seconds.
    pub user_s: f64,
    /// System CPU seconds.
    pub sys_s: f64,
    /// Peak resident set, kB.
    pub max_rss_kib: i64,
    /// Voluntary context switches.
    pub voluntary: i64,
    /// Involuntary context switches.
    pub involuntary: i64,
}

impl ChildUsage {
    /// The signal that ended the child (WIFSIGNALED, WTERMSIG), if one did.
    pub fn signal(&self) -> Option<i32> {
        let sig = self.status & 0x7f;
        (sig != 0 && sig != 0x7f).then_some(sig)
    }

    /// Its exit code (WIFEXITED, WEXITSTATUS), if it exited.
    pub fn exit_code(&self) -> Option<i32> {
        (self.status & 0x7f == 0).then_some((self.status >> 8) & 0xff)
    }
}

/// Reaps child `pid` with wait4(2), returning its status and resource usage
/// (std's Child::wait does not give the rusage).
pub fn wait4(pid: libc::pid_t) -> io::Result<ChildUsage> {
    let mut status = 0;
    // SAFETY: rusage is plain data that wait4 fills.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: waiting for our own child with valid out-pointers.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            break;
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok(ChildUsage {
        status,
        user_s: secs(ru.ru_utime),
        sys_s: secs(ru.ru_stime),
        max_rss_kib: ru.ru_maxrss,
        voluntary: ru.ru_nvcsw,
        involuntary: ru.ru_nivcsw,
    })
}

#[cfg(test)]
mod tests {
    use super::ChildUsage;

    fn usage(status: i32) -> ChildUsage {
        ChildUsage { status, user_s: 0.0, sys_s: 0.0, max_rss_kib: 0, voluntary: 0, involuntary: 0 }
    }

    #[test]
    fn a_wait_status_reads_as_an_exit_code_or_a_signal() {
        assert_eq!((usage(0).exit_code(), usage(0).signal()), (Some(0), None));
        assert_eq!((usage(3 << 8).exit_code(), usage(3 << 8).signal()), (Some(3), None));
        assert_eq!((usage(9).exit_code(), usage(9).signal()), (None, Some(9)));
        // A core dump sets 0x80 beside the signal.
        assert_eq!(usage(0x80 | 11).signal(), Some(11));
    }
}
