//! The profile as `contend report` shows it from an export: the top
//! mutexes by wait, the holders that caused the waits, and the rwlocks,
//! read from a point entry's JSON (the terminal's tables, table.rs and
//! rwlocks.rs, read the results themselves).

use crate::model::family::Detail;

/// The columns every table of rwlocks and spinlocks starts with (the
/// terminal's and `contend report`'s).
pub const RW_HEADER: [&str; 9] = [
    "lock",
    "kind",
    "first locked at",
    "read acq",
    "read contended",
    "read wait ms",
    "write acq",
    "write contended",
    "write wait ms",
];

/// Mutexes a detail table shows per point.
const DETAIL_TOP: usize = 10;

/// The run of a point entry whose profile the tables show: its
/// futex-counting run, which has the kernel waits, if it was profiled;
/// else its median run (`sample`).
pub fn profile_run(entry: &serde_json::Value) -> &serde_json::Value {
    let runs = entry["runs"].as_array().map_or(&[][..], Vec::as_slice);
    runs.iter()
        .find(|r| r["status"] == "counting" && r["mutexes"].as_array().is_some_and(|m| !m.is_empty()))
        .unwrap_or(&entry["sample"])
}

/// The profile of a point (its futex-counting run, else its median run), as `contend report` shows it:
/// the top mutexes by wait, and the holders that caused the waits (none
/// without `--profile`).
pub(crate) fn profile_details(entry: &serde_json::Value) -> Vec<Detail> {
    use serde_json::Value;
    let run = profile_run(entry);
    let mutexes = run["mutexes"].as_array().map_or(&[][..], Vec::as_slice);
    let rwlocks = run["rwlocks"].as_array().map_or(&[][..], Vec::as_slice);
    let which = if std::ptr::eq(run, &entry["sample"]) { "median run" } else { "futex-counting run" };
    let lock = entry["point"]["lock"].as_str().unwrap_or("?");
    let text = |v: &Value| v.as_str().unwrap_or("?").to_string();
    let n = |m: &Value, f: &str| m[f].as_f64().unwrap_or(0.0);
    let ms = |ns: f64| format!("{:.3}", ns / 1e6);
    let us = |ns: f64| format!("{:.1}", ns / 1e3);
    let name = |m: &Value| format!("{}:{:#x}", n(m, "pid"), m["address"].as_u64().unwrap_or(0));
    let top: Vec<&Value> = mutexes.iter().take(DETAIL_TOP).collect();
    let waits = top
        .iter()
        .map(|m| {
            vec![
                name(m),
                m["waits_at"].as_str().unwrap_or("?").to_string(),
                format!("{}", n(m, "acquisitions")),
                format!("{}", n(m, "contended")),
                m["kernel_waits"].as_u64().map_or("-".into(), |k| k.to_string()),
                format!("{}", n(m, "cond_waits")),
                // Absent from exports written before parking was counted.
                m["parked_waits"].as_u64().map_or("-".into(), |k| k.to_string()),
                ms(n(m, "wait_ns")),
                us(n(m, "p99_wait_ns")),
                us(n(m, "max_wait_ns")),
                us(n(m, "mean_hold_ns")),
            ]
        })
        .collect();
    let mut holders: Vec<(f64, Vec<String>)> = Vec::new();
    for m in &top {
        for h in m["holders"].as_array().into_iter().flatten() {
            let frames = h["frames"].as_array().map_or(&[][..], Vec::as_slice);
            let wrappers = h["wrappers"].as_u64().unwrap_or(0) as usize;
            let at =
                frames.get(wrappers).or(frames.last()).and_then(Value::as_str).unwrap_or("(other sites)");
            let caused = n(h, "caused_wait_ns");
            holders.push((
                caused,
                vec![
                    name(m),
                    at.to_string(),
                    format!("{}", n(h, "releases")),
                    ms(n(h, "held_ns")),
                    ms(caused),
                ],
            ));
        }
    }
    holders.sort_by(|a, b| b.0.total_cmp(&a.0));
    let side = |l: &Value, s: &str| {
        let acq = n(&l[s], "acquisitions");
        if acq == 0.0 {
            return ["-".to_string(), "-".to_string(), "-".to_string()];
        }
        [format!("{acq}"), format!("{}", n(&l[s], "contended")), ms(n(&l[s], "wait_ns"))]
    };
    let rw_rows: Vec<Vec<String>> = rwlocks
        .iter()
        .take(DETAIL_TOP)
        .map(|l| {
            let mut row = vec![name(l), text(&l["kind"]), text(&l["site"])];
            row.extend(side(l, "read"));
            row.extend(side(l, "write"));
            row
        })
        .collect();
    let mut details = vec![
        Detail {
            title: format!("{lock}: the top mutexes by wait ({which})"),
            header: &[
                "mutex (pid:address)",
                "waits at",
                "acquired",
                "had to wait",
                "kernel waits",
                "cond waits",
                "parked",
                "wait ms",
                "p99 wait µs",
                "max wait µs",
                "mean hold µs",
            ],
            rows: waits,
        },
        Detail {
            title: format!("{lock}: the holders that caused the waits"),
            header: &["mutex (pid:address)", "held at", "releases to waiters", "held ms", "wait caused ms"],
            rows: holders.into_iter().take(DETAIL_TOP).map(|(_, row)| row).collect(),
        },
        Detail {
            title: format!("{lock}: rwlocks and spinlocks (glibc's), readers and writers apart"),
            header: &RW_HEADER,
            rows: rw_rows,
        },
    ];
    details.retain(|d| !d.rows.is_empty());
    details
}
