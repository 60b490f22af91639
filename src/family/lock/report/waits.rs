//! `contend plot --percentiles` of a lock export: the wait to acquire
//! against percentile, a curve per point (a reader-writer lock's point
//! gives two in one colour: its writes solid, its reads dashed), on the
//! chart wakeup's round trips use (output::percentiles).

use crate::family::lock::report::dot::{pooled_wait, Dot};
use crate::family::lock::report::plot::point_names;
use crate::measure::latency::Latencies;
use crate::output::percentiles::{Line, Percentiles};
use plotters::prelude::*;

/// One curve: a point's name and its waits, pooled over its runs.
pub struct WaitCurve {
    /// The lock and what differs between the points.
    pub name: String,
    /// The timed waits.
    pub histogram: Latencies,
    /// Dashed for a reader-writer lock's reads, solid otherwise.
    pub line: Line,
}

/// The curves of a lock export (`doc`), named after `source` too when a
/// figure joins several exports. Points that timed nothing give none;
/// an export where none did is refused, saying why.
pub fn read(doc: &serde_json::Value, source: Option<&str>) -> Result<Vec<WaitCurve>, String> {
    let dots = Dot::read(doc, source)?;
    let points = doc["points"].as_array().ok_or("no `points` list")?;
    let mut curves = Vec::new();
    for ((name, dot), p) in point_names(&dots).into_iter().zip(&dots).zip(points) {
        let parts: Vec<(&[&str], Line)> = if dot.read_pct.is_some() {
            vec![(&["rw", "write_wait"], Line::Solid), (&["rw", "read_wait"], Line::Dashed)]
        } else {
            vec![(&["acquire_latency", "distribution"], Line::Solid)]
        };
        for (at, line) in parts {
            if let Some(histogram) = pooled_wait(p, at).filter(|h| !h.is_empty()) {
                curves.push(WaitCurve { name: name.clone(), histogram, line });
            }
        }
    }
    if curves.is_empty() {
        return Err("no timed waits to draw: the export was made with --latency-every off, or its \
                    windows timed none"
            .into());
    }
    Ok(curves)
}

/// The figure's size in pixels.
pub const SIZE: (u32, u32) = (1100, 640);

/// Draws `curves` on `root`, titled `title` (or "Wait to acquire by
/// percentile").
pub fn draw<DB: DrawingBackend>(
    curves: &[WaitCurve],
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: Option<&str>,
    caption: &str,
) -> Result<(), String> {
    let curves: Vec<(String, &Latencies, Line)> =
        curves.iter().map(|c| (c.name.clone(), &c.histogram, c.line)).collect();
    let rw = curves.iter().any(|(_, _, line)| *line == Line::Dashed);
    let y_desc = if rw { "wait to acquire, µs (writes; reads dashed)" } else { "wait to acquire, µs" };
    let chart = Percentiles { what: "timed waits", y_desc };
    chart.draw(&curves, root, title.unwrap_or("Wait to acquire by percentile"), caption)
}
