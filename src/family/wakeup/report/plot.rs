//! `contend wakeup --plot`: each point's round-trip distribution as
//! latency against percentile, HdrHistogram style: the x axis is
//! 1/(1 - percentile) on a log scale, so 90%, 99%, 99.9% and 99.99% are
//! evenly spaced and the tail gets the room; the y axis is log µs.

use crate::family::wakeup::report::gnuplot::QUANTILES;
use crate::family::wakeup::sweep::WakeupResult;
use crate::measure::latency::Latencies;
use crate::output::plot::{color, decade, err, frame};
use plotters::prelude::*;

fn percentile_label(v: f64) -> String {
    match v.round() as i64 {
        0 => "0%".into(),
        1 => "90%".into(),
        2 => "99%".into(),
        3 => "99.9%".into(),
        4 => "99.99%".into(),
        5 => "max".into(),
        _ => String::new(),
    }
}

/// Draws `results` as an SVG document, with `caption` (the command and
/// the machine) under the figure.
pub fn render(results: &[WakeupResult], caption: &str) -> Result<String, String> {
    let mut svg = String::new();
    draw(results, &mut svg, caption)?;
    Ok(svg)
}

fn draw(results: &[WakeupResult], svg: &mut String, caption: &str) -> Result<(), String> {
    let curves: Vec<(String, Vec<(f64, f64)>)> = results
        .iter()
        .map(|r| {
            let h = Latencies::from_buckets(&r.sample.round_trip.buckets);
            let name = format!(
                "{} {}{}",
                r.point.primitive,
                r.point.affinity.name(),
                if r.point.mode == crate::model::Mode::Processes { " procs" } else { "" }
            );
            let points = QUANTILES
                .iter()
                .map(|&q| {
                    let x = if q < 1.0 { (1.0 / (1.0 - q)).log10() } else { 5.0 };
                    (x, (h.quantile(q).max(1) as f64 / 1e3).log10())
                })
                .collect();
            (name, points)
        })
        .collect();
    let ys = curves.iter().flat_map(|(_, p)| p.iter().map(|&(_, y)| y));
    let (y_lo, y_hi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| (lo.min(y), hi.max(y)));
    let (y_lo, y_hi) = (y_lo.floor(), y_hi.ceil().max(y_lo.floor() + 1.0));

    let names: Vec<(String, RGBColor)> =
        curves.iter().enumerate().map(|(i, (n, _))| (n.clone(), color(i))).collect();
    let root = SVGBackend::with_string(svg, (1100, 640)).into_drawing_area();
    let data = frame(&root, "Round-trip latency by percentile", caption, &names)?;
    let mut chart = ChartBuilder::on(&data)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(-0.1..5.1, y_lo..y_hi)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("percentile")
        .y_desc("round trip, µs")
        .x_labels(6)
        .x_label_formatter(&|v| percentile_label(*v))
        .y_label_formatter(&|v| decade(*v))
        .draw()
        .map_err(err)?;
    for (i, (_, points)) in curves.into_iter().enumerate() {
        let c = color(i);
        chart.draw_series(LineSeries::new(points.clone(), c.stroke_width(2))).map_err(err)?;
        chart
            .draw_series(points.iter().map(|&(px, py)| Circle::new((px, py), 3, c.filled())))
            .map_err(err)?;
    }
    root.present().map_err(err)
}
