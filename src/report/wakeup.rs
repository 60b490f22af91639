//! `contend wakeup`'s table (terminal and Markdown) and CSV: one row per
//! pair, plus an "all" row per point when there are several pairs.
//! Latencies in µs with ns resolution kept to two decimals.

use super::number::ratio;
use crate::measure::clock::ClockCost;
use crate::measure::latency::LatencySummary;
use crate::measure::tracefs::TraceReport;
use crate::runner::wakeup_sweep::WakeupResult;
use crate::spec::wakeup::Length;
use crate::workloads::wakeup::Distribution;
use comfy_table::{presets, CellAlignment, Table};

fn us(ns: u64) -> String {
    format!("{:.2}", ns as f64 / 1e3)
}

/// A row's label, CPUs and distributions.
struct Row<'a> {
    pair: String,
    placement: String,
    same_cpu: String,
    round_trip: &'a Distribution,
    one_way: &'a Distribution,
}

fn rows(r: &WakeupResult) -> Vec<Row<'_>> {
    let mut out: Vec<Row> = r
        .sample
        .pairs
        .iter()
        .map(|p| Row {
            pair: p.pair.to_string(),
            placement: format!("{}→{}", p.cpus_a, p.cpus_b),
            same_cpu: format!("{:.0}", p.same_cpu_pct),
            round_trip: &p.round_trip,
            one_way: &p.one_way,
        })
        .collect();
    if out.len() > 1 {
        out.push(Row {
            pair: "all".into(),
            placement: String::new(),
            same_cpu: String::new(),
            round_trip: &r.sample.round_trip,
            one_way: &r.sample.one_way,
        });
    }
    out
}

const STATS: [&str; 9] = [
    "samples",
    "min",
    "p50",
    "p90",
    "p99",
    "p99.9",
    "max",
    "mean",
    "one-way p50",
];

fn stats(rt: Option<LatencySummary>, ow: Option<LatencySummary>) -> Vec<String> {
    match rt {
        None => vec!["0".into(); 1]
            .into_iter()
            .chain(vec!["-".into(); 8])
            .collect(),
        Some(s) => vec![
            s.samples.to_string(),
            us(s.min_ns),
            us(s.p50_ns),
            us(s.p90_ns),
            us(s.p99_ns),
            us(s.p999_ns),
            us(s.max_ns),
            format!("{:.2}", s.mean_ns / 1e3),
            ow.map_or("-".into(), |o| us(o.p50_ns)),
        ],
    }
}

/// The terminal table.
pub fn render(results: &[WakeupResult], clock: &ClockCost, trace: Option<&TraceReport>) -> String {
    render_with(results, clock, trace, presets::NOTHING)
}

/// The same as Markdown (`--export-markdown`).
pub fn markdown(results: &[WakeupResult], clock: &ClockCost, trace: Option<&TraceReport>) -> String {
    render_with(results, clock, trace, presets::ASCII_MARKDOWN)
}

fn render_with(
    results: &[WakeupResult],
    clock: &ClockCost,
    trace: Option<&TraceReport>,
    preset: &str,
) -> String {
    let Some(first) = results.first() else {
        return "no points were run\n".into();
    };
    let p = &first.point;
    let mut heading = vec![
        format!("{} pair(s) of {}", p.pairs(), p.mode.label()),
        format!("interval {}", crate::parse::format_nanos(p.interval_ns)),
        match p.length {
            Length::Iterations(n) => format!("{n} round trips per pair"),
            Length::Duration(ns) => format!("{} per point", crate::parse::format_nanos(ns)),
        },
        format!("policy {} {}", p.sched.policy, p.sched.priority),
    ];
    if p.mlock {
        heading.push("mlockall".into());
    }
    let mut t = Table::new();
    t.load_preset(preset);
    let mut header = vec!["primitive", "placement", "pair", "CPUs A→B", "same%"];
    header.extend(STATS);
    header.extend(["rt/s", "ctxsw/rt", "futex/rt"]);
    t.set_header(header.clone());
    for r in results {
        let s = &r.sample;
        let rounds = s.round_trip.summary.map_or(0, |x| x.samples);
        let per_rt = |n: u64| (rounds > 0).then(|| n as f64 / rounds as f64);
        let all = rows(r);
        let last = all.len() - 1;
        for (i, row) in all.into_iter().enumerate() {
            let mut cells = vec![
                r.point.primitive.to_string(),
                r.point.affinity.name().to_string(),
                row.pair,
                row.placement,
                row.same_cpu,
            ];
            cells.extend(stats(row.round_trip.summary, row.one_way.summary));
            // Rates and counts belong to the point, on its last row.
            if i == last {
                cells.extend([
                    format!("{:.0}", s.round_trips_per_s),
                    ratio(per_rt(s.process.context_switches())),
                    ratio(s.futex.and_then(|f| per_rt(f.calls))),
                ]);
            }
            t.add_row(cells);
        }
    }
    for i in 4..header.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut notes = format!(
        "clock: CLOCK_MONOTONIC, resolution {} ns, {} ns per read (median of back-to-back reads; \
         each round trip includes one)\n",
        clock.resolution_ns, clock.median_read_ns
    );
    if let Some(tr) = trace {
        notes += &format!(
            "trace: {} round trip(s) tagged in {}/trace{}\n",
            tr.tagged,
            tr.tracefs,
            if tr.stopped {
                format!(
                    "; tracing was stopped at the first one, so the buffer ends with what led up to \
                     it (read it, then: echo 1 > {}/tracing_on)",
                    tr.tracefs
                )
            } else {
                " (grep contend-wakeup)".into()
            }
        );
    }
    format!("{}\n{t}\n\n{LEGEND}\n{notes}", heading.join(" · "))
}

const LEGEND: &str = "\
Round trip (A posts B, B posts A, A wakes) in µs: min, percentiles, max, mean. one-way p50: post to
wake-up measured across the two threads' clock stamps, both directions pooled. same%: rounds with A and B
on one CPU. rt/s: round trips per second of window; ctxsw/rt, futex/rt: the workers' context switches
and all futex syscalls per round trip.";

/// One CSV row per pair (and per point's "all" row), every statistic in ns.
pub fn csv(results: &[WakeupResult]) -> String {
    let header = [
        "primitive",
        "mode",
        "affinity",
        "pairs",
        "pair",
        "cpus_a",
        "cpus_b",
        "same_cpu_pct",
        "samples",
        "min_ns",
        "p50_ns",
        "p90_ns",
        "p99_ns",
        "p999_ns",
        "max_ns",
        "mean_ns",
        "stdev_ns",
        "one_way_p50_ns",
        "one_way_p99_ns",
        "round_trips_per_s",
        "interrupted",
    ];
    let mut out = Vec::new();
    for r in results {
        let s = &r.sample;
        let summary_cells = |rt: Option<LatencySummary>, ow: Option<LatencySummary>| -> Vec<String> {
            let f = |v: Option<u64>| v.map_or(String::new(), |x| x.to_string());
            vec![
                rt.map_or("0".into(), |x| x.samples.to_string()),
                f(rt.map(|x| x.min_ns)),
                f(rt.map(|x| x.p50_ns)),
                f(rt.map(|x| x.p90_ns)),
                f(rt.map(|x| x.p99_ns)),
                f(rt.map(|x| x.p999_ns)),
                f(rt.map(|x| x.max_ns)),
                rt.map_or(String::new(), |x| format!("{:.1}", x.mean_ns)),
                rt.map_or(String::new(), |x| format!("{:.1}", x.stdev_ns)),
                f(ow.map(|x| x.p50_ns)),
                f(ow.map(|x| x.p99_ns)),
            ]
        };
        let lead = |pair: String, a: &str, b: &str, same: String| {
            vec![
                r.point.primitive.to_string(),
                r.point.mode.label().to_string(),
                r.point.affinity.name().to_string(),
                r.point.pairs().to_string(),
                pair,
                a.to_string(),
                b.to_string(),
                same,
            ]
        };
        let tail = vec![
            format!("{:.1}", s.round_trips_per_s),
            s.interrupted.clone().unwrap_or_default(),
        ];
        for p in &s.pairs {
            let mut row = lead(
                p.pair.to_string(),
                &p.cpus_a,
                &p.cpus_b,
                format!("{:.1}", p.same_cpu_pct),
            );
            row.extend(summary_cells(p.round_trip.summary, p.one_way.summary));
            row.extend(tail.clone());
            out.push(row);
        }
        let mut row = lead("all".into(), "", "", String::new());
        row.extend(summary_cells(s.round_trip.summary, s.one_way.summary));
        row.extend(tail);
        out.push(row);
    }
    super::csv::render(&header, out)
}
