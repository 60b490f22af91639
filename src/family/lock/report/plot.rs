//! `contend lock --plot`: critical sections per second (thousands) against
//! the swept axis, one series per lock and policy, with 95% confidence
//! intervals as error bars, and Jain's fairness index below. The x axis is
//! the first axis that varies, in this order: duty cycle, spin budget,
//! workers, hold, idle; spin and worker counts, swept in steps that
//! multiply, are drawn evenly spaced with a tick at each value.

pub use super::dot::Dot;
use super::panels::{panels, Ticks, WAIT_PANEL};
use crate::family::lock::sweep::PointResult;
use crate::output::marker::{style, Style};
use crate::output::plot::{err, frame, padded, value_label, Categories};
use plotters::prelude::*;

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
const LABELS: [Label; 10] = [
    ("spinners", |r| r.spinners.as_ref().map_or(String::new(), |s| format!("spinners={s}"))),
    ("spin", |r| r.spin.map_or(String::new(), |s| format!("spin={s}"))),
    ("glibc", |r| r.glibc_spin.map_or(String::new(), |s| format!("glibc-spin={s}"))),
    ("hash", |r| r.futex_hash.map_or(String::new(), |h| format!("futex-hash={h}"))),
    ("locks", |r| format!("locks={}", r.locks)),
    ("read", |r| r.read_pct.map_or(String::new(), |p| format!("read={p}%"))),
    ("affinity", |r| format!("affinity={}", r.affinity)),
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
    let names: Vec<(String, Style)> =
        series.iter().enumerate().map(|(i, (n, _))| (n.clone(), style(i))).collect();
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
    panels(&data, range, &series, &Ticks { name: axis.name, x, labels, count: ticks })?;
    root.present().map_err(err)
}
