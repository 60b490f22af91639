//! Every family through every reader of exports: a real export of each
//! family (`exports::families::FAMILIES`, so a new family fails here until
//! it has one) goes through `compare` (against itself, and paired against
//! a baseline point), `report` (its table has the family's columns) and
//! `plot` (a figure, or for a family without one a clear refusal). The
//! schema is checked for every family in tests/schema.rs.

mod common;

use assert_cmd::Command;
use contend::exports::families::FAMILIES;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn contend() -> Command {
    Command::cargo_bin("contend").expect("binary built")
}

/// A short real export of `family` in `dir`, and a baseline point of it.
fn export(family: &str, dir: &Path) -> (PathBuf, &'static str) {
    let json = dir.join(format!("{family}.json"));
    let short = ["--runs", "2", "--no-progress", "--count-futex", "off", "--export-json"];
    let (args, baseline): (Vec<&str>, &str) = match family {
        "lock" => (
            // adaptive for a value in every column (its --spinners).
            "lock --threads 2 --lock futex,adaptive,pthread --spinners one --duration 50ms --warmup 0"
                .split(' ')
                .collect(),
            "pthread",
        ),
        "wakeup" => (vec!["wakeup", "--primitive", "futex,pipe", "--iterations", "200"], "pipe"),
        "alloc" => (
            "alloc --allocator glibc --threads 2 --pairs 1 --iterations 20 --batch 8".split(' ').collect(),
            "pattern=local",
        ),
        "run" => (vec!["run", "--lock", "pthread,tas", "--max-slowdown", "0"], "pthread"),
        other => panic!("no export for the family `{other}`: add one to tests/exports.rs"),
    };
    let mut cmd = contend();
    cmd.args(&args).args(short).arg(&json);
    if family == "run" {
        cmd.args(["--", "sh", "-c", "true"]);
    }
    cmd.assert().success();
    (json, baseline)
}

/// The value at `path` under `entry`, if every key on the way is there.
fn at<'v>(entry: &'v Value, path: &[&str]) -> Option<&'v Value> {
    path.iter().try_fold(entry, |v, key| v.get(*key))
}

#[test]
fn every_family_goes_through_every_reader() {
    let dir = tempfile::tempdir().unwrap();
    for family in FAMILIES {
        let (json, baseline) = export(family.name, dir.path());
        let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert_eq!(doc["family"], family.name);

        // compare: the export against itself pairs every point.
        let out = contend().arg("compare").arg(&json).arg(&json).arg("--json").assert().success();
        let report: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        assert_eq!(report["family"], family.name);
        assert_eq!(report["unmatched"].as_array().unwrap().len(), 0, "{}: {report}", family.name);
        assert_eq!(report["points"].as_array().unwrap().len(), doc["points"].as_array().unwrap().len());
        // ... and its points against a baseline point, paired by round.
        let out =
            contend().arg("compare").arg(&json).args(["--baseline", baseline, "--json"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}: {}", family.name, String::from_utf8_lossy(&out.stderr));

        // report: a page whose table has the family's columns.
        let html = dir.path().join(format!("{}.html", family.name));
        contend().arg("report").arg(&json).arg("-o").arg(&html).assert().success();
        let page = std::fs::read_to_string(&html).unwrap();
        for c in family.columns {
            // Its path names a field every point has, and some point a
            // value there: a wrong path would render an empty cell, which
            // the header check below cannot see.
            let points = doc["points"].as_array().unwrap();
            assert!(
                points.iter().all(|p| at(p, c.path).is_some()),
                "{}: {:?} is not in every point",
                family.name,
                c.path
            );
            assert!(
                points.iter().any(|p| at(p, c.path).is_some_and(|v| !v.is_null())),
                "{}: {:?} is null in every point",
                family.name,
                c.path
            );
            assert!(
                page.contains(&format!("<th>{}</th>", c.header)),
                "{}: no column {}",
                family.name,
                c.header
            );
        }

        // plot: a figure, or a refusal that says there is none.
        let svg = dir.path().join(format!("{}.svg", family.name));
        let out = contend().arg("plot").arg(&json).arg("-o").arg(&svg).output().unwrap();
        if family.figure.is_some() {
            assert!(out.status.success(), "{}: {}", family.name, String::from_utf8_lossy(&out.stderr));
            assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
        } else {
            assert_eq!(out.status.code(), Some(2), "{}", family.name);
            assert!(String::from_utf8_lossy(&out.stderr).contains("has no figure"), "{}", family.name);
        }
    }
}

#[test]
fn points_that_differ_in_an_identity_field_are_not_paired() {
    // Two lock points that differ only in their hold must not match.
    let doc = |hold: u64| {
        serde_json::json!({
            "schema_version": 3, "family": "lock",
            "points": [{"point": {"lock": "futex", "mode": "threads", "workers": 2, "spin": 100,
                                  "spinners": null, "hold": {"mode": "busy", "ns": hold},
                                  "idle": {"mode": "busy", "ns": 0}, "duration_ns": 1, "warmup_ns": 0,
                                  "stall_timeout_ns": 0, "kill_holder_after_ns": 0},
                        "runs": [{"cs_per_s": 1.0}, {"cs_per_s": 1.1}]}],
        })
    };
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(&a, doc(1000).to_string()).unwrap();
    std::fs::write(&b, doc(2000).to_string()).unwrap();
    let out = contend().arg("compare").arg(&a).arg(&b).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "nothing comparable: {}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing was compared"));
}

/// Every family defined in the source (a `FAMILY: Family` constant) is in
/// `FAMILIES`: the walk above iterates that list, so it cannot notice a
/// family left out of it; this reads the source instead.
#[test]
fn every_family_defined_is_listed() {
    let mut found = Vec::new();
    for p in common::files_under(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), "rs") {
        let text = std::fs::read_to_string(&p).unwrap();
        for line in text.lines().filter(|l| l.contains("FAMILY: Family = Family {")) {
            found.push(format!("{}: {}", p.display(), line.trim()));
        }
    }
    assert!(!found.is_empty(), "no family found in src/: has the definition's form changed?");
    assert_eq!(
        found.len(),
        FAMILIES.len(),
        "families defined:\n{}\nbut FAMILIES lists {}",
        found.join("\n"),
        FAMILIES.len()
    );
}
