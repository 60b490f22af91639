//! A run made in a child contend: contend executes itself with a hidden
//! subcommand and a spec (one JSON argument, no shell), in an environment
//! the parent cannot give itself after start-up (LD_PRELOAD for `contend
//! alloc`'s allocators, GLIBC_TUNABLES for glibc's mutex spin count), reads
//! the child's JSON result from a pipe while still taking signals, and
//! reaps it with wait4 for its CPU time. Both families' children go
//! through here, so both end the same way on Ctrl-C and on failure.

use crate::engine::Interrupted;
use anyhow::{bail, Context, Result};
use locks::sys::process::{wait4, ChildUsage};
use nix::sys::signal::Signal;
use std::io::Read;
use std::process::{Command, Stdio};

/// The environment a child must not inherit from the user's shell: each
/// child sets what it needs, and nothing else reaches it.
const CLEARED: [&str; 2] = ["LD_PRELOAD", "GLIBC_TUNABLES"];

/// A child being run.
pub struct Child {
    process: std::process::Child,
    what: String,
}

impl Child {
    /// Starts `contend SUBCOMMAND SPEC` with `env` set (and LD_PRELOAD and
    /// GLIBC_TUNABLES only as `env` says). `what` names it in errors.
    pub fn start(subcommand: &str, spec: &str, env: &[(&str, &str)], what: &str) -> Result<Self> {
        let exe = std::env::current_exe().context("finding contend's own executable")?;
        let mut cmd = Command::new(exe);
        cmd.arg(subcommand).arg(spec).stdout(Stdio::piped()).stderr(Stdio::inherit());
        for name in CLEARED {
            cmd.env_remove(name);
        }
        for (name, value) in env {
            cmd.env(name, value);
        }
        let process = cmd.spawn().with_context(|| format!("starting {what}"))?;
        Ok(Self { process, what: what.to_string() })
    }

    /// Waits for the child: its stdout (the result) and its usage. An
    /// ending signal while waiting, or one that killed the child (Ctrl-C
    /// reaches the whole process group), is an [`Interrupted`]; any other
    /// failure names the child.
    pub fn finish(mut self) -> Result<(String, ChildUsage)> {
        let out = match read_result(&mut self.process) {
            Ok(out) => out,
            Err(e) => {
                // Interrupted (a SIGTERM sent to contend alone does not
                // reach the child) or failed: the child goes too, reaped.
                let _ = self.process.kill();
                let _ = self.process.wait();
                return Err(e);
            }
        };
        let usage = wait4(self.process.id() as i32).with_context(|| format!("reaping {}", self.what))?;
        let killed_by = usage.signal().and_then(|s| Signal::try_from(s).ok());
        if let Some(sig) = killed_by.filter(|s| crate::session::signals::ENDING.contains(s)) {
            return Err(anyhow::anyhow!(Interrupted(sig)));
        }
        if usage.exit_code() != Some(0) {
            bail!("{} failed (wait status {:#x})", self.what, usage.status);
        }
        Ok((out, usage))
    }
}

/// Reads the child's stdout to its end, watching for an ending signal
/// meanwhile (a blocking read would sit through it).
fn read_result(child: &mut std::process::Child) -> Result<String> {
    use std::os::fd::AsFd;
    let stdout = child.stdout.as_mut().expect("stdout is piped");
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if let Some(sig) = crate::session::signals::wait_readable(stdout.as_fd()) {
            return Err(anyhow::anyhow!(Interrupted(sig)));
        }
        match stdout.read(&mut buf) {
            Ok(0) => return String::from_utf8(out).context("the child's result is not UTF-8"),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).context("reading the child's result"),
        }
    }
}
