//! Latency against percentile, HdrHistogram style, for any family with
//! latency histograms (wakeup's round trips, lock's waits to acquire):
//! the x axis is 1/(1 - percentile) on a log scale, so 90%, 99%, 99.9%
//! and 99.99% are evenly spaced and the tail gets the room; the y axis is
//! log µs. A tail percentile is drawn only with enough samples beyond it
//! (output::plot::TAIL_SAMPLES).

use crate::measure::latency::Latencies;
use crate::output::marker::{style, Marker, Style, DISTINCT};
use crate::output::plot::{decade, err, frame};
use plotters::prelude::*;

/// The percentiles a curve passes through (where it has the samples).
pub const QUANTILES: [f64; 11] = [0.0, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9995, 0.9999, 1.0];

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

/// Whether percentile `q` is drawn for a histogram of `samples` values
/// (the minimum and the maximum always are).
fn drawn(q: f64, samples: u64) -> bool {
    q == 0.0 || q == 1.0 || crate::output::plot::enough_for(q, samples)
}

/// How a curve is drawn: solid, or dashed beside a solid one of the same
/// name (a reader-writer lock's reads beside its writes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// A solid line with filled markers.
    Solid,
    /// A dashed line with hollow markers.
    Dashed,
}

/// A curve ready to draw: its look, its line, its (x, log y) points.
type Drawn = (Style, Line, Vec<(f64, f64)>);

/// A percentile figure: what its samples are and the y axis's name.
pub struct Percentiles {
    /// The samples, plural, for the empty-figure message ("round trips").
    pub what: &'static str,
    /// The y axis's name, with its unit ("round trip, µs").
    pub y_desc: &'static str,
}

impl Percentiles {
    /// Draws one curve per histogram on `root`. Curves of one name share
    /// a colour and a legend entry (a solid one and a dashed one).
    pub fn draw<DB: DrawingBackend>(
        &self,
        curves: &[(String, &Latencies, Line)],
        root: DrawingArea<DB, plotters::coord::Shift>,
        title: &str,
        caption: &str,
    ) -> Result<(), String> {
        if curves.iter().all(|(_, h, _)| h.is_empty()) {
            return Err(format!("no {} to draw", self.what));
        }
        let most = curves.iter().map(|(_, h, _)| h.len()).max().unwrap_or(0);
        let mut legend: Vec<String> = Vec::new();
        for (name, _, _) in curves {
            if !legend.contains(name) {
                legend.push(name.clone());
            }
        }
        if legend.len() > DISTINCT {
            return Err(format!(
                "{} series in one figure: past {DISTINCT} they cannot be told apart (colour and marker); \
                 plot fewer exports at once, or export fewer points",
                legend.len()
            ));
        }
        let style_of = |name: &str| style(legend.iter().position(|n| n == name).unwrap_or(0));
        let curves: Vec<Drawn> = curves
            .iter()
            .map(|(name, h, line)| {
                let points = QUANTILES
                    .iter()
                    .filter(|&&q| !h.is_empty() && drawn(q, h.len()))
                    .map(|&q| (x_of(q), (h.quantile(q).max(1) as f64 / 1e3).log10()))
                    .collect();
                (style_of(name), *line, points)
            })
            .collect();
        let ys = curves.iter().flat_map(|(_, _, p)| p.iter().map(|&(_, y)| y));
        let (y_lo, y_hi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| (lo.min(y), hi.max(y)));
        let (y_lo, y_hi) = (y_lo.floor(), y_hi.ceil().max(y_lo.floor() + 1.0));

        let names: Vec<(String, Style)> = legend.iter().map(|n| (n.clone(), style_of(n))).collect();
        let data = frame(&root, title, caption, &names)?;
        let mut chart = crate::output::plot::chart_on(&data)
            .build_cartesian_2d(-0.1..5.1, crate::output::plot::span(y_lo..y_hi))
            .map_err(err)?;
        // plotters places x labels evenly; the percentiles people quote
        // are not even on this axis, so they are drawn here, each on a
        // grid line.
        crate::output::plot::readable(&mut chart.configure_mesh())
            .x_desc("percentile (a tail percentile is drawn from 10 samples beyond it or more)")
            .y_desc(self.y_desc)
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
        for (s, line, points) in curves {
            let markers = points.clone();
            let c = s.colour;
            match line {
                Line::Solid => {
                    chart.draw_series(LineSeries::new(points, c.stroke_width(2))).map_err(err)?;
                }
                Line::Dashed => {
                    chart.draw_series(DashedLineSeries::new(points, 6, 4, c.stroke_width(2))).map_err(err)?;
                }
            }
            let filled = line == Line::Solid;
            chart.draw_series(markers.iter().map(|&p| Marker::new(p, s, filled))).map_err(err)?;
        }
        root.present().map_err(err)
    }
}
