//! `contend wakeup --export-csv`: one row per pair and point, plus the
//! point's "all" row, every statistic in ns.

use crate::family::wakeup::sweep::WakeupResult;
use crate::measure::latency::LatencySummary;

/// One CSV row per pair (and per point's "all" row), every statistic in ns.
pub fn render(results: &[WakeupResult]) -> String {
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
    crate::output::csv::render(&header, out)
}
