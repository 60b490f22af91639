//! `contend lock --plot`: critical sections per second (thousands) against
//! the swept axis, one series per lock and policy, with 95% confidence
//! intervals as error bars, and Jain's fairness index below. The x axis is
//! the first axis that varies, in this order: duty cycle, spin budget,
//! workers, hold, idle; spin and worker counts, swept in steps that
//! multiply, are drawn evenly spaced with a tick at each value.

use crate::family::lock::sweep::PointResult;
use crate::measure::latency::{Bucket, Latencies};
use crate::model::value::Work;
use crate::model::Mode;
use crate::output::plot::span;
use crate::output::plot::{color, err, frame, padded, value_label, Categories};
use plotters::prelude::*;
use serde::Deserialize;

/// The swept axis: its name, a point's value on it, and whether it is
/// drawn on a log scale.
struct Axis {
    name: &'static str,
    /// For the title: "workers", "duty cycle".
    short: &'static str,
    value: fn(&Dot) -> f64,
    log: bool,
}

const AXES: [Axis; 9] = [
    Axis {
        name: "duty cycle (hold / (hold + idle)), %",
        short: "duty cycle",
        value: |r| {
            let (h, i) = (r.hold.ns as f64, r.idle.ns as f64);
            if h + i > 0.0 {
                100.0 * h / (h + i)
            } else {
                0.0
            }
        },
        log: false,
    },
    Axis {
        name: "spin budget (attempts before sleeping)",
        short: "spin budget",
        value: |r| f64::from(r.spin.unwrap_or(0)),
        log: true,
    },
    Axis {
        name: "glibc mutex spin count (glibc.pthread.mutex_spin_count)",
        short: "glibc spin count",
        value: |r| f64::from(r.glibc_spin.unwrap_or(0)),
        log: true,
    },
    Axis {
        name: "private futex hash, buckets",
        short: "futex hash size",
        value: |r| f64::from(r.futex_hash.unwrap_or(0)),
        log: true,
    },
    Axis {
        name: "locks the workers are spread over",
        short: "locks",
        value: |r| f64::from(r.locks),
        log: true,
    },
    Axis {
        name: "reads, % of acquisitions",
        short: "read share",
        value: |r| f64::from(r.read_pct.unwrap_or(0)),
        log: false,
    },
    Axis { name: "workers", short: "workers", value: |r| f64::from(r.workers), log: true },
    Axis { name: "hold, ns", short: "hold", value: |r| r.hold.ns as f64, log: false },
    Axis { name: "idle, ns", short: "idle", value: |r| r.idle.ns as f64, log: false },
];

/// A label that can name a series: the axis it belongs to, and the text.
type Label = (&'static str, fn(&Dot) -> String);

/// Every label a point can carry besides its lock.
const LABELS: [Label; 9] = [
    ("spinners", |r| r.spinners.as_ref().map_or(String::new(), |s| format!("spinners={s}"))),
    ("spin", |r| r.spin.map_or(String::new(), |s| format!("spin={s}"))),
    ("glibc", |r| r.glibc_spin.map_or(String::new(), |s| format!("glibc-spin={s}"))),
    ("hash", |r| r.futex_hash.map_or(String::new(), |h| format!("futex-hash={h}"))),
    ("locks", |r| format!("locks={}", r.locks)),
    ("read", |r| r.read_pct.map_or(String::new(), |p| format!("read={p}%"))),
    ("workers", |r| format!("{}={}", r.mode.label(), r.workers)),
    ("hold", |r| format!("hold={}", r.hold)),
    ("idle", |r| format!("idle={}", r.idle)),
];

/// Each point's name: its lock and every label that differs between the
/// points (the swept axis's too), for figures with a curve per point.
pub fn point_names(dots: &[Dot]) -> Vec<String> {
    let varying: Vec<fn(&Dot) -> String> =
        LABELS.iter().filter(|(_, f)| differs(dots, *f)).map(|(_, f)| *f).collect();
    dots.iter().map(|d| series_name(d, &varying)).collect()
}

/// Whether label `f` reads differently on some of `dots`.
fn differs(dots: &[Dot], f: fn(&Dot) -> String) -> bool {
    dots.iter().any(|d| f(d) != f(&dots[0]))
}

/// The series a point belongs to: its lock, plus every label that varies
/// across the results other than the x axis.
fn series_name(r: &Dot, others: &[fn(&Dot) -> String]) -> String {
    let mut name = r.series_lock();
    for f in others {
        let label = f(r);
        if !label.is_empty() {
            name += " ";
            name += &label;
        }
    }
    name
}

/// What the figure needs of one point, from a run's results or read back
/// from an export (`contend plot`).
#[derive(Debug, Clone, Deserialize)]
pub struct Dot {
    /// Which export it came from, when a figure joins several.
    #[serde(skip)]
    pub source: Option<String>,
    /// The lock.
    pub lock: String,
    /// Threads or processes.
    pub mode: Mode,
    /// Worker count.
    pub workers: u32,
    /// Spin budget, for locks that have one.
    pub spin: Option<u32>,
    /// Waiting policy, for locks that have one.
    pub spinners: Option<String>,
    /// glibc's mutex spin count, where set.
    #[serde(default)]
    pub glibc_spin: Option<u32>,
    /// Locks the workers were spread over.
    #[serde(default = "crate::model::lock::one")]
    pub locks: u32,
    /// The private futex hash, where set.
    #[serde(default)]
    pub futex_hash: Option<u32>,
    /// Share of reads, for a reader-writer lock's point.
    #[serde(default)]
    pub read_pct: Option<u32>,
    /// Work inside the lock.
    pub hold: Work,
    /// Work outside it.
    pub idle: Work,
    /// Mean cs/s over the runs.
    #[serde(skip)]
    pub mean: f64,
    /// Half-width of its 95% interval.
    #[serde(skip)]
    pub ci95: Option<f64>,
    /// Jain's index of the median run.
    #[serde(skip)]
    pub jain: f64,
    /// The wait to acquire at 50% and 99%, µs, pooled over the runs
    /// (None when acquisitions were not timed, or too few for p99).
    #[serde(skip)]
    pub wait_us: Option<(f64, Option<f64>)>,
    /// A reader-writer lock's point: the p99 wait of its reads and of its
    /// writes, µs, each where enough were timed.
    #[serde(skip)]
    pub rw_wait_us: Option<(Option<f64>, Option<f64>)>,
}

impl Dot {
    /// The lock, prefixed with its export's name when there are several.
    fn series_lock(&self) -> String {
        match &self.source {
            Some(s) => format!("{s}: {}", self.lock),
            None => self.lock.clone(),
        }
    }

    fn of(r: &PointResult) -> Self {
        let p = &r.point;
        Dot {
            source: None,
            lock: p.lock.to_string(),
            mode: p.mode,
            workers: p.workers,
            spin: p.spin,
            spinners: p.spinners.map(|s| s.to_string()),
            glibc_spin: p.glibc_spin,
            locks: p.locks,
            futex_hash: p.futex_hash,
            read_pct: p.read_pct,
            hold: p.hold,
            idle: p.idle,
            mean: r.stats.mean,
            ci95: r.stats.ci95,
            jain: r.sample.fairness.jain,
            wait_us: r.acquire_latency().and_then(|(_, h)| wait_us(&h)),
            rw_wait_us: r.rw_waits().map(|(read, write)| (p99_us(&read), p99_us(&write))),
        }
    }

    /// What the wait panel draws for this dot, (dashed, solid), µs: p50
    /// and p99; or, in a figure with reader-writer points (`rw`), the p99
    /// of reads and of writes, a mutex's acquisitions counting as writes.
    fn wait_lines(&self, rw: bool) -> (Option<f64>, Option<f64>) {
        match (rw, self.rw_wait_us, self.wait_us) {
            (true, Some(read_write), _) => read_write,
            (true, None, Some((_, p99))) => (None, p99),
            (false, _, Some((p50, p99))) => (Some(p50), p99),
            (_, _, None) => (None, None),
        }
    }

    /// The points of a lock export (`doc`), named `source` when a figure
    /// joins several exports.
    pub fn read(doc: &serde_json::Value, source: Option<&str>) -> Result<Vec<Dot>, String> {
        let points = doc.get("points").and_then(|p| p.as_array()).ok_or("no `points` list")?;
        points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut dot = Dot::deserialize(&p["point"]).map_err(|e| format!("point {i}: {e}"))?;
                dot.source = source.map(str::to_string);
                dot.mean = p["stats"]["mean"].as_f64().ok_or_else(|| format!("point {i}: no stats.mean"))?;
                dot.ci95 = p["stats"]["ci95"].as_f64();
                dot.jain = p["sample"]["fairness"]["jain"].as_f64().unwrap_or(f64::NAN);
                dot.wait_us = pooled_wait(p, &["acquire_latency", "distribution"]).and_then(|h| wait_us(&h));
                if dot.read_pct.is_some() {
                    let p99 = |at: &str| pooled_wait(p, &["rw", at]).and_then(|h| p99_us(&h));
                    dot.rw_wait_us = dot.wait_us.map(|_| (p99("read_wait"), p99("write_wait")));
                }
                Ok(dot)
            })
            .collect()
    }
}

/// p50 and p99 (when enough waits lie above it) of a wait histogram, µs.
fn wait_us(h: &Latencies) -> Option<(f64, Option<f64>)> {
    (!h.is_empty()).then(|| (h.quantile(0.5) as f64 / 1e3, p99_us(h)))
}

/// p99 of a wait histogram, µs, when enough waits lie above it.
fn p99_us(h: &Latencies) -> Option<f64> {
    crate::output::plot::enough_for(0.99, h.len()).then(|| h.quantile(0.99) as f64 / 1e3)
}

/// An exported point's waits, the distribution at `at` in each run,
/// pooled over the runs its statistics use (the measured ones, or those
/// cut short when no run was measured), as the table pools them.
pub(super) fn pooled_wait(p: &serde_json::Value, at: &[&str]) -> Option<Latencies> {
    let runs = p["runs"].as_array()?;
    let measured = runs.iter().any(|r| r["status"] == "measured");
    let used = if measured { "measured" } else { "cut_short" };
    let mut h: Option<Latencies> = None;
    for r in runs.iter().filter(|r| r["status"] == used) {
        let distribution = at.iter().fold(r, |v, key| &v[*key]);
        let buckets: Vec<Bucket> = serde_json::from_value(distribution["buckets"].clone()).ok()?;
        h.get_or_insert_with(Latencies::new).merge(&Latencies::from_buckets(&buckets));
    }
    h
}

/// Draws `results` as an SVG document, with `caption` (the command and
/// the machine) under the figure.
pub fn render(results: &[PointResult], caption: &str) -> Result<String, String> {
    let dots: Vec<Dot> = results.iter().map(Dot::of).collect();
    let mut svg = String::new();
    draw(&dots, SVGBackend::with_string(&mut svg, size(&dots)).into_drawing_area(), None, caption)?;
    Ok(svg)
}

/// The figure's size in pixels: taller by the wait panel when some point
/// timed its acquisitions.
pub fn size(dots: &[Dot]) -> (u32, u32) {
    if dots.iter().any(|d| d.wait_us.is_some()) {
        (1100, 780 + WAIT_PANEL)
    } else {
        (1100, 780)
    }
}

/// The wait panel's height, px.
const WAIT_PANEL: u32 = 300;

/// Draws `dots` on `root`, titled `title` (or after the swept axis).
pub fn draw<DB: DrawingBackend>(
    dots: &[Dot],
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: Option<&str>,
    caption: &str,
) -> Result<(), String> {
    if dots.is_empty() {
        return Err("no points to draw".into());
    }
    let results = dots;
    // An axis is swept when it varies between points of one lock (spin
    // differs between futex and pthread, but that is not a sweep).
    let varies = |f: &dyn Fn(&Dot) -> f64| {
        results.iter().any(|a| results.iter().any(|b| a.series_lock() == b.series_lock() && f(a) != f(b)))
    };
    let workers = AXES.iter().find(|a| a.name == "workers").expect("a workers axis");
    let axis = AXES.iter().find(|a| varies(&a.value)).unwrap_or(workers);
    let x_owner = match axis.name {
        n if n.starts_with("spin") => "spin",
        n if n.starts_with("glibc") => "glibc",
        n if n.starts_with("private futex hash") => "hash",
        n if n.starts_with("locks") => "locks",
        n if n.starts_with("reads") => "read",
        "workers" => "workers",
        n if n.starts_with("hold") || n.starts_with("duty") => "hold",
        _ => "idle",
    };
    // Everything else that varies names the series.
    let others: Vec<fn(&Dot) -> String> = LABELS
        .iter()
        .filter(|(name, f)| {
            *name != x_owner && !(axis.name.starts_with("duty") && *name == "idle") && differs(results, *f)
        })
        .map(|(_, f)| *f)
        .collect();

    let mut series: Vec<(String, Vec<&Dot>)> = Vec::new();
    for r in results {
        let name = series_name(r, &others);
        match series.iter_mut().find(|(n, _)| *n == name) {
            Some((_, points)) => points.push(r),
            None => series.push((name, vec![r])),
        }
    }
    let value = |r: &Dot| (axis.value)(r);
    for (_, points) in &mut series {
        points.sort_by(|a, b| value(a).total_cmp(&value(b)));
    }
    let names: Vec<(String, RGBColor)> =
        series.iter().enumerate().map(|(i, (n, _))| (n.clone(), color(i))).collect();
    let waits = results.iter().any(|d| d.wait_us.is_some());
    let title = title.map_or_else(
        || {
            let wait = if waits { ", fairness and wait to acquire" } else { " and fairness" };
            format!("cs/s (critical sections per second){wait} against {}", axis.short)
        },
        str::to_string,
    );
    let data = frame(&root, &title, caption, &names)?;
    // Spin budgets and worker counts are swept in steps that multiply:
    // drawn evenly spaced, with a tick at each value swept.
    let cats = Categories::of(results.iter().map(value));
    let x: &dyn Fn(&Dot) -> f64 = if axis.log { &|r| cats.at(value(r)) } else { &value };
    let labels: &dyn Fn(f64) -> String = if axis.log { &|v| cats.label(v) } else { &value_label };
    let ticks = if axis.log { cats.count() } else { 10 };
    let range = if axis.log {
        cats.range()
    } else {
        let lo = results.iter().map(value).fold(f64::INFINITY, f64::min);
        let hi = results.iter().map(value).fold(f64::NEG_INFINITY, f64::max);
        let (lo, hi) = padded(lo, hi, 0.05);
        lo..hi
    };
    panels(&data, range, &series, axis, &Ticks { x, labels, count: ticks })?;
    root.present().map_err(err)
}

type Series<'a> = [(String, Vec<&'a Dot>)];

/// Where a point sits on the x axis, and how its ticks are labelled.
struct Ticks<'a> {
    x: &'a dyn Fn(&Dot) -> f64,
    labels: &'a dyn Fn(f64) -> String,
    count: usize,
}

/// Throughput above, fairness below.
fn panels<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    xs: std::ops::Range<f64>,
    series: &Series,
    axis: &Axis,
    ticks: &Ticks,
) -> Result<(), String> {
    let x = ticks.x;
    let thousands = |v: f64| v / 1e3;
    let y_hi = series
        .iter()
        .flat_map(|(_, p)| p.iter())
        .map(|r| thousands(r.mean + r.ci95.unwrap_or(0.0)))
        .fold(0.0, f64::max)
        * 1.1;
    let waits = series.iter().flat_map(|(_, p)| p.iter()).any(|d| d.wait_us.is_some());
    let (area, wait_area) = if waits {
        let h = area.dim_in_pixel().1;
        let (a, b) = area.split_vertically(h.saturating_sub(WAIT_PANEL));
        (a, Some(b))
    } else {
        (area.clone(), None)
    };
    let (top, bottom) = area.split_vertically(460);
    let mut chart = crate::output::plot::chart_on(&top)
        .build_cartesian_2d(span(xs.clone()), span(0.0..y_hi.max(1.0)))
        .map_err(err)?;
    crate::output::plot::readable(&mut chart.configure_mesh())
        .x_desc(axis.name)
        .x_labels(ticks.count)
        .x_label_formatter(&|v| (ticks.labels)(*v))
        .y_desc("cs/s, thousands (95% intervals)")
        .y_label_formatter(&|v| value_label(*v))
        .draw()
        .map_err(err)?;
    for (i, (_, points)) in series.iter().enumerate() {
        let c = color(i);
        let line: Vec<(f64, f64)> = points.iter().map(|r| (x(r), thousands(r.mean))).collect();
        chart.draw_series(LineSeries::new(line.clone(), c.stroke_width(2))).map_err(err)?;
        chart.draw_series(line.iter().map(|&(px, py)| Circle::new((px, py), 3, c.filled()))).map_err(err)?;
        chart
            .draw_series(points.iter().filter_map(|r| {
                let h = r.ci95?;
                let m = r.mean;
                Some(ErrorBar::new_vertical(x(r), thousands(m - h), thousands(m), thousands(m + h), c, 8))
            }))
            .map_err(err)?;
    }

    let mut fair =
        crate::output::plot::chart_on(&bottom).build_cartesian_2d(span(xs), 0.0..1.05).map_err(err)?;
    crate::output::plot::readable(&mut fair.configure_mesh())
        .x_desc(axis.name)
        .x_labels(ticks.count)
        .x_label_formatter(&|v| (ticks.labels)(*v))
        .y_desc("Jain index")
        .y_labels(3)
        .y_label_formatter(&|v| value_label(*v))
        .draw()
        .map_err(err)?;
    for (i, (_, points)) in series.iter().enumerate() {
        let c = color(i);
        let line: Vec<(f64, f64)> = points.iter().map(|r| (x(r), r.jain)).collect();
        fair.draw_series(LineSeries::new(line.clone(), c.stroke_width(2))).map_err(err)?;
        fair.draw_series(line.iter().map(|&(px, py)| Circle::new((px, py), 3, c.filled()))).map_err(err)?;
    }
    match wait_area {
        Some(wait_area) => wait_panel(&wait_area, fair.x_range(), series, axis, ticks),
        None => Ok(()),
    }
}

/// The wait to acquire, log µs, per series: p99 solid, p50 dashed; with
/// reader-writer points, writes' p99 solid and reads' dashed.
fn wait_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    xs: std::ops::Range<f64>,
    series: &Series,
    axis: &Axis,
    ticks: &Ticks,
) -> Result<(), String> {
    let x = ticks.x;
    let log = |us: f64| us.max(1e-3).log10();
    let rw = series.iter().flat_map(|(_, p)| p.iter()).any(|d| d.rw_wait_us.is_some());
    let ys: Vec<f64> = series
        .iter()
        .flat_map(|(_, p)| p.iter())
        .flat_map(|d| {
            let (dashed, solid) = d.wait_lines(rw);
            [dashed, solid].into_iter().flatten()
        })
        .map(log)
        .collect();
    let lo = ys.iter().copied().fold(f64::INFINITY, f64::min).floor();
    let hi = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max).ceil().max(lo + 1.0);
    let mut chart =
        crate::output::plot::chart_on(area).build_cartesian_2d(span(xs), span(lo..hi)).map_err(err)?;
    crate::output::plot::readable(&mut chart.configure_mesh())
        .x_desc(axis.name)
        .x_labels(ticks.count)
        .x_label_formatter(&|v| (ticks.labels)(*v))
        .y_desc(if rw { "wait p99, µs (writes; reads dashed)" } else { "wait, µs (p99; p50 dashed)" })
        .y_label_formatter(&|v| crate::output::plot::decade(*v))
        .draw()
        .map_err(err)?;
    if ys.is_empty() {
        // Percentiles are drawn only with 10 timed waits above them.
        let (x0, x1) = (chart.x_range().start, chart.x_range().end);
        let note = "too few timed waits for a percentile: longer runs, or --latency-every lower";
        chart
            .draw_series(std::iter::once(Text::new(
                note,
                (x0 + 0.05 * (x1 - x0), lo + 0.6),
                crate::output::plot::axis_font(),
            )))
            .map_err(err)?;
    }
    for (i, (_, points)) in series.iter().enumerate() {
        let c = color(i);
        let solid: Vec<(f64, f64)> =
            points.iter().filter_map(|d| Some((x(d), log(d.wait_lines(rw).1?)))).collect();
        chart.draw_series(LineSeries::new(solid.clone(), c.stroke_width(2))).map_err(err)?;
        chart.draw_series(solid.iter().map(|&p| Circle::new(p, 3, c.filled()))).map_err(err)?;
        let dashed: Vec<(f64, f64)> =
            points.iter().filter_map(|d| Some((x(d), log(d.wait_lines(rw).0?)))).collect();
        chart.draw_series(DashedLineSeries::new(dashed.clone(), 6, 4, c.stroke_width(2))).map_err(err)?;
        chart.draw_series(dashed.iter().map(|&p| Circle::new(p, 3, c.stroke_width(1)))).map_err(err)?;
    }
    Ok(())
}
