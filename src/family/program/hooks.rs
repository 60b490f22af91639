//! hyperfine's habits around the program's executions: `--prepare` runs
//! before every execution and `--conclude` after it, `--cleanup` once
//! after the last, and `--warmup N` executions go before the first that
//! counts (`sweep.rs` runs them). The commands are shell commands (`sh
//! -c`), started through the keeper as the program is: untimed, their
//! output where the program's goes, an interrupt passed on to them, and
//! what they leave running ended when they exit (contend leaves nothing
//! behind; a server the program needs is started by the program, a
//! script, not by a hook). This module needs only the run's directory and
//! streams, so that the execution can call it without a circle.

use crate::family::program::launch::{self, Launch};
use crate::family::program::scratch::RunDir;
use crate::family::program::streams::Streams;
use anyhow::{bail, Context, Result};
use serde::Serialize;

/// The commands and the warm-up, as given.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Hooks {
    /// Executions under glibc's mutex before the first measured one,
    /// kept out of every result.
    pub warmup: u32,
    /// Run before every execution.
    pub prepare: Option<String>,
    /// Run after every execution.
    pub conclude: Option<String>,
    /// Run once after the last execution.
    pub cleanup: Option<String>,
}

/// The variable a hook finds the execution's lock in.
pub const LOCK_VARIABLE: &str = "CONTEND_LOCK";

/// Where a hook runs: the run's directory (its ledger), the streams its
/// output goes to, and the grace between SIGTERM and SIGKILL.
pub(crate) struct Place<'a> {
    pub(crate) dir: &'a mut RunDir,
    pub(crate) streams: &'a Streams,
    pub(crate) grace: std::time::Duration,
}

/// Runs `cmd` (the value of `flag`) with `sh -c`, `lock` in
/// [`LOCK_VARIABLE`]; an exit status other than 0, or a signal, is an
/// error naming the flag and the command. An interrupt ends it and is
/// returned as [`crate::engine::Interrupted`].
pub(crate) fn shell(at: Place<'_>, flag: &str, cmd: &str, lock: &str) -> Result<()> {
    let program = ["/bin/sh".into(), "-c".into(), cmd.into()];
    let launch = Launch {
        program: &program,
        env: vec![(LOCK_VARIABLE.into(), lock.into())],
        capture: at.streams.for_child()?,
        grace: at.grace,
        fixed_addresses: false,
        limit: None,
    };
    let done = launch::execute_recorded(at.dir, launch, || {}).with_context(|| format!("{flag} `{cmd}`"))?;
    match (done.usage.exit_code(), done.usage.signal()) {
        (Some(0), _) => Ok(()),
        (Some(code), _) => bail!("{flag} `{cmd}` exited {code}"),
        (_, Some(sig)) => bail!("{flag} `{cmd}` was killed by signal {sig}"),
        _ => bail!("{flag} `{cmd}` ended with wait status {:#x}", done.usage.status),
    }
}
