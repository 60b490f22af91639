//! `contend run`'s figure (`--plot`, `contend plot`, `contend report`):
//! above, each lock's metric (wall time, or the program's `--metric`
//! rate) with its 95% interval; below, with `--profile`, how long the
//! contended acquisitions of the top mutexes waited, by percentile.
//!
//! A percentile is drawn only where the mutex has enough contended
//! acquisitions for it (p99 needs 100: one at least above it); the
//! largest wait always is. The profile's buckets are 12.5% wide, so a
//! percentile is the upper edge of its bucket, as the table's p99 is.

use crate::measure::latency::Bucket;
use crate::model::program::ProgramPoint;
use crate::output::marker::{style, Marker, Style};
use crate::output::plot::span;
use crate::output::plot::{decade, err, frame, padded, value_label};
use plotters::prelude::*;
use serde_json::Value;

/// The figure's size in pixels.
pub const SIZE: (u32, u32) = (1100, 860);

/// Mutexes drawn per lock: the most waited-on.
const TOP: usize = 5;

/// The percentiles a mutex's curve can have, then the largest wait.
const PERCENTILES: [f64; 4] = [0.5, 0.9, 0.99, 0.999];

/// One lock's metric.
#[derive(Debug, Clone)]
pub struct LockDot {
    /// The lock, and the export's name when a figure joins several.
    pub name: String,
    /// Its mean over the runs.
    pub mean: f64,
    /// Half the 95% interval, if there were runs enough.
    pub ci95: Option<f64>,
}

/// One mutex's waits.
#[derive(Debug, Clone)]
pub struct WaitCurve {
    /// Lock, and where it waits.
    pub name: String,
    /// Its contended waits (the export's `wait_histogram`).
    pub buckets: Vec<Bucket>,
}

/// What a run export draws.
#[derive(Debug, Clone, Default)]
pub struct ProgramFigure {
    /// The metric in words (`wall s`).
    pub metric: String,
    /// Each lock's metric.
    pub locks: Vec<LockDot>,
    /// The top mutexes of each lock (its futex-counting run if profiled, else its median run).
    pub waits: Vec<WaitCurve>,
}

impl ProgramFigure {
    /// Reads a run export (`doc`), its series named after `source` too
    /// when a figure joins several exports.
    pub fn read(doc: &Value, source: Option<&str>) -> Result<ProgramFigure, String> {
        if doc["family"] != crate::family::program::family::FAMILY.name {
            return Err(format!("a `{}` export is not a run export", doc["family"].as_str().unwrap_or("?")));
        }
        let metric = (crate::family::program::family::FAMILY.metric)(&doc["spec"]);
        let points = doc.get("points").and_then(Value::as_array).ok_or("no `points` list")?;
        let named = |n: &str| source.map_or(n.to_string(), |s| format!("{s}: {n}"));
        let mut out = ProgramFigure { metric: metric.name.to_string(), ..Default::default() };
        let several = points.len() > 1;
        let read_points = points.iter().enumerate().map(|(i, p)| {
            serde_json::from_value::<ProgramPoint>(p["point"].clone()).map_err(|e| format!("point {i}: {e}"))
        });
        let read_points = read_points.collect::<Result<Vec<_>, _>>()?;
        let any_profiled = read_points.iter().any(|p| p.profiled);
        for (i, (p, point)) in points.iter().zip(&read_points).enumerate() {
            let lock = &point.label(any_profiled);
            let Some(mean) = p["stats"]["mean"].as_f64() else { continue };
            out.locks.push(LockDot { name: named(lock), mean, ci95: p["stats"]["ci95"].as_f64() });
            let run = super::details::profile_run(p);
            let mutexes = run["mutexes"].as_array().map_or(&[][..], Vec::as_slice);
            let shown: Vec<&serde_json::Value> =
                mutexes.iter().filter(|m| m["contended"].as_u64().unwrap_or(0) > 0).take(TOP).collect();
            let at = |m: &serde_json::Value| {
                crate::session::visible::text(m["waits_at"].as_str().unwrap_or("?")).into_owned()
            };
            for m in &shown {
                let buckets: Vec<Bucket> = serde_json::from_value(m["wait_histogram"].clone())
                    .map_err(|e| format!("point {i}: wait_histogram: {e}"))?;
                // Two mutexes waited on at one call site are told apart by
                // their addresses.
                let twin = shown.iter().filter(|o| at(o) == at(m)).count() > 1;
                let at = match m["address"].as_u64() {
                    Some(a) if twin => format!("{} {a:#x}", at(m)),
                    _ => at(m),
                };
                let name = if several { format!("{lock}: {at}") } else { at };
                out.waits.push(WaitCurve { name: named(&name), buckets });
            }
        }
        Ok(out)
    }

    /// Joins another export's figure to this one.
    pub fn extend(&mut self, other: ProgramFigure) {
        if self.metric.is_empty() {
            self.metric = other.metric;
        }
        self.locks.extend(other.locks);
        self.waits.extend(other.waits);
    }
}

/// The wait below which `q` of the acquisitions in `buckets` waited, ns;
/// None when there are too few for that percentile to mean anything.
fn percentile(buckets: &[Bucket], q: f64) -> Option<u64> {
    let n: u64 = buckets.iter().map(|b| b.count).sum();
    if !crate::output::plot::enough_for(q, n) {
        return None;
    }
    let want = ((n as f64 * q).ceil() as u64).max(1);
    let mut seen = 0;
    buckets
        .iter()
        .find(|b| {
            seen += b.count;
            seen >= want
        })
        .map(|b| b.value_ns)
}

/// The x position of [`PERCENTILES`]`[i]`: evenly spaced, as on a log
/// axis of 1 / (1 - q) (90, 99, 99.9), with the median one step before
/// and the largest wait one after.
fn x_of(i: usize) -> f64 {
    i as f64
}

const X_MAX: f64 = PERCENTILES.len() as f64;

fn percentile_label(v: f64) -> String {
    let i = v.round();
    if (v - i).abs() > 1e-6 || i < 0.0 {
        return String::new();
    }
    match i as usize {
        0 => "50%".into(),
        1 => "90%".into(),
        2 => "99%".into(),
        3 => "99.9%".into(),
        4 => "max".into(),
        _ => String::new(),
    }
}

/// Draws `fig` on `root`.
pub fn draw<DB: DrawingBackend>(
    fig: &ProgramFigure,
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: Option<&str>,
    caption: &str,
) -> Result<(), String> {
    if fig.locks.is_empty() {
        return Err("no runs to draw".into());
    }
    let curves: Vec<(&str, Vec<(f64, f64)>)> = fig
        .waits
        .iter()
        .map(|c| {
            let mut points: Vec<(f64, f64)> = PERCENTILES
                .iter()
                .enumerate()
                .filter_map(|(i, &q)| Some((x_of(i), percentile(&c.buckets, q)?)))
                .map(|(x, ns)| (x, (ns.max(1) as f64 / 1e3).log10()))
                .collect();
            if let Some(max) = c.buckets.last() {
                points.push((X_MAX, (max.value_ns.max(1) as f64 / 1e3).log10()));
            }
            (c.name.as_str(), points)
        })
        .collect();
    let names: Vec<(String, Style)> =
        curves.iter().enumerate().map(|(i, (n, _))| (n.to_string(), style(i))).collect();
    let title = title.unwrap_or(if curves.is_empty() {
        "The program under each lock"
    } else {
        "The program under each lock, and its top mutexes' waits"
    });
    let data = frame(&root, title, caption, &names)?;
    if curves.is_empty() {
        metric_panel(fig, &data)?;
    } else {
        let (top, bottom) = data.split_vertically(360);
        metric_panel(fig, &top)?;
        wait_panel(&curves, &bottom)?;
    }
    root.present().map_err(err)
}

/// Each lock's metric, with its 95% interval, at evenly spaced positions.
fn metric_panel<DB: DrawingBackend>(
    fig: &ProgramFigure,
    area: &DrawingArea<DB, plotters::coord::Shift>,
) -> Result<(), String> {
    let lo = fig.locks.iter().map(|d| d.mean - d.ci95.unwrap_or(0.0)).fold(f64::INFINITY, f64::min);
    let hi = fig.locks.iter().map(|d| d.mean + d.ci95.unwrap_or(0.0)).fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = padded(lo.max(0.0), hi, 0.15);
    let n = fig.locks.len();
    let mut chart = crate::output::plot::chart_on(area)
        .build_cartesian_2d(-0.5..(n as f64 - 0.5), span(lo.max(0.0)..hi))
        .map_err(err)?;
    let label = |v: &f64| {
        let i = v.round();
        if (v - i).abs() > 1e-6 || i < 0.0 {
            return String::new();
        }
        fig.locks.get(i as usize).map_or(String::new(), |d| d.name.clone())
    };
    crate::output::plot::readable(&mut chart.configure_mesh())
        .x_desc("lock")
        .x_labels(n)
        .x_label_formatter(&label)
        .y_desc(format!(
            "{}, {}",
            fig.metric,
            crate::output::plot::intervals(fig.locks.iter().any(|d| d.ci95.is_some()))
        ))
        .y_label_formatter(&|v| value_label(*v))
        .draw()
        .map_err(err)?;
    let ink = RGBColor(0, 0, 0);
    chart
        .draw_series(
            fig.locks.iter().enumerate().map(|(i, d)| Circle::new((i as f64, d.mean), 4, ink.filled())),
        )
        .map_err(err)?;
    chart
        .draw_series(fig.locks.iter().enumerate().filter_map(|(i, d)| {
            let h = d.ci95?;
            Some(ErrorBar::new_vertical(i as f64, d.mean - h, d.mean, d.mean + h, ink, 10))
        }))
        .map_err(err)?;
    Ok(())
}

/// The top mutexes' waits by percentile, log µs.
fn wait_panel<DB: DrawingBackend>(
    curves: &[(&str, Vec<(f64, f64)>)],
    area: &DrawingArea<DB, plotters::coord::Shift>,
) -> Result<(), String> {
    let ys = curves.iter().flat_map(|(_, p)| p.iter().map(|&(_, y)| y));
    let (y_lo, y_hi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| (lo.min(y), hi.max(y)));
    let (y_lo, y_hi) = (y_lo.floor(), y_hi.ceil().max(y_lo.floor() + 1.0));
    let mut chart = crate::output::plot::chart_on(area)
        .build_cartesian_2d(-0.5..X_MAX + 0.5, span(y_lo..y_hi))
        .map_err(err)?;
    crate::output::plot::readable(&mut chart.configure_mesh())
        .x_desc("percentile of the mutex's contended acquisitions")
        .y_desc("wait, µs")
        .x_labels(PERCENTILES.len() + 1)
        .x_label_formatter(&|v| percentile_label(*v))
        .y_label_formatter(&|v| decade(*v))
        .draw()
        .map_err(err)?;
    for (i, (_, points)) in curves.iter().enumerate() {
        let s = style(i);
        chart.draw_series(LineSeries::new(points.clone(), s.colour.stroke_width(2))).map_err(err)?;
        chart.draw_series(points.iter().map(|&p| Marker::new(p, s, true))).map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(value_ns: u64, count: u64) -> Bucket {
        Bucket { value_ns, count }
    }

    #[test]
    fn a_percentile_needs_an_acquisition_above_it() {
        let h = [b(1_000, 90), b(5_000, 9), b(50_000, 1)];
        assert_eq!(percentile(&h, 0.5), Some(1_000));
        assert_eq!(percentile(&h, 0.9), Some(1_000), "the 90th of 100 is the last of the 90");
        assert_eq!(percentile(&h, 0.99), None, "p99 of 100 would rest on one acquisition");
        let h = [b(1_000, 900), b(5_000, 90), b(50_000, 10)];
        assert_eq!(percentile(&h, 0.99), Some(5_000), "ten acquisitions beyond it");
        assert_eq!(percentile(&h, 0.999), None, "1000 acquisitions cannot say p99.9");
        assert_eq!(percentile(&[b(10, 1)], 0.5), None);
    }

    #[test]
    fn the_axis_labels_only_the_percentiles_drawn() {
        assert_eq!(percentile_label(x_of(0)), "50%");
        assert_eq!(percentile_label(x_of(2)), "99%");
        assert_eq!(percentile_label(X_MAX), "max");
        assert_eq!(percentile_label(2.5), "");
    }
}
