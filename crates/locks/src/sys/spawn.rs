//! Starting someone else's program as a shell would, from a process that
//! has rearranged its own signals: contend blocks SIGINT, SIGTERM, SIGHUP,
//! SIGQUIT and SIGCHLD to read them from a signalfd, Rust's runtime
//! ignores SIGPIPE, and a child made by glibc's posix_spawn starts with
//! glibc's two internal real-time signals ignored. A program inherits a
//! blocked mask and ignored signals across exec, so without this it would
//! ignore Ctrl-C and `kill -TERM`, and a shell's `wait` would never hear
//! of its children.
//!
//! [`SignalState::capture`] notes, first thing in `main`, the mask and
//! the ignored signals contend itself was given; [`as_program`] makes a
//! child start with exactly those (and every other signal at its default
//! action), which is what a shell passes to the programs it starts.

use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

/// The highest signal number on Linux.
const MAX_SIGNAL: i32 = 64;

/// The kernel's `struct sigaction` on x86_64 and aarch64 (both define
/// SA_RESTORER, so both have the restorer field). The raw syscall is used
/// because glibc's sigaction refuses its internal signals (32 and 33),
/// which is where posix_spawn leaves SIG_IGN behind.
#[repr(C)]
struct KernelSigaction {
    handler: usize,
    flags: u64,
    restorer: usize,
    mask: u64,
}

/// Sets signal `sig` to SIG_DFL or SIG_IGN, returning the old handler
/// (None if the kernel refused). Async-signal-safe: one syscall.
fn raw_sigaction(sig: i32, set: Option<usize>) -> Option<usize> {
    let new = set.map(|handler| KernelSigaction { handler, flags: 0, restorer: 0, mask: 0 });
    let mut old = KernelSigaction { handler: 0, flags: 0, restorer: 0, mask: 0 };
    let new_ptr = new.as_ref().map_or(std::ptr::null(), |a| a as *const KernelSigaction);
    // SAFETY: rt_sigaction with pointers to live structs of the kernel's
    // layout (or null for "do not set") and the kernel's sigset size, 8.
    let r = unsafe {
        libc::syscall(libc::SYS_rt_sigaction, sig, new_ptr, &mut old as *mut KernelSigaction, 8usize)
    };
    (r == 0).then_some(old.handler)
}

/// A signal mask and a set of ignored signals, as bits (bit `n - 1` is
/// signal `n`, as in /proc/PID/status).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SignalState {
    /// Blocked signals.
    pub blocked: u64,
    /// Signals whose disposition is SIG_IGN.
    pub ignored: u64,
}

impl SignalState {
    /// The calling thread's mask and the process's ignored signals. Call
    /// before changing either. Never counted as ignored: SIGPIPE (Rust's
    /// runtime ignores it before `main`, so its state from the parent is
    /// lost, and a program expects the default; Rust's own Command resets
    /// it too), and glibc's internal signals 32 and 33 (a process started
    /// by glibc's posix_spawn starts with them ignored, an artifact of how
    /// it was started rather than anyone's choice; no glibc program can
    /// set them anyway).
    pub fn capture() -> Self {
        // SAFETY: sigset_t is plain data that pthread_sigmask fills.
        let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: a null new set only reads the mask into `set`.
        unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut set) };
        let mut state = SignalState::default();
        for sig in 1..=MAX_SIGNAL {
            // SAFETY: `set` was filled above; sigismember only reads it.
            if unsafe { libc::sigismember(&set, sig) } == 1 {
                state.blocked |= 1 << (sig - 1);
            }
            let never = sig == libc::SIGPIPE || sig == 32 || sig == 33;
            if !never && raw_sigaction(sig, None) == Some(libc::SIG_IGN) {
                state.ignored |= 1 << (sig - 1);
            }
        }
        state
    }

    /// As `BLOCKED:IGNORED` in hex, for a command line.
    pub fn to_arg(self) -> String {
        format!("{:x}:{:x}", self.blocked, self.ignored)
    }

    /// From [`SignalState::to_arg`]'s form.
    pub fn from_arg(s: &str) -> Option<Self> {
        let (b, i) = s.split_once(':')?;
        Some(SignalState {
            blocked: u64::from_str_radix(b, 16).ok()?,
            ignored: u64::from_str_radix(i, 16).ok()?,
        })
    }
}

/// Makes `cmd`'s child start as a shell would start a program with
/// `state`: every signal at its default action except those `state`
/// ignores, the mask `state` blocks, and (with `die_with_parent`) a
/// SIGKILL when the thread that spawned it exits (PR_SET_PDEATHSIG), so
/// that a killed parent does not leave the program running. The child
/// refuses to start if its parent is already gone.
pub fn as_program(cmd: &mut Command, state: SignalState, die_with_parent: bool) {
    // SAFETY: getpid cannot fail.
    let parent = unsafe { libc::getpid() };
    let hook = move || -> std::io::Result<()> {
        for sig in 1..=MAX_SIGNAL {
            if sig == libc::SIGKILL || sig == libc::SIGSTOP {
                continue;
            }
            let ignore = state.ignored & (1 << (sig - 1)) != 0;
            // A signal the kernel refuses to change has nothing to reset.
            let _ = raw_sigaction(sig, Some(if ignore { libc::SIG_IGN } else { libc::SIG_DFL }));
        }
        // SAFETY: sigset_t is plain data, filled by sigemptyset/sigaddset.
        let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a valid sigset_t; these only write to it, and
        // sigprocmask is async-signal-safe.
        unsafe {
            libc::sigemptyset(&mut set);
            for sig in 1..=MAX_SIGNAL {
                if state.blocked & (1 << (sig - 1)) != 0 {
                    libc::sigaddset(&mut set, sig);
                }
            }
            if libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        if die_with_parent {
            // SAFETY: prctl with PR_SET_PDEATHSIG and a valid signal.
            if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died before the prctl took effect.
            // SAFETY: getppid cannot fail.
            if unsafe { libc::getppid() } != parent {
                return Err(std::io::Error::other("its parent exited before it started"));
            }
        }
        Ok(())
    };
    // SAFETY: the hook runs between fork and exec and makes only
    // async-signal-safe calls (rt_sigaction, sigprocmask, prctl, getppid)
    // on memory it owns.
    unsafe { cmd.pre_exec(hook) };
}

/// Makes this process's descriptor `fd` descriptor `target` of `cmd`'s
/// child (and not close-on-exec there), whatever `fd`'s own flags.
pub fn pass_fd(cmd: &mut Command, fd: RawFd, target: RawFd) {
    let hook = move || -> std::io::Result<()> {
        if fd == target {
            // dup2 onto itself keeps close-on-exec: clear it instead.
            // SAFETY: fcntl on a descriptor the child inherited.
            if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        // SAFETY: dup2 of an inherited descriptor; async-signal-safe.
        } else if unsafe { libc::dup2(fd, target) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    };
    // SAFETY: the hook makes one async-signal-safe call (dup2 or fcntl).
    unsafe { cmd.pre_exec(hook) };
}

/// Takes ownership of descriptor `fd`, which this process's parent passed
/// with [`pass_fd`], and makes it close-on-exec so that nothing this
/// process starts inherits it. Once per descriptor: a second call fails.
pub fn take_passed(fd: RawFd) -> std::io::Result<OwnedFd> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static TAKEN: AtomicU64 = AtomicU64::new(0);
    if !(0..64).contains(&fd) || TAKEN.fetch_or(1 << fd, Ordering::Relaxed) & (1 << fd) != 0 {
        return Err(std::io::Error::other(format!("descriptor {fd} was not passed, or was taken already")));
    }
    // SAFETY: fcntl on a descriptor number; fails with EBADF if not open.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the descriptor is open (fcntl succeeded), was passed by the
    // parent for this process to own, and is taken once (checked above).
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Turns address randomization off for this process's future children
/// (the personality flag `setarch -R` sets; it is inherited across fork
/// and exec), so that a program run twice puts its data at the same
/// addresses: `contend run` names a mutex by its address from one
/// execution to the next.
pub fn fixed_addresses() -> std::io::Result<()> {
    // SAFETY: personality(0xffffffff) only reads the current persona.
    let now = unsafe { libc::personality(0xffff_ffff) };
    if now == -1 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: sets this process's persona to the current one plus one
    // flag; no memory is passed.
    if unsafe { libc::personality(now as libc::c_ulong | libc::ADDR_NO_RANDOMIZE as libc::c_ulong) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_round_trips_through_its_argument() {
        let s = SignalState { blocked: 0x14007, ignored: 0x1_8000_0000 };
        assert_eq!(SignalState::from_arg(&s.to_arg()), Some(s));
        assert_eq!(SignalState::from_arg("zz:1"), None);
        assert_eq!(SignalState::from_arg("1"), None);
    }

    #[test]
    fn a_program_gets_the_given_state_not_its_parents() {
        // This test process blocks SIGUSR1; the child is told to block
        // only SIGUSR2 and to ignore SIGHUP.
        // SAFETY: a zeroed sigset_t filled by sigemptyset/sigaddset.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGUSR1);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        }
        let want = SignalState { blocked: 1 << (libc::SIGUSR2 - 1), ignored: 1 << (libc::SIGHUP - 1) };
        let mut cmd = Command::new("grep");
        cmd.args(["-E", "^Sig(Blk|Ign)", "/proc/self/status"]);
        as_program(&mut cmd, want, true);
        let out = String::from_utf8(cmd.output().expect("grep runs").stdout).unwrap();
        assert!(out.contains(&format!("SigBlk:\t{:016x}", want.blocked)), "{out}");
        assert!(out.contains(&format!("SigIgn:\t{:016x}", want.ignored)), "{out}");
    }
}
