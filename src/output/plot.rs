//! Figures, drawn with plotters: SVG for `--plot` and `contend plot`, PNG
//! (bitmap backend, with an embedded font) for `contend plot -o X.png`.
//! What every family's figure shares: a colour-blind-safe palette, number
//! labels without a spurious `.0`, categorical positions for swept values
//! (ticks at the data, not at 1-2-5 steps), the legend in a column beside
//! the data, and the full command as a caption under a short title.

use crate::output::marker::{Marker, Style};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::RGBColor;

/// A number as an axis label: `4`, `100`, `2.5`, `0.125`; never `4.0`.
pub(crate) fn value_label(v: f64) -> String {
    if v == v.round() && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        let text = format!("{v:.3}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Distinct swept values drawn at evenly spaced positions 0, 1, 2, ...
/// with a tick and a label at each: what a log axis over 2, 4, 8, 16, 256
/// workers should show, and never a 0 it cannot hold.
pub(crate) struct Categories(Vec<f64>);

impl Categories {
    /// The sorted distinct values of `xs`.
    pub(crate) fn of(xs: impl Iterator<Item = f64>) -> Self {
        let mut v: Vec<f64> = xs.collect();
        v.sort_by(f64::total_cmp);
        v.dedup();
        Categories(v)
    }

    /// The position of value `x`.
    pub(crate) fn at(&self, x: f64) -> f64 {
        self.0.iter().position(|&v| v == x).unwrap_or(0) as f64
    }

    /// The positions' range, with half a step of room at each end.
    pub(crate) fn range(&self) -> std::ops::Range<f64> {
        -0.5..(self.0.len() as f64 - 0.5)
    }

    /// How many ticks to ask for: one per value.
    pub(crate) fn count(&self) -> usize {
        self.0.len()
    }

    /// The label at a tick position: the value there, or nothing between.
    pub(crate) fn label(&self, pos: f64) -> String {
        let i = pos.round();
        if (pos - i).abs() > 1e-6 || i < 0.0 {
            return String::new();
        }
        self.0.get(i as usize).map_or(String::new(), |&v| value_label(v))
    }
}

/// "1", "10", "1K", "100K" for a log10 axis position.
pub(crate) fn decade(v: f64) -> String {
    let x = 10f64.powf(v);
    let text = if x >= 1e6 {
        format!("{:.0}M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.0}K", x / 1e3)
    } else {
        value_label((x * 1000.0).round() / 1000.0)
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

/// Registers the one font every figure uses, DejaVu Sans, embedded in
/// the binary (the dejavu crate): a PNG drawn on a fresh machine with no
/// fonts installed has its text, and SVG and PNG measure text alike.
pub(crate) fn fonts() -> Result<(), String> {
    static REGISTERED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
                .map_err(|_| "drawing the plot: the embedded font could not be read".to_string())
        })
        .clone()
}

/// How wide the legend column beside the data is at least, pixels; a
/// longer name widens it, up to [`LEGEND_MAX_SHARE`] of the figure.
pub(crate) const LEGEND_WIDTH: u32 = 230;
/// The largest share of the figure's width the legend may take.
const LEGEND_MAX_SHARE: f64 = 0.4;

/// The legend column's width for `series`: room for the longest name at
/// the legend's 14.5 px type (about 9 px a character in the PNG's
/// DejaVu Sans, the wider of the two renderings), within bounds.
fn legend_width(series: &[(String, Style)], figure_width: u32) -> u32 {
    let longest = series.iter().map(|(n, _)| n.chars().count()).max().unwrap_or(0) as u32;
    let wanted = 48 + 9 * longest;
    wanted.clamp(LEGEND_WIDTH, (f64::from(figure_width) * LEGEND_MAX_SHARE) as u32)
}

/// What an axis says of its error bars: that they are 95% intervals, or,
/// when no point had the two runs an interval needs, that there are none
/// (an axis promising intervals with none drawn reads as "no spread").
pub(crate) fn intervals(any_drawn: bool) -> &'static str {
    if any_drawn {
        "95% intervals"
    } else {
        "one run: no interval"
    }
}

/// A series' line cut where it has no value at an x that the figure has
/// (`xs`: every x any series was measured at): a point that was not
/// measured (a sweep interrupted, a point that failed, a percentile with
/// too few samples) leaves a gap instead of a line drawn across it, which
/// would read as a measurement. Each piece is drawn as a line of its own;
/// a piece of one point is its marker alone.
pub(crate) fn pieces(line: &[(f64, f64)], xs: &[f64]) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    for (i, &p) in line.iter().enumerate() {
        let skipped = i > 0 && {
            let (a, b) = (line[i - 1].0.min(p.0), line[i - 1].0.max(p.0));
            xs.iter().any(|&x| x > a && x < b)
        };
        match out.last_mut() {
            Some(piece) if !skipped => piece.push(p),
            _ => out.push(vec![p]),
        }
    }
    out
}

/// The samples a figure needs beyond a percentile before it draws it: a
/// p99.99 from 6,000 samples would be the second largest sample, not a
/// percentile (ten beyond: p99.99 needs 100,000, p99 1,000).
pub(crate) const TAIL_SAMPLES: f64 = 10.0;

/// Whether `samples` are enough to draw percentile `q` (see
/// [`TAIL_SAMPLES`]; the tolerance keeps 100 × (1 − 0.9) at 10).
pub(crate) fn enough_for(q: f64, samples: u64) -> bool {
    samples as f64 * (1.0 - q) >= TAIL_SAMPLES - 1e-6
}

/// The type of tick labels and axis names: 16 px in the SVG (plotters
/// writes a size of N as N/1.24 px), so that a figure shown at half its
/// width (the HTML report on a narrow window, a slide) still has 8 px
/// text.
pub(crate) fn axis_font() -> TextStyle<'static> {
    ("sans-serif", 20).into_font().color(&BLACK)
}

/// `r` as a range plotters can draw: finite and not empty. Plotters'
/// search for tick positions never ends on an infinite or NaN range (a
/// panel with nothing to draw, e.g. no p99 with enough waits above it,
/// made `contend plot` spin forever), so every chart's ranges pass here.
pub(crate) fn span(r: std::ops::Range<f64>) -> std::ops::Range<f64> {
    match (r.start.is_finite(), r.end.is_finite()) {
        (true, true) if r.end > r.start => r,
        (true, _) => r.start..r.start + 1.0,
        (false, true) => r.end - 1.0..r.end,
        (false, false) => 0.0..1.0,
    }
}

/// A chart on `area` with the room every figure gives its axes: the
/// label areas fit [`axis_font`]'s ticks and names.
pub(crate) fn chart_on<'a, 'b, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
) -> ChartBuilder<'a, 'b, DB> {
    let mut builder = ChartBuilder::on(area);
    builder.margin(12).x_label_area_size(52).y_label_area_size(84);
    builder
}

/// A chart's mesh with its ticks and axis names in [`axis_font`].
pub(crate) fn readable<'m, 'a, 'b, X, Y, DB>(
    mesh: &'m mut plotters::chart::MeshStyle<'a, 'b, X, Y, DB>,
) -> &'m mut plotters::chart::MeshStyle<'a, 'b, X, Y, DB>
where
    X: plotters::coord::ranged1d::Ranged<ValueType: std::fmt::Debug>,
    Y: plotters::coord::ranged1d::Ranged<ValueType: std::fmt::Debug>,
    DB: DrawingBackend,
{
    mesh.label_style(axis_font()).axis_desc_style(axis_font())
}

/// The caption's lines: the whole command, wrapped at spaces to lines of
/// `chars` characters (never cut: a command cut short cannot be rerun),
/// at most `lines` of them; a longer one ends with the words that fit and
/// says how many characters were left out.
pub(crate) fn caption_lines(caption: &str, chars: usize, lines: usize) -> Vec<String> {
    let options = textwrap::Options::new(chars.max(20)).word_splitter(textwrap::WordSplitter::NoHyphenation);
    let mut wrapped: Vec<String> =
        textwrap::wrap(caption, &options).into_iter().map(|l| l.into_owned()).collect();
    if wrapped.len() > lines && lines > 0 {
        // The note takes the end of the last line, which is cut to leave
        // it room: a figure's caption never runs past its edge.
        let note = |left: usize| format!(" [+{left} characters: see the export's command]");
        let before: usize = wrapped[..lines - 1].iter().map(|l| l.chars().count() + 1).sum();
        let room = chars.max(20).saturating_sub(note(caption.chars().count()).chars().count());
        let last: String = wrapped[lines - 1].chars().take(room).collect();
        let left = caption.chars().count().saturating_sub(before + last.chars().count());
        wrapped.truncate(lines - 1);
        wrapped.push(format!("{last}{}", note(left)));
    }
    wrapped
}

/// Lays out a figure on `root`: a short `title` on top, the full command
/// (`caption`) in small type at the bottom, and the legend column at the
/// right. Returns the area left for the data.
pub(crate) fn frame<'a, DB: DrawingBackend + 'a>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    caption: &str,
    series: &[(String, Style)],
) -> Result<DrawingArea<DB, Shift>, String> {
    fonts()?;
    root.fill(&WHITE).map_err(err)?;
    let (w, h) = root.dim_in_pixel();
    let (head, rest) = root.split_vertically(34);
    head.draw(&Text::new(title.to_string(), (12, 8), ("sans-serif", 24).into_font().color(&BLACK)))
        .map_err(err)?;
    // The command, whole, in up to three lines of 13 px type (16 to
    // plotters; about 7.5 px a character).
    let lines = caption_lines(caption, (w as usize).saturating_sub(24) * 2 / 15, 3);
    let (body, foot) = rest.split_vertically(h.saturating_sub(34 + 14 + 18 * lines.len() as u32));
    for (i, line) in lines.into_iter().enumerate() {
        let at = (12, 8 + 18 * i as i32);
        foot.draw(&Text::new(line, at, ("sans-serif", 16).into_font().color(&RGBColor(80, 80, 80))))
            .map_err(err)?;
    }
    let (data, legend) = body.split_horizontally(w.saturating_sub(legend_width(series, w)));
    // 22 px an entry while they fit the figure's height, closer (to 12
    // px, in smaller type) when there are many; past that the entries run
    // off the bottom, and a figure with that many series refuses first.
    let room = legend.dim_in_pixel().1.saturating_sub(40) as usize;
    let step = (room / series.len().max(1)).clamp(12, 22) as i32;
    let size = (step - 4).min(18);
    for (i, (name, s)) in series.iter().enumerate() {
        let y = 30 + step * i as i32;
        legend.draw(&PathElement::new(vec![(8, y), (32, y)], s.colour.stroke_width(3))).map_err(err)?;
        legend.draw(&Marker::new((20, y), *s, true)).map_err(err)?;
        legend
            .draw(&Text::new(
                name.clone(),
                (40, y - size / 2 + 2),
                ("sans-serif", size).into_font().color(&BLACK),
            ))
            .map_err(err)?;
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_line_breaks_where_a_point_was_not_measured() {
        let xs = [1.0, 2.0, 4.0, 8.0];
        let whole = [(1.0, 5.0), (2.0, 6.0), (4.0, 7.0), (8.0, 8.0)];
        assert_eq!(super::pieces(&whole, &xs), vec![whole.to_vec()]);
        let gap = [(1.0, 5.0), (2.0, 6.0), (8.0, 8.0)];
        assert_eq!(super::pieces(&gap, &xs), vec![vec![(1.0, 5.0), (2.0, 6.0)], vec![(8.0, 8.0)]]);
        assert_eq!(super::pieces(&[], &xs), Vec::<Vec<(f64, f64)>>::new());
    }

    #[test]
    fn a_span_is_finite_and_never_empty() {
        assert_eq!(super::span(1.0..3.0), 1.0..3.0);
        assert_eq!(super::span(2.0..2.0), 2.0..3.0);
        assert_eq!(super::span(f64::INFINITY..f64::INFINITY), 0.0..1.0);
        assert_eq!(super::span(f64::NAN..f64::NAN), 0.0..1.0);
        assert_eq!(super::span(f64::NEG_INFINITY..5.0), 4.0..5.0);
        assert_eq!(super::span(3.0..f64::NAN), 3.0..4.0);
    }

    use super::*;

    #[test]
    fn labels_have_no_spurious_decimals() {
        assert_eq!(value_label(4.0), "4");
        assert_eq!(value_label(100000.0), "100000");
        assert_eq!(value_label(2.5), "2.5");
        assert_eq!(value_label(0.125), "0.125");
        assert_eq!(decade(3.0), "1K");
        assert_eq!(decade(0.0), "1");
        assert_eq!(decade(-1.0), "0.1");
        assert_eq!(decade(0.5), "");
    }

    #[test]
    fn categories_put_a_tick_at_every_value_and_none_between() {
        let c = Categories::of([16.0, 2.0, 256.0, 4.0, 2.0].into_iter());
        assert_eq!(c.count(), 4);
        assert_eq!((c.at(2.0), c.at(256.0)), (0.0, 3.0));
        assert_eq!(c.label(3.0), "256");
        assert_eq!(c.label(1.5), "");
        assert_eq!(c.label(-1.0), "");
        assert_eq!(c.range(), -0.5..3.5);
    }

    #[test]
    fn a_caption_is_wrapped_whole_not_cut() {
        let cmd = "contend lock --lock futex,pthread --threads 2,4,8 --hold 1us --idle sleep:50us --runs 5";
        let lines = caption_lines(cmd, 40, 3);
        assert!(lines.len() > 1 && lines.iter().all(|l| l.chars().count() <= 40), "{lines:?}");
        assert_eq!(lines.join(" "), cmd, "every word kept, commas and all");
        let long = caption_lines(&"--flag ".repeat(40), 60, 2);
        assert_eq!(long.len(), 2);
        assert!(long[1].ends_with("characters: see the export's command]"), "{long:?}");
        assert!(long[1].starts_with("--flag"), "the last line keeps text before the note: {long:?}");
        assert!(long.iter().all(|l| l.chars().count() <= 60), "the note fits the width: {long:?}");
        let told: usize = long[1].split("[+").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
        let shown: usize = long[0].chars().count() + 1 + long[1].split(" [+").next().unwrap().chars().count();
        assert_eq!(shown + told, "--flag ".repeat(40).chars().count(), "the count says what was left out");
    }

    #[test]
    fn the_legend_widens_for_long_names_within_bounds() {
        let named = |n: usize| vec![("x".repeat(n), crate::output::marker::style(0))];
        assert_eq!(legend_width(&named(5), 1100), LEGEND_WIDTH);
        assert_eq!(legend_width(&named(30), 1100), 48 + 9 * 30);
        assert_eq!(legend_width(&named(400), 1100), 440);
    }
}
