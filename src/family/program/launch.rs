//! contend's side of the keeper (`keeper.rs`): start it for one execution
//! of the program, pass on an ending signal, and read what it measured.
//!
//! The program's standard streams are its own: the keeper and the program
//! inherit contend's stdin, stdout and stderr unless `--metric` gives them
//! capture files. The program stays in contend's process group, as a
//! shell would leave it, so the terminal's Ctrl-C reaches it directly too;
//! contend adds the SIGTERM, the grace and the SIGKILL for everything the
//! program started elsewhere.

use crate::engine::Interrupted;
use crate::family::program::keeper::SOCKET_FD;
use crate::model::program::Leftovers;
use crate::session::signals;
use anyhow::{anyhow, bail, Context, Result};
use locks::sys::process::ChildUsage;
use nix::sys::signal::Signal;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

/// One execution to start.
pub struct Launch<'a> {
    /// The program and its arguments.
    pub program: &'a [OsString],
    /// Added to its environment.
    pub env: Vec<(OsString, OsString)>,
    /// Its stdout and stderr, if captured (else inherited).
    pub capture: Option<(std::fs::File, std::fs::File)>,
    /// Between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// Run it with address randomization off (`--aslr`).
    pub fixed_addresses: bool,
    /// Ended (SIGTERM, the grace, SIGKILL) if it runs longer: the
    /// execution then finishes with [`Finished::ended_at`] set.
    pub limit: Option<Duration>,
}

/// One finished execution.
#[derive(Debug, Clone, Copy)]
pub struct Finished {
    /// The program's pid.
    pub pid: i32,
    /// Its wait status and resource usage.
    pub usage: ChildUsage,
    /// From spawn to exit.
    pub wall: Duration,
    /// What it left running.
    pub leftovers: Leftovers,
    /// The limit that ended it, if one did ([`Launch::limit`]).
    pub ended_at: Option<Duration>,
}

/// What the keeper reported, as it happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Told {
    /// The program started with this pid.
    Started(i32),
    /// The program exited; the keeper now ends what it left running.
    Exited,
}

/// Runs one execution through a keeper. `told` hears the program start
/// (the caller records it for `contend cleanup`) and exit, before the
/// keeper ends what the program left running: the caller's probes (futex
/// counts, CPU split) close there, so that the grace given to leftovers is
/// not measured as the program's. An ending signal during the execution is
/// passed on (SIGTERM to the program and its descendants, SIGKILL after
/// the grace); the call returns [`Interrupted`] once the keeper has ended
/// them all. A second signal exits contend at once, and the keeper, seeing
/// contend gone, kills everything. A keeper that dies first (SIGKILL) takes
/// the program with it (its death signal); what the program started comes
/// to contend, a child subreaper while it runs programs ([`adopt_orphans`]),
/// which ends it all before it reports the error.
pub fn execute(l: Launch<'_>, mut told: impl FnMut(Told)) -> Result<Finished> {
    let (mut ours, theirs) = UnixStream::pair().context("a socket to the keeper")?;
    let mut cmd = Command::new("/proc/self/exe");
    cmd.arg0("contend")
        .arg("__keeper")
        .arg("--grace-ms")
        .arg(l.grace.as_millis().to_string())
        .arg("--signals")
        .arg(signals::original().to_arg());
    if l.fixed_addresses {
        cmd.arg("--fixed-addresses");
    }
    for (k, v) in &l.env {
        let mut kv = k.clone();
        kv.push("=");
        kv.push(v);
        cmd.arg("--env").arg(kv);
    }
    cmd.arg("--").args(l.program).stdin(Stdio::inherit());
    if let Some((out, err)) = l.capture {
        cmd.stdout(out).stderr(err);
    }
    locks::sys::spawn::pass_fd(&mut cmd, theirs.as_raw_fd(), SOCKET_FD);
    let mut child = cmd.spawn().context("starting contend's keeper process")?;
    drop(theirs);
    let mut text = String::new();
    let mut interrupted: Option<Signal> = None;
    let mut exited = false;
    let mut started = false;
    let mut buf = [0u8; 4096];
    let deadline = l.limit.map(|d| std::time::Instant::now() + d);
    let mut too_slow = false;
    loop {
        let until = if too_slow || exited { None } else { deadline };
        match signals::wait_readable_until(ours.as_fd(), until) {
            signals::Readable::Signal(sig) => {
                if interrupted.is_none() {
                    interrupted = Some(sig);
                    // The keeper may have finished already: nothing to stop.
                    let _ = ours.write_all(b"T");
                }
                continue;
            }
            signals::Readable::TimedOut => {
                too_slow = true;
                let _ = ours.write_all(b"T");
                continue;
            }
            signals::Readable::Ready => {}
        }
        match ours.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                text.push_str(&String::from_utf8_lossy(&buf[..n]));
                if !started {
                    if let Some(pid) = started_pid(&text) {
                        started = true;
                        told(Told::Started(pid));
                    }
                }
                // The keeper writes this line the moment it has reaped
                // the program.
                if !exited && text.contains("exited ") {
                    exited = true;
                    told(Told::Exited);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).context("reading from the keeper"),
        }
    }
    let status = child.wait().context("reaping the keeper")?;
    let finished = parse(&text);
    if finished.is_err() && std::os::unix::process::ExitStatusExt::signal(&status).is_some() {
        // The keeper was killed before it ended everything: what the
        // program started is contend's now.
        let (found, killed) = end_orphans(l.grace);
        let ended = match found {
            0 => "nothing the program started was left".to_string(),
            n => format!("contend ended the {n} process(es) the program left ({killed} needed SIGKILL)"),
        };
        let e = finished.expect_err("checked above");
        return Err(e.context(format!(
            "contend's keeper process was killed ({status}) before the program ended; {ended}"
        )));
    }
    if let Some(sig) = interrupted {
        return Err(anyhow!(Interrupted(sig)));
    }
    match finished {
        Ok(f) => Ok(Finished { ended_at: l.limit.filter(|_| too_slow), ..f }),
        Err(e) if status.success() => Err(e),
        Err(e) => Err(e.context(format!("contend's keeper process {status}"))),
    }
}

/// [`execute`], with the process recorded in the run's ledger while it
/// runs (so that `contend cleanup` ends it should contend and its keeper
/// both die) and the record closed after, whatever happened: the keeper
/// has ended everything it started. `exited` hears the exit, before the
/// leftovers are ended (where the caller closes its probes).
pub fn execute_recorded(
    dir: &mut crate::family::program::scratch::RunDir,
    l: Launch<'_>,
    mut exited: impl FnMut(),
) -> Result<Finished> {
    let mut ledger = Ok(());
    let done = execute(l, |told| match told {
        Told::Started(pid) => ledger = dir.running(Some(pid)),
        Told::Exited => exited(),
    });
    dir.running(None)?;
    let done = done?;
    ledger?;
    Ok(done)
}

/// The pid in the keeper's `started PID` line, once it is whole.
fn started_pid(text: &str) -> Option<i32> {
    let rest = &text[text.find("started ")? + "started ".len()..];
    let line = &rest[..rest.find('\n')?];
    line.trim().parse().ok()
}

/// Makes contend a child subreaper while it runs programs: a process
/// whose parent dies becomes contend's child rather than init's, so that
/// if the keeper (the program's own subreaper) dies, what the program
/// started is still contend's to end. Off again when the returned guard
/// drops.
pub fn adopt_orphans() -> Result<Adopting> {
    nix::sys::prctl::set_child_subreaper(true).context("PR_SET_CHILD_SUBREAPER")?;
    Ok(Adopting)
}

/// contend is a child subreaper while this lives.
pub struct Adopting;

impl Drop for Adopting {
    fn drop(&mut self) {
        let _ = nix::sys::prctl::set_child_subreaper(false);
    }
}

/// Ends every process below contend (what a dead keeper left: SIGTERM,
/// the grace, SIGKILL) and reaps them: (found, needed SIGKILL).
fn end_orphans(grace: Duration) -> (usize, usize) {
    use crate::session::tree;
    let me = std::process::id() as i32;
    let reap = || {
        use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
        while let Ok(s) = waitpid(None, Some(WaitPidFlag::WNOHANG)) {
            if s == WaitStatus::StillAlive {
                break;
            }
        }
    };
    reap();
    let found = tree::descendants(me);
    for &p in &found {
        tree::signal(p, Signal::SIGTERM);
        tree::signal(p, Signal::SIGCONT);
    }
    let deadline = std::time::Instant::now() + grace;
    // Bounded by the grace; a process that takes it all is killed.
    while std::time::Instant::now() < deadline && !tree::descendants(me).is_empty() {
        std::thread::sleep(Duration::from_millis(10));
        reap();
    }
    let killed = tree::signal_all(me, Signal::SIGKILL);
    let give_up = std::time::Instant::now() + Duration::from_secs(10);
    while !tree::descendants(me).is_empty() && std::time::Instant::now() < give_up {
        std::thread::sleep(Duration::from_millis(10));
        reap();
    }
    // The last to die are zombies, which `descendants` leaves out.
    reap();
    (found.len(), killed)
}

/// The keeper's lines, as a [`Finished`].
fn parse(text: &str) -> Result<Finished> {
    let mut pid = None;
    let mut exited = None;
    let mut leftovers = None;
    for line in text.lines() {
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        let nums = || rest.split(' ').map(str::parse::<i64>).collect::<Result<Vec<_>, _>>();
        match word {
            "started" => pid = Some(rest.parse::<i32>()?),
            "exited" => {
                let f = nums()?;
                if f.len() != 7 {
                    bail!("the keeper said {line:?}");
                }
                let usage = ChildUsage {
                    status: f[0] as i32,
                    user_s: f[2] as f64 / 1e6,
                    sys_s: f[3] as f64 / 1e6,
                    max_rss_kib: f[4],
                    voluntary: f[5],
                    involuntary: f[6],
                };
                exited = Some((usage, Duration::from_nanos(f[1] as u64)));
            }
            "ended" => {
                let f = nums()?;
                if f.len() != 3 {
                    bail!("the keeper said {line:?}");
                }
                leftovers =
                    Some(Leftovers { found: f[0] as u64, killed: f[1] as u64, survivors: f[2] as u64 });
            }
            "error" => bail!("{rest}"),
            _ => bail!("the keeper said {line:?}"),
        }
    }
    let (Some(pid), Some((usage, wall)), Some(leftovers)) = (pid, exited, leftovers) else {
        bail!("the keeper ended before it reported the program's exit and its leftovers: {text:?}");
    };
    Ok(Finished { pid, usage, wall, leftovers, ended_at: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keepers_lines_read_back() {
        let f = parse("started 42\nexited 768 1500000 2000 1000 3000 4 5\nended 1 0 0\n").unwrap();
        assert_eq!((f.pid, f.usage.exit_code(), f.wall), (42, Some(3), Duration::from_micros(1500)));
        assert_eq!((f.usage.user_s, f.usage.voluntary), (0.002, 4));
        assert_eq!(f.leftovers, Leftovers { found: 1, killed: 0, survivors: 0 });
        assert!(parse("started 42\n").is_err());
        assert!(parse("error starting x: not found\n").unwrap_err().to_string().contains("not found"));
    }
}
