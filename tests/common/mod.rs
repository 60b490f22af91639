//! Helpers shared by the integration tests: running contend as an
//! unprivileged user, and finding programs on PATH.

#![allow(dead_code)] // each test crate uses its own subset

/// A command that runs `program` as `nobody` (setpriv), where the suite
/// runs as root; `None` (the test is skipped) elsewhere.
pub fn as_nobody_cmd(program: &std::path::Path) -> Option<std::process::Command> {
    if !nix::unistd::geteuid().is_root() || which("setpriv").is_none() {
        eprintln!("skipped: needs root and setpriv to drop privileges");
        return None;
    }
    let mut cmd = std::process::Command::new("setpriv");
    cmd.args([
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "--inh-caps=-all",
        "--",
    ])
    .arg(program)
    .env_remove("XDG_RUNTIME_DIR");
    Some(cmd)
}

/// Runs contend as `nobody` with `args`.
pub fn as_nobody(args: &[&str]) -> Option<std::process::Output> {
    let bin = assert_cmd::cargo::cargo_bin("contend");
    let out = as_nobody_cmd(&bin)?.args(args).output().expect("setpriv runs");
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("Permission denied") && err.contains("setpriv") {
        eprintln!("skipped: nobody cannot execute {}", bin.display());
        return None;
    }
    Some(out)
}

/// The path of `program` on PATH, if installed.
pub fn which(program: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|dir| std::path::Path::new(dir).join(program))
        .find(|p| p.is_file())
}
