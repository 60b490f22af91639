//! The keeper: the process between contend and the program `contend run`
//! runs, so that nothing the program starts outlives the run, however
//! contend ends.
//!
//! contend starts `contend __keeper` (hidden) for each execution, with one
//! end of a socket as descriptor 3 (`launch.rs` is the other end). The
//! keeper makes itself a child subreaper (PR_SET_CHILD_SUBREAPER: a
//! process below it whose parent exits becomes its child, not init's),
//! starts the program with the signal state contend itself was given and
//! a SIGKILL should the keeper die (`locks::sys::spawn::as_program`), and
//! times it from spawn to exit with a pidfd. Where contend asks
//! (`--fixed-addresses`: mutexes chosen by address), the program runs
//! without address randomization (as under `setarch -R`), so that its
//! mutexes have the same addresses in every execution. Then it ends whatever the
//! program left running: SIGTERM (and SIGCONT, for a stopped one) to every
//! descendant, the grace for them to exit, then SIGKILL; and it reaps
//! them all before it exits.
//!
//! contend writes one byte: `T` when an ending signal reached it (the
//! program and everything below it get SIGTERM, then SIGKILL after the
//! grace) or `K` on a second signal (SIGKILL at once). End of file on the
//! socket (contend exited in any way, SIGKILL included) means `K`. The
//! keeper answers in lines:
//!
//! ```text
//! started PID
//! exited STATUS WALL_NS USER_US SYS_US MAXRSS_KIB VOLUNTARY_CS INVOLUNTARY_CS
//! ended FOUND KILLED SURVIVORS     (what the program left running)
//! error MESSAGE
//! ```
//!
//! Why a separate process: a SIGKILLed contend runs no code, and
//! PR_SET_PDEATHSIG reaches only the program, not what it started in
//! other sessions; the keeper sees contend's death as the socket's end of
//! file and ends them all. Why not a cgroup (`cgroup.kill`): it needs a
//! writable, delegated cgroup v2 tree, which root has but an unprivileged
//! user often does not; the subreaper works for any user, in containers,
//! on any kernel since 3.4. What neither would catch: a process the
//! program asks a service to start (systemd-run, at, D-Bus activation),
//! which was never its descendant. If the keeper itself is SIGKILLed, the
//! program dies (its death signal) and its own descendants go to contend,
//! a child subreaper too while it runs programs, which ends them
//! (`launch.rs`); if contend dies with it, `contend cleanup` finds them by
//! the run directory in their environment.

use crate::session::tree;
use anyhow::{anyhow, Context, Result};
use clap::Args;
use locks::sys::spawn::{self, SignalState};
use nix::sys::signal::Signal;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

/// The descriptor the socket to contend arrives on.
pub const SOCKET_FD: i32 = 3;

/// How long processes get to die after SIGKILL before the keeper gives up
/// on them (a process in uninterruptible sleep, on a dead NFS server say)
/// and says how many survived.
const KILL_WAIT: Duration = Duration::from_secs(10);

/// `contend __keeper`'s arguments (internal).
#[derive(Debug, Args)]
pub struct KeeperArgs {
    /// Time the program's processes get between SIGTERM and SIGKILL, ms.
    #[arg(long, default_value_t = 2000)]
    pub grace_ms: u64,
    /// The signal mask and ignored signals to start the program with
    /// (`locks::sys::spawn::SignalState`, BLOCKED:IGNORED in hex).
    #[arg(long)]
    pub signals: String,
    /// Start the program with address randomization off.
    #[arg(long)]
    pub fixed_addresses: bool,
    /// KEY=VALUE to add to the program's environment (not the keeper's:
    /// the interposer must not load into the keeper).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<OsString>,
    /// The program and its arguments.
    #[arg(required = true, last = true, num_args = 1..)]
    pub program: Vec<OsString>,
}

/// What contend asked for last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// Nothing: the program runs.
    No,
    /// SIGTERM sent; SIGKILL at the deadline.
    Terminate(Instant),
    /// SIGKILL sent at this instant, and to anything that appears.
    Kill(Instant),
}

/// The keeper's main.
pub fn run(args: &KeeperArgs) -> ExitCode {
    let mut sock = match spawn::take_passed(SOCKET_FD) {
        Ok(fd) => UnixStream::from(fd),
        Err(e) => {
            eprintln!("contend __keeper is started by `contend run` only (descriptor {SOCKET_FD}: {e})");
            return ExitCode::from(2);
        }
    };
    match keep(args, &mut sock) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // contend may be gone: nothing more to do about a failed write.
            let _ = writeln!(sock, "error {}", format!("{e:#}").replace('\n', " "));
            ExitCode::FAILURE
        }
    }
}

fn keep(args: &KeeperArgs, sock: &mut UnixStream) -> Result<()> {
    let state = SignalState::from_arg(&args.signals).ok_or_else(|| anyhow!("--signals {}", args.signals))?;
    nix::sys::prctl::set_child_subreaper(true).context("PR_SET_CHILD_SUBREAPER")?;
    let grace = Duration::from_millis(args.grace_ms);
    let mut cmd = Command::new(&args.program[0]);
    cmd.args(&args.program[1..]);
    for kv in &args.env {
        use std::os::unix::ffi::OsStrExt;
        let bytes = kv.as_bytes();
        let eq = bytes.iter().position(|&b| b == b'=').ok_or_else(|| anyhow!("--env {kv:?}: no ="))?;
        cmd.env(std::ffi::OsStr::from_bytes(&bytes[..eq]), std::ffi::OsStr::from_bytes(&bytes[eq + 1..]));
    }
    spawn::as_program(&mut cmd, state, true);
    // Asked for where mutexes are chosen by address: a mutex keeps its
    // address from one execution to the next. Where a sandbox forbids it,
    // addresses move, and contend run notices that a chosen mutex was
    // never taken.
    if args.fixed_addresses {
        let _ = spawn::fixed_addresses();
    }
    let t0 = Instant::now();
    let child = cmd.spawn().with_context(|| format!("starting {}", args.program[0].to_string_lossy()))?;
    let pid = child.id() as i32;
    // A failed write means contend is gone: the loop below sees the end
    // of file and kills.
    let _ = writeln!(sock, "started {pid}");
    let pidfd = rustix::process::pidfd_open(
        rustix::process::Pid::from_child(&child),
        rustix::process::PidfdFlags::empty(),
    )
    .context("pidfd_open on the program")?;
    let mut ending = Ending::No;
    loop {
        // Once killing, nothing contend says matters (and a closed socket
        // would wake the poll at once, for ever).
        let killing = matches!(ending, Ending::Kill(_));
        let readable = wait(&pidfd, (!killing).then_some(&*sock), deadline(ending))?;
        if readable.0 {
            break;
        }
        ending = heed(sock, readable.1, ending, grace);
        match ending {
            Ending::Terminate(at) if Instant::now() >= at => ending = kill_all(),
            Ending::Kill(at) if at.elapsed() > KILL_WAIT => {
                anyhow::bail!(
                    "the program did not die within {KILL_WAIT:?} of SIGKILL (uninterruptible sleep?)"
                )
            }
            _ => {}
        }
    }
    let wall = t0.elapsed();
    let usage = locks::sys::process::wait4(pid).context("reaping the program")?;
    let _ = writeln!(
        sock,
        "exited {} {} {} {} {} {} {}",
        usage.status,
        wall.as_nanos(),
        (usage.user_s * 1e6).round() as u64,
        (usage.sys_s * 1e6).round() as u64,
        usage.max_rss_kib,
        usage.voluntary,
        usage.involuntary
    );
    let (found, killed, survivors) = end_the_rest(sock, ending, grace)?;
    let _ = writeln!(sock, "ended {found} {killed} {survivors}");
    Ok(())
}

fn own_pid() -> i32 {
    std::process::id() as i32
}

fn deadline(ending: Ending) -> Option<Instant> {
    match ending {
        Ending::No => None,
        Ending::Terminate(at) => Some(at),
        Ending::Kill(at) => Some(at + KILL_WAIT),
    }
}

/// SIGKILL to every descendant, now.
fn kill_all() -> Ending {
    tree::signal_all(own_pid(), Signal::SIGKILL);
    Ending::Kill(Instant::now())
}

/// Waits until the program exits, contend writes (if `sock` is given),
/// or `until`: (program exited, socket readable).
fn wait(pidfd: &impl AsFd, sock: Option<&UnixStream>, until: Option<Instant>) -> Result<(bool, bool)> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let ms = until.map(|t| t.saturating_duration_since(Instant::now()).as_millis().min(60_000) as u16);
    let timeout = ms.map_or(PollTimeout::NONE, PollTimeout::from);
    let mut fds = vec![PollFd::new(pidfd.as_fd(), PollFlags::POLLIN)];
    if let Some(s) = sock {
        fds.push(PollFd::new(s.as_fd(), PollFlags::POLLIN));
    }
    match poll(&mut fds, timeout) {
        Ok(_) | Err(nix::errno::Errno::EINTR) => {}
        Err(e) => return Err(anyhow!("poll: {e}")),
    }
    let ready = |f: &PollFd| f.revents().is_some_and(|r| !r.is_empty());
    Ok((ready(&fds[0]), fds.get(1).is_some_and(ready)))
}

/// Reads what contend wrote (if `readable`) and acts on it: the new state.
fn heed(sock: &mut UnixStream, readable: bool, ending: Ending, grace: Duration) -> Ending {
    if !readable || matches!(ending, Ending::Kill(_)) {
        return ending;
    }
    let mut buf = [0u8; 16];
    let asked = match sock.read(&mut buf) {
        Ok(0) | Err(_) => b'K',
        Ok(n) => buf[..n].iter().copied().max_by_key(|&b| b == b'K').unwrap_or(b'T'),
    };
    match (asked, ending) {
        (b'K', _) => kill_all(),
        (_, Ending::No) => {
            terminate(&tree::descendants(own_pid()));
            Ending::Terminate(Instant::now() + grace)
        }
        (_, other) => other,
    }
}

/// SIGTERM, then SIGCONT so that a stopped process can act on it.
fn terminate(procs: &[tree::Seen]) -> usize {
    procs
        .iter()
        .filter(|&&p| {
            let sent = tree::signal(p, Signal::SIGTERM);
            tree::signal(p, Signal::SIGCONT);
            sent
        })
        .count()
}

/// Reaps every child that has exited.
fn reap() {
    use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
    while let Ok(status) = waitpid(None, Some(WaitPidFlag::WNOHANG)) {
        if status == WaitStatus::StillAlive {
            break;
        }
    }
}

/// Ends what the program left running: SIGTERM, the grace, SIGKILL;
/// reaps it all. Returns (found, killed, survivors): the processes found
/// running (over every scan), how many of them needed SIGKILL, and how
/// many were still there [`KILL_WAIT`] after it.
fn end_the_rest(sock: &mut UnixStream, mut ending: Ending, grace: Duration) -> Result<(usize, usize, usize)> {
    let mut found: Vec<tree::Seen> = Vec::new();
    let mut killed: Vec<tree::Seen> = Vec::new();
    if ending == Ending::No {
        ending = Ending::Terminate(Instant::now() + grace);
    }
    loop {
        reap();
        let left = tree::descendants(own_pid());
        if left.is_empty() {
            return Ok((found.len(), killed.len(), 0));
        }
        let fresh: Vec<_> = left.iter().filter(|p| !found.contains(p)).copied().collect();
        found.extend(&fresh);
        if let Ending::Terminate(at) = ending {
            if Instant::now() >= at {
                ending = Ending::Kill(Instant::now());
            }
        }
        if let Ending::Kill(began) = ending {
            if began.elapsed() > KILL_WAIT {
                return Ok((found.len(), killed.len(), left.len()));
            }
            for p in &left {
                if tree::signal(*p, Signal::SIGKILL) && !killed.contains(p) {
                    killed.push(*p);
                }
            }
            // Nothing contend says can change this now.
            std::thread::sleep(Duration::from_millis(10));
        } else {
            // Newcomers (forked since, or reparented here) get SIGTERM too.
            terminate(&fresh);
            let (_, readable) = wait_socket(sock, Duration::from_millis(10))?;
            ending = heed(sock, readable, ending, grace);
        }
    }
}

/// Waits up to `d` for contend to write: (false, readable).
fn wait_socket(sock: &UnixStream, d: Duration) -> Result<(bool, bool)> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let mut fds = [PollFd::new(sock.as_fd(), PollFlags::POLLIN)];
    match poll(&mut fds, PollTimeout::from(d.as_millis().min(60_000) as u16)) {
        Ok(_) | Err(nix::errno::Errno::EINTR) => {}
        Err(e) => return Err(anyhow!("poll: {e}")),
    }
    Ok((false, fds[0].revents().is_some_and(|r| !r.is_empty())))
}
