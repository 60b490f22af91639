//! The panels of `contend lock`'s figure (plot.rs lays it out): critical
//! sections per second with their intervals on top, Jain's fairness index
//! below, and, when waits were timed, the wait to acquire at the bottom
//! on a log scale.

use super::dot::Dot;
use crate::output::marker::{style, Marker};
use crate::output::plot::{err, pieces, span, value_label};
use plotters::prelude::*;

/// The wait panel's height, px.
pub(super) const WAIT_PANEL: u32 = 300;

pub(super) type Series<'a> = [(String, Vec<&'a Dot>)];

/// The x axis: its name, where a point sits on it, and how its ticks are
/// labelled.
pub(super) struct Ticks<'a> {
    pub(super) name: &'static str,
    pub(super) x: &'a dyn Fn(&Dot) -> f64,
    pub(super) labels: &'a dyn Fn(f64) -> String,
    pub(super) count: usize,
}

/// Every x at which any series has a point: where a series lacks one,
/// its line breaks ([`pieces`]).
fn measured_at(series: &Series, x: &dyn Fn(&Dot) -> f64) -> Vec<f64> {
    series.iter().flat_map(|(_, p)| p.iter().map(|d| x(d))).collect()
}

/// Throughput above, fairness below.
pub(super) fn panels<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    xs: std::ops::Range<f64>,
    series: &Series,
    ticks: &Ticks,
) -> Result<(), String> {
    let x = ticks.x;
    let measured = measured_at(series, x);
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
        .x_desc(ticks.name)
        .x_labels(ticks.count)
        .x_label_formatter(&|v| (ticks.labels)(*v))
        .y_desc(format!(
            "cs/s, thousands ({})",
            crate::output::plot::intervals(
                series.iter().flat_map(|(_, p)| p.iter()).any(|r| r.ci95.is_some())
            )
        ))
        .y_label_formatter(&|v| value_label(*v))
        .draw()
        .map_err(err)?;
    for (i, (_, points)) in series.iter().enumerate() {
        let s = style(i);
        let c = s.colour;
        let line: Vec<(f64, f64)> = points.iter().map(|r| (x(r), thousands(r.mean))).collect();
        for piece in pieces(&line, &measured) {
            chart.draw_series(LineSeries::new(piece, c.stroke_width(2))).map_err(err)?;
        }
        chart.draw_series(line.iter().map(|&p| Marker::new(p, s, true))).map_err(err)?;
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
        .x_desc(ticks.name)
        .x_labels(ticks.count)
        .x_label_formatter(&|v| (ticks.labels)(*v))
        .y_desc("Jain index")
        .y_labels(3)
        .y_label_formatter(&|v| value_label(*v))
        .draw()
        .map_err(err)?;
    for (i, (_, points)) in series.iter().enumerate() {
        let s = style(i);
        let c = s.colour;
        let line: Vec<(f64, f64)> = points.iter().map(|r| (x(r), r.jain)).collect();
        for piece in pieces(&line, &measured) {
            fair.draw_series(LineSeries::new(piece, c.stroke_width(2))).map_err(err)?;
        }
        fair.draw_series(line.iter().map(|&p| Marker::new(p, s, true))).map_err(err)?;
    }
    match wait_area {
        Some(wait_area) => wait_panel(&wait_area, fair.x_range(), series, ticks, &measured),
        None => Ok(()),
    }
}

/// The wait to acquire, log µs, per series: p99 solid, p50 dashed; with
/// reader-writer points, writes' p99 solid and reads' dashed. `measured`:
/// every x a series has a point at ([`measured_at`]).
fn wait_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    xs: std::ops::Range<f64>,
    series: &Series,
    ticks: &Ticks,
    measured: &[f64],
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
        .x_desc(ticks.name)
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
        let s = style(i);
        let c = s.colour;
        let solid: Vec<(f64, f64)> =
            points.iter().filter_map(|d| Some((x(d), log(d.wait_lines(rw).1?)))).collect();
        for piece in pieces(&solid, measured) {
            chart.draw_series(LineSeries::new(piece, c.stroke_width(2))).map_err(err)?;
        }
        chart.draw_series(solid.iter().map(|&p| Marker::new(p, s, true))).map_err(err)?;
        let dashed: Vec<(f64, f64)> =
            points.iter().filter_map(|d| Some((x(d), log(d.wait_lines(rw).0?)))).collect();
        for piece in pieces(&dashed, measured) {
            chart.draw_series(DashedLineSeries::new(piece, 6, 4, c.stroke_width(2))).map_err(err)?;
        }
        chart.draw_series(dashed.iter().map(|&p| Marker::new(p, s, false))).map_err(err)?;
    }
    Ok(())
}
