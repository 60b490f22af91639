//! The ledger cannot be hijacked: another user who creates contend's
//! fallback ledger directory first (`${TMPDIR:-/tmp}/contend-UID`), plants
//! symlinks where records are written and a forged record naming the
//! victim's directory, gets neither the victim's file overwritten nor the
//! directory deleted by the victim's `contend cleanup`; and the victim's
//! runs still work (no denial of service).

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

const NOBODY: u32 = 65534;

fn contend(tmpdir: &Path) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("contend"));
    cmd.env_remove("XDG_RUNTIME_DIR").env("TMPDIR", tmpdir);
    cmd
}

/// Plants, as user nobody would, the attack of the issue in `base`.
fn plant(base: &Path, mode: u32, data: &Path, victim: &Path) -> std::path::PathBuf {
    let uid = nix::unistd::geteuid().as_raw();
    let planted = base.join(format!("contend-{uid}"));
    std::fs::create_dir(&planted).unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(mode)).unwrap();
    // Every pid the victim's coordinator could have, first ledger.
    let pid_max: u32 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(32768)
        .min(1 << 16);
    for pid in 2..=pid_max {
        std::os::unix::fs::symlink(victim, planted.join(format!("{pid}-0.tmp"))).unwrap();
    }
    // A forged record, in the current format (with the real inode, as an
    // attacker could stat it) and in the old one.
    let meta = std::fs::metadata(data).unwrap();
    let forged = serde_json::json!({
        "pid": 1, "start_ticks": 7, "sem_sets": [],
        "dirs": [{"path": data, "dev": meta.dev(), "ino": meta.ino()}],
    });
    std::fs::write(planted.join("1-7.json"), forged.to_string()).unwrap();
    let old = serde_json::json!({"pid": 1, "start_ticks": 7, "sem_sets": [], "dirs": [data]});
    std::fs::write(planted.join("1-8.json"), old.to_string()).unwrap();
    nix::unistd::chown(&planted, Some(NOBODY.into()), Some(NOBODY.into())).unwrap();
    planted
}

#[test]
fn a_planted_ledger_directory_is_neither_followed_nor_obeyed() {
    if !common::root_or_skip("planting a directory owned by another user") {
        return;
    }
    let uid = nix::unistd::geteuid().as_raw();
    if Path::new(&format!("/run/user/{uid}")).is_dir() {
        common::skip("the ledger lives in /run/user/UID here: the /tmp fallback is not used");
        return;
    }
    for mode in [0o777, 0o755] {
        let base = tempfile::tempdir().unwrap();
        std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
        let victim = base.path().join("victim.txt");
        std::fs::write(&victim, "precious").unwrap();
        let data = base.path().join("contend-data");
        std::fs::create_dir(&data).unwrap();
        std::fs::write(data.join("results.csv"), "1,2,3").unwrap();
        let planted = plant(base.path(), mode, &data, &victim);
        let lock_dir = tempfile::tempdir().unwrap();

        let run = contend(base.path())
            .args(["lock", "--lock", "sysv", "--threads", "2", "--duration", "100ms"])
            .args(["--warmup", "0", "--runs", "1", "--no-progress", "--lock-dir"])
            .arg(lock_dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "mode {mode:o}: the victim's run failed: {stderr}");
        assert!(stderr.contains("not trusting the ledger directory"), "{stderr}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");

        // The run's record went to a fresh private directory beside it.
        let fresh: Vec<_> = std::fs::read_dir(base.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(&format!("contend-{uid}.")))
            .collect();
        assert_eq!(fresh.len(), 1, "one fresh ledger directory");
        let meta = fresh[0].metadata().unwrap();
        assert_eq!((meta.uid(), meta.mode() & 0o777), (uid, 0o700));

        let cleanup = contend(base.path()).arg("cleanup").output().unwrap();
        let report = String::from_utf8_lossy(&cleanup.stdout);
        assert!(cleanup.status.success(), "{report}");
        assert!(report.contains("not reading") && report.contains("owned by uid 65534"), "{report}");
        assert!(data.join("results.csv").exists(), "cleanup obeyed a forged record: {report}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(planted.join("1-7.json").exists(), "cleanup touched the planted directory");
    }
}

#[test]
fn cleanup_refuses_a_directory_that_is_not_the_one_recorded() {
    if !common::root_or_skip("writing a record the way a killed run leaves it") {
        return;
    }
    let uid = nix::unistd::geteuid().as_raw();
    if Path::new(&format!("/run/user/{uid}")).is_dir() {
        common::skip("the ledger lives in /run/user/UID here: the /tmp fallback is not used");
        return;
    }
    let base = tempfile::tempdir().unwrap();
    let ledger = base.path().join(format!("contend-{uid}"));
    std::fs::create_dir(&ledger).unwrap();
    std::fs::set_permissions(&ledger, std::fs::Permissions::from_mode(0o700)).unwrap();
    // A record of a dead run whose directory was since replaced by another
    // (same name, other inode) and one whose path is now a symlink.
    let replaced = base.path().join("contend-replaced");
    std::fs::create_dir(&replaced).unwrap();
    let target = base.path().join("contend-target");
    std::fs::create_dir(&target).unwrap();
    let link = base.path().join("contend-link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let meta = std::fs::metadata(&target).unwrap();
    let record = serde_json::json!({
        "pid": 1, "start_ticks": 7, "sem_sets": [],
        "dirs": [
            {"path": replaced, "dev": meta.dev(), "ino": meta.ino() + 1_000_000},
            {"path": link, "dev": meta.dev(), "ino": meta.ino()},
        ],
    });
    std::fs::write(ledger.join("1-7.json"), record.to_string()).unwrap();
    let cleanup = contend(base.path()).arg("cleanup").output().unwrap();
    let report = String::from_utf8_lossy(&cleanup.stdout);
    assert!(cleanup.status.success(), "{report}");
    assert_eq!(report.matches("refused to remove").count(), 2, "{report}");
    assert!(replaced.is_dir() && target.is_dir() && link.exists(), "{report}");
}

#[test]
fn a_planted_ledger_directory_costs_one_fallback_which_cleanup_removes_when_spare() {
    if !common::root_or_skip("planting a directory owned by another user") {
        return;
    }
    let uid = nix::unistd::geteuid().as_raw();
    if Path::new(&format!("/run/user/{uid}")).is_dir() {
        common::skip("the ledger lives in /run/user/UID here: the /tmp fallback is not used");
        return;
    }
    let base = tempfile::tempdir().unwrap();
    std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    let planted = base.path().join(format!("contend-{uid}"));
    std::fs::create_dir(&planted).unwrap();
    nix::unistd::chown(&planted, Some(NOBODY.into()), Some(NOBODY.into())).unwrap();
    let fallbacks = || -> Vec<std::path::PathBuf> {
        let prefix = format!("contend-{uid}.");
        let mut v: Vec<_> = std::fs::read_dir(base.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
            .map(|e| e.path())
            .collect();
        v.sort();
        v
    };
    // Every `contend run` writes the interposer copy into the ledger
    // directory: three runs, one fallback, one copy.
    for _ in 0..3 {
        let out = contend(base.path())
            .env_remove("CONTEND_INTERPOSER")
            .args(["run", "--runs", "1", "--count-futex", "off", "--no-progress", "--", "true"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        assert!(err.contains(&format!("To repair it: rm -r -- {}", planted.display())), "{err}");
    }
    let made = fallbacks();
    assert_eq!(made.len(), 1, "one fallback, reused: {made:?}");
    let copies = std::fs::read_dir(&made[0]).unwrap().count();
    assert_eq!(copies, 1, "one interposer copy in it");
    // Left alone while it may be in use; removed when spare.
    let cleanup = || {
        String::from_utf8_lossy(&contend(base.path()).arg("cleanup").output().unwrap().stdout).into_owned()
    };
    assert!(!cleanup().contains("spare"), "written just now: kept");
    let old = Command::new("touch").args(["-d", "2 hours ago"]).arg(&made[0]).status().unwrap();
    assert!(old.success());
    let said = cleanup();
    assert!(said.contains("removed the spare ledger directory"), "{said}");
    assert!(fallbacks().is_empty() && planted.is_dir(), "the planted directory is not ours to touch");
}
