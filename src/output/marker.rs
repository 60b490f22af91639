//! How a series is told apart in a figure: a colour of the palette and,
//! past the palette's seven, a marker shape (circle, square, triangle,
//! diamond, cross), so 35 series are each drawn and named in the legend
//! their own way instead of seven colours recycled. [`Marker`] is a
//! plotters element that draws a shape at one point, in chart or pixel
//! coordinates, filled (a solid line's) or hollow (a dashed line's).

use plotters::element::{Drawable, PointCollection};
use plotters::style::{Color, RGBColor, ShapeStyle};
use plotters_backend::{BackendCoord, DrawingBackend, DrawingErrorKind};

/// Okabe and Ito's colour-blind-safe palette, without its yellow (too
/// pale on white); after seven series the marker shape changes.
const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 0, 0),       // black
];

/// A marker's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mark {
    Circle,
    Square,
    Triangle,
    Diamond,
    Cross,
}

const MARKS: [Mark; 5] = [Mark::Circle, Mark::Square, Mark::Triangle, Mark::Diamond, Mark::Cross];

/// A series' look: its colour and its marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Style {
    pub(crate) colour: RGBColor,
    pub(crate) mark: Mark,
}

/// How many series have a look of their own.
pub(crate) const DISTINCT: usize = PALETTE.len() * MARKS.len();

/// The look of series `i`: the palette's colours in turn, with the next
/// marker shape each time they come round (repeating past [`DISTINCT`]).
pub(crate) fn style(i: usize) -> Style {
    Style { colour: PALETTE[i % PALETTE.len()], mark: MARKS[(i / PALETTE.len()) % MARKS.len()] }
}

/// A marker at one point.
pub(crate) struct Marker<C> {
    at: C,
    style: Style,
    filled: bool,
}

impl<C> Marker<C> {
    /// A filled marker (on a solid line) or a hollow one (on a dashed
    /// line) in `style` at `at`.
    pub(crate) fn new(at: C, style: Style, filled: bool) -> Self {
        Self { at, style, filled }
    }
}

impl<'a, C> PointCollection<'a, C> for &'a Marker<C> {
    type Point = &'a C;
    type IntoIter = std::iter::Once<&'a C>;
    fn point_iter(self) -> Self::IntoIter {
        std::iter::once(&self.at)
    }
}

impl<C, DB: DrawingBackend> Drawable<DB> for Marker<C> {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        mut points: I,
        backend: &mut DB,
        _: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let Some((x, y)) = points.next() else { return Ok(()) };
        let c = self.style.colour;
        let line: ShapeStyle = c.stroke_width(1);
        let paint: ShapeStyle = if self.filled { c.filled() } else { line };
        let r = 4;
        let outline = |backend: &mut DB, corners: Vec<BackendCoord>| {
            if self.filled {
                backend.fill_polygon(corners, &paint)
            } else {
                let mut closed = corners.clone();
                closed.push(corners[0]);
                backend.draw_path(closed, &line)
            }
        };
        match self.style.mark {
            Mark::Circle => backend.draw_circle((x, y), 3, &paint, self.filled),
            Mark::Square => backend.draw_rect((x - 3, y - 3), (x + 3, y + 3), &paint, self.filled),
            Mark::Triangle => outline(backend, vec![(x, y - r), (x + r, y + r - 1), (x - r, y + r - 1)]),
            Mark::Diamond => outline(backend, vec![(x, y - r), (x + r, y), (x, y + r), (x - r, y)]),
            Mark::Cross => {
                // A cross has no inside: two strokes, heavier when filled.
                let stroke: ShapeStyle = c.stroke_width(if self.filled { 2 } else { 1 });
                backend.draw_line((x - r, y - r), (x + r, y + r), &stroke)?;
                backend.draw_line((x - r, y + r), (x + r, y - r), &stroke)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_palette_has_no_pale_yellow() {
        for c in super::PALETTE {
            let plotters::style::RGBColor(r, g, b) = c;
            // Relative luminance proxy: nothing near white.
            assert!(u32::from(r) + u32::from(g) + u32::from(b) < 600, "{c:?}");
        }
    }

    #[test]
    fn every_series_up_to_the_limit_looks_different() {
        let looks: Vec<_> = (0..super::DISTINCT).map(super::style).collect();
        for (i, a) in looks.iter().enumerate() {
            assert!(looks[..i].iter().all(|b| b != a), "series {i} repeats an earlier look");
        }
        assert_eq!(super::DISTINCT, 35);
        assert_eq!(super::style(0).mark, super::Mark::Circle, "the first seven keep their circles");
    }
}
