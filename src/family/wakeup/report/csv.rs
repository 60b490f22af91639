//! `contend wakeup --export-csv`: one row per pair and point, plus the
//! point's "all" row, every statistic in ns.

use crate::family::wakeup::sweep::WakeupResult;
use crate::measure::latency::LatencySummary;
use serde::Serialize;

/// One CSV row: a pair of a point (or all its pairs).
#[derive(Debug, Default, Serialize)]
struct Row<'a> {
    primitive: &'a str,
    mode: &'a str,
    affinity: &'a str,
    pairs: usize,
    /// The pair's index, or `all`.
    pair: String,
    cpus_a: &'a str,
    cpus_b: &'a str,
    same_cpu_pct: Option<f64>,
    samples: u64,
    min_ns: Option<u64>,
    p50_ns: Option<u64>,
    p90_ns: Option<u64>,
    p99_ns: Option<u64>,
    p999_ns: Option<u64>,
    max_ns: Option<u64>,
    mean_ns: Option<f64>,
    stdev_ns: Option<f64>,
    one_way_p50_ns: Option<u64>,
    one_way_p99_ns: Option<u64>,
    round_trips_per_s: f64,
    interrupted: Option<&'a str>,
}

impl<'a> Row<'a> {
    /// The row of `r`'s pair `pair` with its CPUs, or of all its pairs.
    fn of(r: &'a WakeupResult, pair: String, cpus: (&'a str, &'a str), same: Option<f64>) -> Self {
        Row {
            primitive: r.point.primitive,
            mode: r.point.mode.label(),
            affinity: r.point.affinity.name(),
            pairs: r.point.pairs(),
            pair,
            cpus_a: cpus.0,
            cpus_b: cpus.1,
            same_cpu_pct: same,
            round_trips_per_s: r.sample.round_trips_per_s,
            interrupted: r.sample.interrupted.as_deref(),
            ..Row::default()
        }
    }

    /// With the round-trip and one-way statistics.
    fn with(self, rt: Option<LatencySummary>, ow: Option<LatencySummary>) -> Self {
        Row {
            samples: rt.map_or(0, |x| x.samples),
            min_ns: rt.map(|x| x.min_ns),
            p50_ns: rt.map(|x| x.p50_ns),
            p90_ns: rt.map(|x| x.p90_ns),
            p99_ns: rt.map(|x| x.p99_ns),
            p999_ns: rt.map(|x| x.p999_ns),
            max_ns: rt.map(|x| x.max_ns),
            mean_ns: rt.map(|x| x.mean_ns),
            stdev_ns: rt.map(|x| x.stdev_ns),
            one_way_p50_ns: ow.map(|x| x.p50_ns),
            one_way_p99_ns: ow.map(|x| x.p99_ns),
            ..self
        }
    }
}

/// One CSV row per pair (and per point's "all" row), every statistic in ns.
pub fn render(results: &[WakeupResult]) -> String {
    crate::output::csv::render(results.iter().flat_map(|r| {
        let s = &r.sample;
        let pairs = s.pairs.iter().map(move |p| {
            Row::of(r, p.pair.to_string(), (&p.cpus_a, &p.cpus_b), Some(p.same_cpu_pct))
                .with(p.round_trip.summary, p.one_way.summary)
        });
        let all = Row::of(r, "all".into(), ("", ""), None).with(s.round_trip.summary, s.one_way.summary);
        pairs.chain(std::iter::once(all))
    }))
}
