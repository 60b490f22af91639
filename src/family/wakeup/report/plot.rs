//! `contend wakeup --plot`: each point's round-trip distribution as
//! latency against percentile, HdrHistogram style: the x axis is
//! 1/(1 - percentile) on a log scale, so 90%, 99%, 99.9% and 99.99% are
//! evenly spaced and the tail gets the room; the y axis is log µs.

use crate::family::wakeup::report::gnuplot::QUANTILES;
use crate::family::wakeup::sweep::WakeupResult;
use crate::measure::latency::{Bucket, Latencies};
use crate::output::plot::{color, decade, err, frame};
use plotters::prelude::*;

/// The x axis's labels: the minimum, the percentiles people quote, the
/// maximum; at x = log10(1/(1 - q)), the maximum one decade past 99.99%.
/// 99.99% is labelled only when some curve has enough samples for it.
const LABELS: [(f64, &str); 7] = [
    (0.0, "min"),
    (0.5, "50%"),
    (0.9, "90%"),
    (0.99, "99%"),
    (0.999, "99.9%"),
    (0.9999, "99.99%"),
    (1.0, "max"),
];

/// Where percentile `q` goes on the x axis.
fn x_of(q: f64) -> f64 {
    if q < 1.0 {
        (1.0 / (1.0 - q)).log10()
    } else {
        5.0
    }
}

/// Whether percentile `q` is drawn for a histogram of `samples` round
/// trips (the minimum and the maximum always are).
fn drawn(q: f64, samples: u64) -> bool {
    q == 0.0 || q == 1.0 || crate::output::plot::enough_for(q, samples)
}

/// One curve: its name and its round-trip histogram.
pub struct Curve {
    /// Primitive, placement, and the export's name when several are drawn.
    pub name: String,
    /// The round trips.
    pub histogram: Latencies,
}

impl Curve {
    fn name(primitive: &str, affinity: &str, procs: bool) -> String {
        format!("{primitive} {affinity}{}", if procs { " procs" } else { "" })
    }

    fn of(r: &WakeupResult) -> Self {
        Curve {
            name: Self::name(
                r.point.primitive,
                r.point.affinity.name(),
                r.point.mode == crate::model::Mode::Processes,
            ),
            histogram: Latencies::from_buckets(&r.sample.round_trip.buckets),
        }
    }

    /// The points of a wakeup export (`doc`), named after `source` too
    /// when a figure joins several exports.
    pub fn read(doc: &serde_json::Value, source: Option<&str>) -> Result<Vec<Curve>, String> {
        let points = doc.get("points").and_then(|p| p.as_array()).ok_or("no `points` list")?;
        points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let text = |v: &serde_json::Value| v.as_str().unwrap_or("?").to_string();
                let buckets: Vec<Bucket> =
                    serde_json::from_value(p["sample"]["round_trip"]["buckets"].clone())
                        .map_err(|e| format!("point {i}: sample.round_trip.buckets: {e}"))?;
                let name = Self::name(
                    &text(&p["point"]["primitive"]),
                    &text(&p["point"]["affinity"]),
                    p["point"]["mode"] == "processes",
                );
                Ok(Curve {
                    name: source.map_or(name.clone(), |s| format!("{s}: {name}")),
                    histogram: Latencies::from_buckets(&buckets),
                })
            })
            .collect()
    }
}

/// Draws `results` as an SVG document, with `caption` (the command and
/// the machine) under the figure.
pub fn render(results: &[WakeupResult], caption: &str) -> Result<String, String> {
    let curves: Vec<Curve> = results.iter().map(Curve::of).collect();
    let mut svg = String::new();
    draw(&curves, SVGBackend::with_string(&mut svg, SIZE).into_drawing_area(), None, caption)?;
    Ok(svg)
}

/// The figure's size in pixels.
pub const SIZE: (u32, u32) = (1100, 640);

/// Draws `curves` on `root`, titled `title` (or "Round-trip latency by
/// percentile").
pub fn draw<DB: DrawingBackend>(
    curves: &[Curve],
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: Option<&str>,
    caption: &str,
) -> Result<(), String> {
    if curves.iter().all(|c| c.histogram.is_empty()) {
        return Err("no round trips to draw".into());
    }
    let most = curves.iter().map(|c| c.histogram.len()).max().unwrap_or(0);
    let curves: Vec<(String, Vec<(f64, f64)>)> = curves
        .iter()
        .map(|c| {
            let h = &c.histogram;
            let points = QUANTILES
                .iter()
                .filter(|&&q| drawn(q, h.len()))
                .map(|&q| (x_of(q), (h.quantile(q).max(1) as f64 / 1e3).log10()))
                .collect();
            (c.name.clone(), points)
        })
        .collect();
    let ys = curves.iter().flat_map(|(_, p)| p.iter().map(|&(_, y)| y));
    let (y_lo, y_hi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| (lo.min(y), hi.max(y)));
    let (y_lo, y_hi) = (y_lo.floor(), y_hi.ceil().max(y_lo.floor() + 1.0));

    let names: Vec<(String, RGBColor)> =
        curves.iter().enumerate().map(|(i, (n, _))| (n.clone(), color(i))).collect();
    let data = frame(&root, title.unwrap_or("Round-trip latency by percentile"), caption, &names)?;
    let mut chart =
        crate::output::plot::chart_on(&data).build_cartesian_2d(-0.1..5.1, y_lo..y_hi).map_err(err)?;
    // plotters places x labels evenly; the percentiles people quote are
    // not even on this axis, so they are drawn here, each on a grid line.
    crate::output::plot::readable(&mut chart.configure_mesh())
        .x_desc("percentile (a tail percentile is drawn from 10 samples beyond it or more)")
        .y_desc("round trip, µs")
        .x_labels(0)
        .disable_x_mesh()
        .y_label_formatter(&|v| decade(*v))
        .draw()
        .map_err(err)?;
    let style = crate::output::plot::axis_font().pos(plotters::style::text_anchor::Pos::new(
        plotters::style::text_anchor::HPos::Center,
        plotters::style::text_anchor::VPos::Top,
    ));
    for (q, text) in LABELS.iter().filter(|(q, _)| drawn(*q, most)) {
        let x = x_of(*q);
        chart
            .draw_series(LineSeries::new([(x, y_lo), (x, y_hi)], BLACK.mix(0.15).stroke_width(1)))
            .map_err(err)?;
        let (px, py) = chart.backend_coord(&(x, y_lo));
        root.draw(&Text::new(text.to_string(), (px, py + 6), style.clone())).map_err(err)?;
    }
    for (i, (_, points)) in curves.into_iter().enumerate() {
        let c = color(i);
        chart.draw_series(LineSeries::new(points.clone(), c.stroke_width(2))).map_err(err)?;
        chart
            .draw_series(points.iter().map(|&(px, py)| Circle::new((px, py), 3, c.filled())))
            .map_err(err)?;
    }
    root.present().map_err(err)
}
