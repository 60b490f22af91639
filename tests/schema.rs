//! The published JSON Schema (docs/schema/export.schema.json) is exactly
//! what the types generate, and real exports of every family validate
//! against it; a document missing its points does not.
//!
//! After changing an exported type: `CONTEND_UPDATE_SCHEMA=1 cargo test
//! --test schema` rewrites the published file.

use assert_cmd::Command;
use contend::exports::schema::{export_schema, PUBLISHED};
use serde_json::Value;
use std::path::Path;

fn published() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(PUBLISHED)
}

#[test]
fn the_published_schema_is_the_generated_one() {
    let generated = serde_json::to_string_pretty(&export_schema()).unwrap() + "\n";
    if std::env::var_os("CONTEND_UPDATE_SCHEMA").is_some() {
        std::fs::write(published(), &generated).unwrap();
    }
    let committed = std::fs::read_to_string(published()).unwrap_or_default();
    assert!(
        committed == generated,
        "{PUBLISHED} is stale: regenerate it with CONTEND_UPDATE_SCHEMA=1 cargo test --test schema"
    );
}

fn export(args: &[&str]) -> Value {
    // `contend run` takes its program last: a shell that runs a child, so
    // that the document has two processes.
    let program: &[&str] =
        if args[0] == "run" { &["--", "sh", "-c", "true; sysbench --version"] } else { &[] };
    // To a file: under `contend run`, stdout is the program's.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("export.json");
    Command::cargo_bin("contend")
        .unwrap()
        .args(args)
        .arg("--export-json")
        .arg(&json)
        .args(program)
        .assert()
        .success();
    serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap()
}

#[test]
fn every_family_exports_valid_documents() {
    let schema = export_schema();
    let validator = jsonschema::draft202012::new(&schema).expect("the schema is valid JSON Schema");
    let short = ["--runs", "2", "--no-progress", "--count-futex", "off"];
    // `contend attach` follows a running process (it needs root for the
    // tracepoints): a sleep of its own.
    let root = nix::unistd::geteuid().is_root();
    let mut sleeper = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    let mut docs = vec![
        export(
            &[
                &["lock", "--threads", "2", "--lock", "futex,pthread", "--duration", "50ms", "--warmup", "0"]
                    [..],
                &short,
            ]
            .concat(),
        ),
        export(
            &[&[
                "tune",
                "--threads",
                "2",
                "--duration",
                "50ms",
                "--warmup",
                "0",
                "--runs",
                "2",
                "--max-time",
                "2s",
            ][..]]
            .concat(),
        ),
        export(&[&["wakeup", "--primitive", "futex,pipe", "--iterations", "200"][..], &short].concat()),
        export(
            &[
                &[
                    "alloc",
                    "--allocator",
                    "glibc",
                    "--threads",
                    "2",
                    "--pairs",
                    "1",
                    "--iterations",
                    "20",
                    "--batch",
                    "8",
                ][..],
                &short,
            ]
            .concat(),
        ),
        // A run with a profile, two locks and a child process (the shell
        // runs `true`), so every part of the run document is there.
        export(
            &[
                &["run", "--profile", "--lock", "pthread,adaptive", "--top", "2", "--max-slowdown", "0"][..],
                &short,
            ]
            .concat(),
        ),
    ];
    if root {
        docs.push(export(&["attach", &sleeper.id().to_string(), "--duration", "100ms"]));
    }
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    for doc in &docs {
        let errors: Vec<String> =
            validator.iter_errors(doc).map(|e| format!("{} at {}", e, e.instance_path)).collect();
        assert!(errors.is_empty(), "{} export: {errors:#?}", doc["family"]);
        assert_eq!(doc["schema_version"], contend::output::json::SCHEMA_VERSION);
        assert!(doc["points"].as_array().is_some_and(|p| !p.is_empty()), "{}", doc["family"]);
    }
    // Every family, and every measuring command (the clap tree's: those
    // that take --export-json), made a document above: a new one fails
    // here until it is added.
    let families: std::collections::BTreeSet<&str> =
        docs.iter().filter_map(|d| d["family"].as_str()).collect();
    for f in contend::exports::families::FAMILIES {
        assert!(families.contains(f.name), "no {} export checked against the schema", f.name);
    }
    let commands: std::collections::BTreeSet<&str> =
        docs.iter().filter_map(|d| d["environment"]["command_line"][1].as_str()).collect();
    use clap::CommandFactory;
    for c in contend::cli::Cli::command().get_subcommands().filter(|c| contend::cli::measures(c)) {
        if c.get_name() == "attach" && !root {
            continue; // not without root (the tracepoints)
        }
        assert!(
            commands.contains(c.get_name()),
            "no `contend {}` export checked against the schema",
            c.get_name()
        );
    }
    let mut broken = docs[0].clone();
    broken.as_object_mut().unwrap().remove("points");
    assert!(!validator.is_valid(&broken), "a lock export without points validated");
}

/// NDJSON carries the same document: a header line without the points,
/// then one self-describing line per point.
#[test]
fn ndjson_is_a_header_then_a_line_per_point() {
    let out = Command::cargo_bin("contend")
        .unwrap()
        .args(["lock", "--threads", "2", "--lock", "futex,seed", "--duration", "50ms", "--warmup", "0"])
        .args(["--runs", "1", "--count-futex", "off", "--export-ndjson", "-"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let lines: Vec<Value> =
        text.lines().map(|l| serde_json::from_str(l).expect("one JSON object a line")).collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(lines[0]["record"], "header");
    assert!(lines[0].get("points").is_none() && lines[0]["spec"].is_object());
    for (line, lock) in lines[1..].iter().zip(["futex", "seed"]) {
        assert_eq!((&line["record"], &line["family"]), (&Value::from("point"), &Value::from("lock")));
        assert_eq!(line["point"]["lock"], lock);
        assert!(line["stats"]["mean"].as_f64().unwrap() > 0.0);
    }
}
