//! The command line, end to end, on short runs (100 ms windows): output
//! formats and exports. Bad input and limits: tests/refusals.rs.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn contend() -> Command {
    Command::cargo_bin("contend").expect("binary built")
}

/// `contend lock` with a short window and the given extra arguments.
fn lock(args: &[&str]) -> Command {
    let mut c = contend();
    c.args(["lock", "--duration", "100ms", "--warmup", "0"]).args(args);
    c
}

/// The stdout of a successful `contend lock` with these arguments.
fn stdout(args: &[&str]) -> String {
    let out = lock(args).assert().success().get_output().stdout.clone();
    String::from_utf8(out).expect("stdout is UTF-8")
}

fn json(args: &[&str]) -> Value {
    let out = lock(&[args, &["--export-json", "-"]].concat()).assert().success();
    serde_json::from_slice(&out.get_output().stdout).expect("stdout is JSON")
}

#[test]
fn table_has_one_row_per_point_and_a_legend() {
    let text = stdout(&["--lock", "seed", "--threads", "2", "--spin", "1,1000"]);
    let mut lines = text.lines();
    let heading = lines.next().unwrap();
    assert!(heading.starts_with("lock seed · threads 2 · hold 1µs"), "{heading}");
    // The column header follows the heading, which may wrap (a slow wake
    // cost on a busy machine lengthens it).
    let header = lines.find(|l| l.contains("cs/s")).unwrap();
    for col in ["spin", "cs/s", "Jain", "futex/cs", "ctxsw/cs"] {
        assert!(header.contains(col), "missing {col} in {header}");
    }
    assert!(!header.contains("%usr"), "the cpu group is not a default: {header}");
    let rows: Vec<&str> = lines.take_while(|l| !l.trim().is_empty()).collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(rows[0].trim_start().starts_with("1 "));
    assert!(rows[1].trim_start().starts_with("1000 "));
    assert!(text.contains("Jain: fairness index"));
}

/// The widest line of `text`, in characters (µ and × are one each).
fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

#[test]
fn the_default_table_of_eight_locks_by_two_thread_counts_fits_100_columns() {
    let locks = "futex,pthread,adaptive,tas,ttas,mcs,ticket,std";
    let text = stdout(&["--lock", locks, "--threads", "2,4", "--runs", "2"]);
    assert!(widest(&text) <= 100, "{} columns:\n{text}", widest(&text));
    assert_eq!(text.lines().filter(|l| l.trim_start().starts_with("ticket ")).count(), 2, "{text}");
    // The legend explains the columns shown, and names the hidden groups.
    assert!(text.contains("Jain: fairness index") && !text.contains("%usr %sys"), "{text}");
    assert!(
        text.contains("more columns: --columns shares,errors,cpu,hold,lock,latency (or --wide)"),
        "{text}"
    );
}

#[test]
fn columns_and_wide_choose_the_column_groups() {
    let header = |extra: &[&str]| {
        let text = stdout(&[&["--lock", "futex", "--threads", "2", "--spin", "1,10"], extra].concat());
        // The column header, wherever the heading above it wrapped.
        (text.lines().find(|l| l.contains("cs/s")).unwrap().to_string(), text)
    };
    let (cpu, text) = header(&["--columns", "cpu"]);
    assert!(cpu.contains("%usr") && !cpu.contains("Jain") && cpu.contains("cs/s"), "{cpu}");
    assert!(text.contains("%usr %sys %idle %steal: whole system"), "{text}");
    let (both, _) = header(&["--columns", "default,lock"]);
    assert!(both.contains("Jain") && both.contains("spins/cs"), "{both}");
    let (first, text) = header(&["--wide"]);
    // Wider than the terminal, the table goes in blocks, each with the
    // key column (the swept axis) first: their headers together.
    let key = first.split_whitespace().next().unwrap();
    let wide: String = text.lines().filter(|l| l.split_whitespace().next() == Some(key)).collect();
    for col in ["%usr", "min%", "Jain", "fail/cs", "hold µs", "waits/cs", "p50µs", "p99µs", "maxµs"] {
        assert!(wide.contains(col), "--wide lacks {col}: {wide}");
    }
    assert!(!text.contains("more columns"), "{text}");
    lock(&["--columns", "disk"]).assert().code(2).stderr(
        predicate::str::contains("--columns disk").and(predicate::str::contains("shares, kernel, errors")),
    );
}

#[test]
fn json_carries_schema_spec_environment_and_per_worker_counts() {
    let v = json(&["--lock", "futex,pthread", "--threads", "3", "--hold", "sleep:10us"]);
    assert_eq!(v["schema_version"], 5);
    assert_eq!(v["family"], "lock");
    assert_eq!(v["spec"]["locks"], serde_json::json!(["futex", "pthread"]));
    assert_eq!(v["spec"]["duration_ns"], 100_000_000);
    let env = &v["environment"];
    for key in [
        "kernel",
        "cpu_model",
        "cpus_online",
        "clocksource",
        "tool_version",
        "git_hash",
        "glibc",
        "wake_cost_ns",
    ] {
        assert!(!env[key].is_null(), "environment.{key} missing");
    }
    assert!(env["wake_cost_ns"].as_u64().unwrap() > 0);
    assert!(env["command_line"].as_array().unwrap().len() > 3);
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for p in points {
        assert_eq!(p["point"]["hold"]["mode"], "sleep");
        let s = &p["sample"];
        let workers = s["workers"].as_array().unwrap();
        assert_eq!(workers.len(), 3);
        let sum: u64 = workers.iter().map(|w| w["acquisitions"].as_u64().unwrap()).sum();
        assert_eq!(sum, s["acquisitions"].as_u64().unwrap());
        let rate = s["acquisitions"].as_f64().unwrap() / s["window_s"].as_f64().unwrap();
        assert!((rate - s["cs_per_s"].as_f64().unwrap()).abs() < 1e-6 * rate.max(1.0));
        for key in ["usr_pct", "sys_pct", "idle_pct", "steal_pct"] {
            assert!(s["cpu"][key].is_number(), "cpu.{key}");
        }
        assert!(s["process"]["voluntary_context_switches"].is_u64());
        assert!(s["fairness"]["jain"].is_number());
        // Three measured runs by default: their statistics, and the
        // sample is the median one of them. Every run says when it ran,
        // in which round and what for; a counting run (as root) and
        // rejected runs (steal) stay out of the statistics.
        let all = p["runs"].as_array().unwrap();
        for r in all {
            assert!(r["start_unix_ns"].as_u64().unwrap() > 0 && r["round"].is_u64());
            assert!(["measured", "rejected", "counting"].contains(&r["status"].as_str().unwrap()));
        }
        let runs: Vec<f64> = all
            .iter()
            .filter(|r| r["status"] == "measured")
            .map(|r| r["cs_per_s"].as_f64().unwrap())
            .collect();
        assert_eq!(runs.len(), 3);
        let st = &p["stats"];
        assert_eq!(st["n"], 3);
        let mean = runs.iter().sum::<f64>() / 3.0;
        assert!((st["mean"].as_f64().unwrap() - mean).abs() < 1e-6 * mean);
        // The interval is Student's t over the three runs: recompute it.
        let sd = (runs.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
        let ci95 = 4.302_652_729_911_275 * sd / 3f64.sqrt();
        assert!((st["ci95"].as_f64().unwrap() - ci95).abs() <= 1e-6 * mean, "{st}");
        let mut sorted = runs.clone();
        sorted.sort_by(f64::total_cmp);
        assert_eq!(s["cs_per_s"].as_f64().unwrap(), sorted[1]);
        assert_eq!(p["stopped"], "runs");
    }
    assert!(points[0]["sample"]["lock_counters"].is_object());
    assert!(points[1]["sample"]["lock_counters"].is_null(), "pthread is opaque");
}

#[test]
fn json_carries_adaptive_budgets_derived_from_the_wake_cost() {
    let v = json(&["--lock", "adaptive,ttas", "--threads", "2"]);
    let wake = v["environment"]["wake_cost_ns"].as_u64().expect("the wake cost is measured");
    let detail = &v["environment"]["wake_cost_detail"];
    assert!(detail["p25_ns"].as_u64().unwrap() <= wake && wake <= detail["p75_ns"].as_u64().unwrap());
    let b = &v["adaptive"];
    assert_eq!(b["wake_ns"], wake);
    assert_eq!(b["turn_ns"], 2 * wake);
    assert_eq!(b["patience_ns"], 2 * wake);
    assert_eq!(b["quantum_ns"], 50 * wake);
    // Without adaptive there is nothing to report.
    assert!(json(&["--lock", "ttas", "--threads", "1"])["adaptive"].is_null());
}

#[test]
fn json_export_to_a_file_keeps_the_table_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.json");
    lock(&["--threads", "1", "--export-json", path.to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains("cs/s"));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v["points"].as_array().unwrap().len(), 1);
}

#[test]
fn csv_and_markdown_exports_carry_every_point() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, md) = (dir.path().join("r.csv"), dir.path().join("r.md"));
    lock(&["--lock", "futex,pthread", "--threads", "2"])
        .args(["--export-csv", csv.to_str().unwrap(), "--export-markdown", md.to_str().unwrap()])
        .assert()
        .success();
    let csv = std::fs::read_to_string(csv).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    let width = lines[0].split(',').count();
    assert!(lines[0].starts_with("lock,mode,workers,"));
    for row in &lines[1..] {
        assert_eq!(row.split(',').count(), width, "{row}");
    }
    assert!(lines[1].starts_with("futex,threads,2,") && lines[2].starts_with("pthread,threads,2,"));
    // Lengths are numbers in ns with the mode apart, not `1µs`.
    let header: Vec<&str> = lines[0].split(',').collect();
    let cell = |name: &str| lines[1].split(',').nth(header.iter().position(|h| *h == name).unwrap()).unwrap();
    assert_eq!((cell("hold_ns"), cell("hold_mode"), cell("idle_ns")), ("1000", "busy", "0"), "{csv}");
    let md = std::fs::read_to_string(md).unwrap();
    // It says where it came from: the command, then the build and machine.
    assert!(md.starts_with("`contend lock --duration 100ms --warmup 0 --lock 'futex,pthread'"), "{md}");
    assert!(md.lines().nth(2).is_some_and(|l| l.starts_with("contend ") && l.contains(" CPUs (")), "{md}");
    assert!(md.contains("| lock ") && md.contains("|----"), "{md}");
    assert_eq!(md.lines().filter(|l| l.starts_with("| futex") || l.starts_with("| pthread")).count(), 2);
}

#[test]
fn seed_format_prints_the_original_summary_lines() {
    let text = stdout(&["--lock", "seed", "--threads", "3", "--spin", "10", "--format", "seed"]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    let total: u64 = {
        let rest = lines[0].strip_prefix("The number of entries in the critical section = ").expect(lines[0]);
        let (n, rate) = rest.split_once(" (").unwrap();
        let rate = rate.strip_suffix(" M entries/s)").expect(rate);
        assert_eq!(rate.split_once('.').unwrap().1.len(), 6, "six decimals like %6.6f");
        n.parse().unwrap()
    };
    let mut sum = 0;
    for (i, line) in lines[1..].iter().enumerate() {
        let n = line
            .strip_prefix(&format!("Thread {i} = "))
            .and_then(|r| r.strip_suffix(" entries"))
            .expect(line);
        sum += n.parse::<u64>().unwrap();
    }
    assert_eq!(sum, total);
}

#[test]
fn seed_format_labels_each_point_of_a_sweep() {
    lock(&["--lock", "seed", "--threads", "1", "--spin", "1,2", "--format", "seed"])
        .assert()
        .success()
        .stdout(predicate::str::contains("# lock=seed threads=1 spin=1 hold=1µs idle=0"))
        .stdout(predicate::str::contains("# lock=seed threads=1 spin=2 hold=1µs idle=0"));
}

#[test]
fn period_and_duty_sweep() {
    let v = json(&["--threads", "1", "--period", "1000ns", "--duty", "10%,50%"]);
    let holds: Vec<u64> =
        v["points"].as_array().unwrap().iter().map(|p| p["point"]["hold"]["ns"].as_u64().unwrap()).collect();
    assert_eq!(holds, [100, 500]);
}

#[test]
fn gnuplot_format_prints_lockscale_columns() {
    let dir = tempfile::tempdir().unwrap();
    let text = stdout(&[
        "--lock",
        "flock",
        "--procs",
        "2,3",
        "--hold",
        "sleep:20us",
        "--format",
        "gnuplot",
        "--lock-dir",
        dir.path().to_str().unwrap(),
    ]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "# flock sleep:20µs 0 100ms", "{text}");
    assert!(lines[1].starts_with("# procs\tseconds\tuser_s\tsys_s\ttotal\tmin\tmax\tmean\tstddev\tcpu_s"));
    for (row, workers) in lines[2..].iter().zip([2, 3]) {
        let f: Vec<f64> = row.split('\t').map(|v| v.parse().unwrap()).collect();
        assert_eq!(f.len(), 10, "{row}");
        assert_eq!(f[0], f64::from(workers));
        let (total, min, max, mean) = (f[4], f[5], f[6], f[7]);
        assert!(f[1] > 0.0 && min <= mean && mean <= max, "{row}");
        assert!((mean * f64::from(workers) - total).abs() < 1.0, "{row}");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "lock directory removed");
}

#[test]
fn procs_report_worker_memory_and_mode() {
    let v = json(&["--lock", "futex", "--procs", "2"]);
    let p = &v["points"][0];
    assert_eq!(p["point"]["mode"], "processes");
    assert_eq!(p["point"]["workers"], 2);
    let memory = &p["sample"]["memory"];
    assert!(memory["worker_rss_max_kib"].as_u64().unwrap() > 0);
    assert!(memory["coordinator_peak_kib"].as_u64().unwrap() > 0);
}

#[test]
fn list_locks_names_every_lock_with_capabilities_within_100_columns() {
    let out = contend().args(["list", "locks"]).assert().success().get_output().stdout.clone();
    let text = String::from_utf8(out).unwrap();
    assert!(widest(&text) <= 100, "{} columns:\n{text}", widest(&text));
    let header = text.lines().next().unwrap();
    assert!(header.contains("capabilities") && header.contains("description"), "{header}");
    // One row per lock offered (test-only ones are not), its capability
    // words agreeing with the registry (the first line of a wrapped cell
    // holds the first words: spin, when it has it, comes first).
    for entry in contend::family::lock::registry::LOCKS.iter() {
        let row = text.lines().find(|l| l.split_whitespace().next() == Some(entry.name));
        if entry.test_only {
            assert!(row.is_none(), "{} is test-only, yet listed:\n{text}", entry.name);
            continue;
        }
        let row = row.unwrap_or_else(|| panic!("{} is not listed:\n{text}", entry.name));
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells[2] == "spin", entry.caps.spin, "{row}");
    }
    // The run capability, read from the rows and their continuation lines.
    let fits = |name: &str| {
        let mut lines = text.lines().skip_while(|l| l.split_whitespace().next() != Some(name));
        let first = lines.next().unwrap();
        let rest = lines.take_while(|l| l.starts_with("   "));
        std::iter::once(first).chain(rest).any(|l| l.contains(" run "))
    };
    for swap in locks::in_mutex::Swap::all().filter(|s| s.name() != "noop") {
        assert!(fits(swap.name()), "{}: run capability missing:\n{text}", swap.name());
    }
    assert!(!fits("clh"), "clh cannot live in a pthread_mutex_t:\n{text}");
}

#[test]
fn quiet_leaves_only_the_result() {
    // Four threads on this 2-CPU machine (or any with fewer than four)
    // warn of oversubscription; the warning goes only to the export.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("q.json");
    let out = lock(&["--lock", "futex", "--threads", "64", "--runs", "1", "--quiet", "--export-json"])
        .arg(&json)
        .assert()
        .success()
        .get_output()
        .clone();
    assert!(out.stderr.is_empty(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("cs/s"), "the table is the result");
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let warnings = doc["warnings"].as_array().expect("warnings in the export");
    assert!(warnings.iter().any(|w| w.to_string().contains("oversubscribed")), "{warnings:?}");
}
