//! `contend wakeup`'s table: one row per pair, plus an "all" row per point
//! when there are several pairs. Latencies in µs with ns resolution kept
//! to two decimals.

use crate::family::wakeup::spec::Length;
use crate::family::wakeup::sweep::WakeupResult;
use crate::family::wakeup::workload::Distribution;
use crate::measure::clock::ClockCost;
use crate::measure::latency::LatencySummary;
use crate::measure::tracefs::TraceReport;
use crate::output::column::{Column, Columns};
use crate::output::columns::{Group, Shown, CORE};
use crate::output::number::ratio;
use comfy_table::presets;

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

/// A line of the table: one pair of a point, or its "all" row, and
/// whether it is the point's last (which carries the point's rates and
/// counts).
struct Line<'a> {
    r: &'a WakeupResult,
    row: Row<'a>,
    last: bool,
}

impl Line<'_> {
    /// A cell of the round-trip distribution, `-` when nothing was
    /// recorded.
    fn rt(&self, of: fn(&LatencySummary) -> String) -> String {
        self.row.round_trip.summary.as_ref().map_or("-".into(), of)
    }

    /// A cell of the point's, on its last line only.
    fn point(&self, of: fn(&WakeupResult) -> String) -> String {
        if self.last {
            of(self.r)
        } else {
            String::new()
        }
    }
}

type C<'b> = Column<'static, Line<'b>>;

/// Every column with its group and its cell.
fn columns<'b>(pairs: bool) -> Vec<C<'b>> {
    vec![
        C::text(CORE, "primitive", |l| l.r.point.primitive.to_string()),
        C::text(CORE, "placement", |l| l.r.point.affinity.name().to_string()),
        // Only when some point has several pairs.
        C::text(CORE, "pair", |l| l.row.pair.clone()).only_if(pairs),
        C::number("cpus", "CPUs A→B", |l| l.row.placement.clone()),
        C::number("cpus", "same%", |l| l.row.same_cpu.clone()),
        C::number("percentiles", "samples", |l| {
            l.row.round_trip.summary.map_or(0, |s| s.samples).to_string()
        }),
        C::number("percentiles", "min", |l| l.rt(|s| us(s.min_ns))),
        C::number(CORE, "p50", |l| l.rt(|s| us(s.p50_ns))),
        C::number("percentiles", "p90", |l| l.rt(|s| us(s.p90_ns))),
        C::number(CORE, "p99", |l| l.rt(|s| us(s.p99_ns))),
        C::number(CORE, "p99.9", |l| l.rt(|s| us(s.p999_ns))),
        C::number(CORE, "max", |l| l.rt(|s| us(s.max_ns))),
        C::number("percentiles", "mean", |l| l.rt(|s| format!("{:.2}", s.mean_ns / 1e3))),
        C::number("one-way", "one-way p50", |l| match l.row.one_way.summary {
            Some(o) if l.row.round_trip.summary.is_some() => us(o.p50_ns),
            _ => "-".into(),
        }),
        C::number(CORE, "p50 ±%", |l| l.point(|r| crate::output::table::interval_cell(&r.stats, r.stopped))),
        C::number(CORE, "runs", |l| l.point(|r| r.stats.n.to_string())),
        C::number("rate", "rt/s", |l| {
            l.point(|r| {
                let cut = crate::model::run::from_cut_short(&r.runs);
                format!("{:.0}", r.sample.round_trips_per_s)
                    + if cut { crate::output::table::CUT_MARK } else { "" }
            })
        }),
        C::number("kernel", "ctxsw/rt", |l| {
            l.point(|r| {
                let rounds = r.sample.round_trip.summary.map_or(0, |x| x.samples);
                ratio((rounds > 0).then(|| r.sample.process.context_switches() as f64 / rounds as f64))
            })
        }),
        C::number("kernel", "futex/rt", |l| l.point(|r| ratio(futex_per_rt(r)))),
    ]
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
    let pairs = results.iter().any(|r| r.point.pairs() > 1);
    let columns = Columns::shown(columns(pairs), shown);
    let mut table_rows: Vec<Vec<String>> = Vec::new();
    for r in results {
        let all = rows(r);
        let last = all.len() - 1;
        for (i, row) in all.into_iter().enumerate() {
            table_rows.push(columns.cells(&Line { r, row, last: i == last }));
        }
    }
    crate::output::number::one_notation_per_column(&mut table_rows);
    let t = columns.render(&table_rows, preset);
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
    let legend = String::from(CORE_LEGEND) + &columns.legend(GROUPS) + &shown.hidden_note(GROUPS);
    let heading = crate::output::table::fit(&heading.join(" · "));
    format!("{heading}{t}\n\n{}", crate::output::table::fit(&(legend + &notes)))
}
