//! `contend wakeup`'s table: one row per pair, plus an "all" row per point
//! when there are several pairs. Latencies in µs with ns resolution kept
//! to two decimals.

use crate::family::wakeup::spec::Length;
use crate::family::wakeup::sweep::WakeupResult;
use crate::family::wakeup::workload::Distribution;
use crate::measure::clock::ClockCost;
use crate::measure::latency::LatencySummary;
use crate::measure::tracefs::TraceReport;
use crate::output::columns::{Group, Shown, CORE};
use crate::output::number::ratio;
use comfy_table::{presets, Table};

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

/// Futex calls per round trip, from the counting run when there is one.
fn futex_per_rt(r: &WakeupResult) -> Option<f64> {
    let k = r.kernel_run();
    let rounds = k.round_trip.summary.map_or(0, |x| x.samples);
    k.futex.filter(|_| rounds > 0).map(|f| f.calls as f64 / rounds as f64)
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

/// The wakeup table's optional column groups.
pub const GROUPS: &[Group] = &[
    Group {
        name: "kernel",
        default: true,
        legend: "ctxsw/rt, futex/rt: the workers' context switches and all futex syscalls per round trip \
                 (futex: from a separate counting run, see --count-futex).\n",
    },
    Group {
        name: "percentiles",
        default: false,
        legend: "samples: round trips recorded; min, p90, mean: more of the round-trip distribution.\n",
    },
    Group {
        name: "one-way",
        default: false,
        legend:
            "one-way p50: post to wake-up measured across the two threads' clock stamps, both directions \
                 pooled.\n",
    },
    Group {
        name: "cpus",
        default: false,
        legend: "CPUs A→B: where the two sides ran; same%: rounds with A and B on one CPU.\n",
    },
    Group { name: "rate", default: false, legend: "rt/s: round trips per second of window.\n" },
];

const CORE_LEGEND: &str = "Round trip (A posts B, B posts A, A wakes) in µs, every run's rounds together: \
     percentiles and max. p50 ±%: 95% confidence interval of the median round trip across the runs (Student's t).\n";

/// The distribution cells of a row: samples, min, p50, p90, p99, p99.9,
/// max, mean, one-way p50.
fn stats(rt: Option<LatencySummary>, ow: Option<LatencySummary>) -> Vec<String> {
    match rt {
        None => vec!["0".into(); 1].into_iter().chain(vec!["-".into(); 8]).collect(),
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
pub fn render(
    results: &[WakeupResult],
    clock: &ClockCost,
    trace: Option<&TraceReport>,
    shown: &Shown,
) -> String {
    render_with(results, clock, trace, shown, presets::NOTHING)
}

pub(crate) fn render_with(
    results: &[WakeupResult],
    clock: &ClockCost,
    trace: Option<&TraceReport>,
    shown: &Shown,
    preset: &str,
) -> String {
    let Some(first) = results.first() else {
        return "no points were run\n".into();
    };
    let p = &first.point;
    let mut heading = vec![
        format!("{} pair(s) of {}", p.pairs(), p.mode.label()),
        format!("interval {}", crate::model::value::format_nanos(p.interval_ns)),
        match p.length {
            Length::Iterations(n) => format!("{n} round trips per pair"),
            Length::Duration(ns) => format!("{} per point", crate::model::value::format_nanos(ns)),
        },
        format!("policy {} {}", p.sched.policy, p.sched.priorities()),
    ];
    if p.mlock {
        heading.push("mlockall".into());
    }
    // The pair column only when some point has several pairs.
    let pairs = results.iter().any(|r| r.point.pairs() > 1);
    let columns: [(&str, &str); 19] = [
        (CORE, "primitive"),
        (CORE, "placement"),
        (if pairs { CORE } else { "-" }, "pair"),
        ("cpus", "CPUs A→B"),
        ("cpus", "same%"),
        ("percentiles", "samples"),
        ("percentiles", "min"),
        (CORE, "p50"),
        ("percentiles", "p90"),
        (CORE, "p99"),
        (CORE, "p99.9"),
        (CORE, "max"),
        ("percentiles", "mean"),
        ("one-way", "one-way p50"),
        (CORE, "p50 ±%"),
        (CORE, "runs"),
        ("rate", "rt/s"),
        ("kernel", "ctxsw/rt"),
        ("kernel", "futex/rt"),
    ];
    let groups: Vec<&str> = columns.iter().map(|(g, _)| *g).collect();
    let headers = shown.select(&groups, columns.iter().map(|(_, h)| *h).collect());
    let mut t = Table::new();
    t.load_preset(preset);
    t.set_header(&headers);
    let mut table_rows: Vec<Vec<String>> = Vec::new();
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
                    crate::output::table::interval_cell(&r.stats, r.stopped),
                    r.stats.n.to_string(),
                    format!("{:.0}", s.round_trips_per_s)
                        + if crate::model::run::from_cut_short(&r.runs) {
                            crate::output::table::CUT_MARK
                        } else {
                            ""
                        },
                    ratio(per_rt(s.process.context_switches())),
                    ratio(futex_per_rt(r)),
                ]);
            } else {
                cells.extend(vec![String::new(); 5]);
            }
            table_rows.push(shown.select(&groups, cells));
        }
    }
    crate::output::number::one_notation_per_column(&mut table_rows);
    t.add_rows(table_rows);
    crate::output::table::align_right(&mut t, 3..headers.len());
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
    notes +=
        &crate::output::table::precision_note(results.iter().map(|r| (r.stopped, &r.stats, &r.runs[..])));
    for r in results {
        notes += &crate::output::table::cut_short_note(&r.point.label(), &r.runs);
    }
    let legend = String::from(CORE_LEGEND) + &shown.legend(GROUPS) + &shown.hidden_note(GROUPS);
    let heading = crate::output::table::fit(&heading.join(" · "));
    format!("{heading}{t}\n\n{}", crate::output::table::fit(&(legend + &notes)))
}
