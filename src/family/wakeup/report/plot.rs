//! `contend wakeup --plot`: each point's round-trip distribution as
//! latency against percentile (the chart is output::percentiles').

use crate::family::wakeup::sweep::WakeupResult;
use crate::measure::latency::Latencies;
use crate::output::percentiles::{Line, Percentiles};
use plotters::prelude::*;

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
            histogram: r.sample.round_trip.histogram(),
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
                let histogram =
                    crate::measure::latency::Distribution::from_export(&p["sample"]["round_trip"])
                        .map_err(|e| format!("point {i}: sample.round_trip: {e}"))?;
                let name = Self::name(
                    &text(&p["point"]["primitive"]),
                    &text(&p["point"]["affinity"]),
                    p["point"]["mode"] == "processes",
                );
                Ok(Curve { name: source.map_or(name.clone(), |s| format!("{s}: {name}")), histogram })
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
    let curves: Vec<(String, &Latencies, Line)> =
        curves.iter().map(|c| (c.name.clone(), &c.histogram, Line::Solid)).collect();
    let chart = Percentiles { what: "round trips", y_desc: "round trip, µs" };
    chart.draw(&curves, root, title.unwrap_or("Round-trip latency by percentile"), caption)
}
