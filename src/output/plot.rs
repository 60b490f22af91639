//! `--plot FILE.svg`: the results drawn with plotters (SVG backend, text
//! left to the viewer's fonts, so no font library is needed to build).
//! One file per family.

use plotters::style::{Palette, Palette99, RGBColor};

/// The colour of series `i`.
pub(crate) fn color(i: usize) -> RGBColor {
    let (r, g, b) = Palette99::COLORS[i % Palette99::COLORS.len()];
    RGBColor(r, g, b)
}

/// "1", "10", "1K", "100K" for a log10 axis position.
pub(crate) fn decade(v: f64) -> String {
    let x = 10f64.powf(v);
    let text = if x >= 1e6 {
        format!("{:.0}M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.0}K", x / 1e3)
    } else {
        format!("{x:.0}")
    };
    // Only whole decades get labels; the rest would be unreadable.
    if (v - v.round()).abs() < 1e-6 {
        text
    } else {
        String::new()
    }
}

/// Lower and upper bounds with a margin, never an empty range.
pub(crate) fn padded(lo: f64, hi: f64, margin: f64) -> (f64, f64) {
    if hi > lo {
        let m = (hi - lo) * margin;
        (lo - m, hi + m)
    } else {
        (lo - 1.0, hi + 1.0)
    }
}

pub(crate) fn err(e: impl std::fmt::Display) -> String {
    format!("drawing the plot: {e}")
}
