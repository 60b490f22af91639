//! Records the git commit contend is built from, for the environment block
//! of every export; and builds the interposer (crates/interpose) that
//! contend carries inside its own binary, so that an installed contend
//! (`cargo install --path .`) runs `contend run` with nothing beside it.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    git_hash();
    embed_interposer();
}

fn git_hash() {
    let hash = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".into());
    // --no-optional-locks: a plain `git status` refreshes and rewrites
    // .git/index, which this script watches below; every later cargo
    // command then saw the index changed and rebuilt contend's library
    // (clippy, build, test and install each did, in CI).
    let dirty = Command::new("git")
        .args(["--no-optional-locks", "status", "--porcelain", "--untracked-files=no"])
        .output()
        .ok()
        .is_some_and(|o| o.status.success() && !o.stdout.is_empty());
    let suffix = if dirty && hash != "unknown" { "-dirty" } else { "" };
    println!("cargo:rustc-env=CONTEND_GIT_HASH={hash}{suffix}");
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/index");
}

/// Builds the interposer with a nested cargo in a target directory of its
/// own (the outer build holds a lock on the usual one), in the outer
/// build's profile, without debug information (the profile names the
/// program's frames, never the interposer's, and the copy is written out
/// on every new version: 0.6 MB, not 5). Hands contend its path and a
/// hash of its bytes, which names the copy written at run time
/// (src/family/program/embedded.rs).
fn embed_interposer() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    for input in ["crates/interpose", "crates/locks", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={}", root.join(input).display());
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let target = out.join("interpose-target");
    let release = std::env::var("PROFILE").as_deref() == Ok("release");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .arg("build")
        .arg("--manifest-path")
        .arg(root.join("Cargo.toml"))
        .args(["-p", "contend-interpose", "--target-dir"])
        .arg(&target)
        .args(["--profile", if release { "release" } else { "dev" }])
        .args(["--config", "profile.release.debug=false", "--config", "profile.dev.debug=false"])
        // Under `cargo clippy` the outer build's workspace wrapper is
        // clippy-driver: the interposer is linted by the outer run, and
        // here only built.
        .env_remove("RUSTC_WORKSPACE_WRAPPER");
    let status = build.status().expect("running cargo to build the interposer");
    assert!(status.success(), "building the interposer (crates/interpose) failed: {status}");
    let so = target.join(if release { "release" } else { "debug" }).join("libcontend_interpose.so");
    println!("cargo:rustc-env=CONTEND_INTERPOSER_SO={}", so.display());
    println!("cargo:rustc-env=CONTEND_INTERPOSER_HASH={:016x}", fnv1a(&so));
}

/// FNV-1a over a file's bytes: a name for its contents, not a defence
/// (the copy is checked byte for byte before use).
fn fnv1a(path: &Path) -> u64 {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}
