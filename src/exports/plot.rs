//! `contend plot FILE.json... -o OUT.svg|OUT.png`: figures from one or
//! more exports of one family, drawn after the fact: two machines, two
//! kernels, before and after a change. Lock exports give throughput and
//! fairness against the swept axis, and with `--percentiles` each point's
//! wait to acquire against percentile; wakeup exports give latency against
//! percentile; run exports give each lock's metric with its interval and
//! the top mutexes' waits by percentile. With several exports each series is named after its file.
//! The figures are the ones `--plot` draws during a run (the same code);
//! PNG uses plotters' bitmap backend and the embedded font.

use crate::family::lock::report::plot::{self as lock_plot, Dot};
use crate::family::lock::report::waits::{self as lock_waits, WaitCurve};
use crate::family::program::report::plot::{self as program_plot, ProgramFigure};
use crate::family::wakeup::report::plot::{self as wakeup_plot, Curve};
use crate::model::family::Figure;
use crate::model::SpecError;
use anyhow::Result;
use clap::Args;
use plotters::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `contend plot`.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// Exports of one family (`--export-json` of lock, wakeup or run), one
    /// or more.
    #[arg(required = true, value_name = "FILE.json")]
    pub files: Vec<PathBuf>,
    /// The figure: .svg or .png.
    #[arg(long, short = 'o', value_name = "OUT.svg|OUT.png")]
    pub output: PathBuf,
    /// A short title [default: named after the swept axis].
    #[arg(long)]
    #[arg(value_name = "TEXT")]
    pub title: Option<String>,
    /// Lock exports: draw each point's wait to acquire against
    /// percentile (a reader-writer lock's reads and writes apart) in
    /// place of throughput against the swept axis; the export must have
    /// timed its acquisitions (--latency-every).
    #[arg(long)]
    pub percentiles: bool,
}

/// The output format, from the file name.
enum Form {
    Svg,
    Png,
}

fn form(path: &Path) -> Result<Form, SpecError> {
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("svg") => Ok(Form::Svg),
        Some("png") => Ok(Form::Png),
        _ => Err(SpecError(format!("-o {}: name the figure .svg or .png", path.display()))),
    }
}

/// An export's command and machine, as a figure's caption.
pub fn export_caption(doc: &Value) -> String {
    let env = &doc["environment"];
    let argv: Vec<&str> =
        env["command_line"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    crate::output::results::caption(
        &argv,
        env["cpus_online"].as_u64().unwrap_or(0),
        env["kernel"].as_str().unwrap_or("?"),
    )
}

/// What one export holds, ready to draw.
pub(crate) enum Points {
    Lock(Vec<Dot>),
    LockWaits(Vec<WaitCurve>),
    Wakeup(Vec<Curve>),
    Program(ProgramFigure),
}

/// The figure of export `doc` as its family draws it (None: the family
/// has none), its series named after `source` too when a figure joins
/// several exports; with `percentiles`, a lock export's waits by
/// percentile (wakeup's figure is by percentile already; a run export's
/// is refused).
pub(crate) fn figure_of(
    doc: &Value,
    source: Option<&str>,
    percentiles: bool,
) -> Result<Option<Points>, String> {
    let family = crate::exports::families::of(doc)?;
    Ok(match family.figure {
        Some(Figure::Throughput) if percentiles => Some(Points::LockWaits(lock_waits::read(doc, source)?)),
        Some(Figure::Throughput) => Some(Points::Lock(Dot::read(doc, source)?)),
        Some(Figure::Latency) => Some(Points::Wakeup(Curve::read(doc, source)?)),
        Some(Figure::Program) if percentiles => {
            return Err(format!(
                "--percentiles draws the waits of lock exports (and wakeup's figure is by percentile \
                 already); a `{}` export has its own figure",
                family.name
            ))
        }
        Some(Figure::Program) => Some(Points::Program(ProgramFigure::read(doc, source)?)),
        None => None,
    })
}

/// Reads one export: its points (for `percentiles`, a lock export's
/// waits by percentile), and its command and machine in words.
fn read(path: &Path, source: Option<&str>, percentiles: bool) -> Result<(Points, String)> {
    let doc = crate::exports::reader::read_export(path)?;
    let bad = |e: String| SpecError(format!("{}: {e}", path.display()));
    let figure = figure_of(&doc, source, percentiles).map_err(bad)?;
    let points = figure.ok_or_else(|| {
        SpecError(format!(
            "{}: a `{}` export has no figure; contend plot draws lock, wakeup and run exports (its table \
             is in `contend report`)",
            path.display(),
            doc["family"].as_str().unwrap_or("?")
        ))
    })?;
    let caption = export_caption(&doc);
    Ok((points, caption))
}

impl Points {
    /// The family's figure, for a message.
    fn kind(&self) -> &'static str {
        match self {
            Points::Lock(_) => "lock",
            Points::LockWaits(_) => "lock wait",
            Points::Wakeup(_) => "wakeup",
            Points::Program(_) => "run",
        }
    }

    /// Joins `other` (of the same kind) to these.
    fn join(&mut self, other: Points) -> Result<(), SpecError> {
        match (self, other) {
            (Points::Lock(a), Points::Lock(b)) => a.extend(b),
            (Points::LockWaits(a), Points::LockWaits(b)) => a.extend(b),
            (Points::Wakeup(a), Points::Wakeup(b)) => a.extend(b),
            (Points::Program(a), Points::Program(b)) => a.extend(b),
            (a, b) => {
                return Err(SpecError(format!(
                    "{} and {} exports make different figures: plot them apart",
                    a.kind(),
                    b.kind()
                )))
            }
        }
        Ok(())
    }

    pub(crate) fn is_empty(&self) -> bool {
        match self {
            Points::Lock(d) => d.is_empty(),
            Points::LockWaits(c) => c.is_empty(),
            Points::Wakeup(c) => c.is_empty(),
            Points::Program(f) => f.locks.is_empty(),
        }
    }

    /// Its size in pixels.
    pub(crate) fn size(&self) -> (u32, u32) {
        match self {
            Points::Lock(d) => lock_plot::size(d),
            Points::LockWaits(_) => lock_waits::SIZE,
            Points::Wakeup(_) => wakeup_plot::SIZE,
            Points::Program(_) => program_plot::SIZE,
        }
    }

    /// Draws it on `root`.
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: DrawingArea<DB, plotters::coord::Shift>,
        title: Option<&str>,
        caption: &str,
    ) -> Result<(), String> {
        match self {
            Points::Lock(d) => lock_plot::draw(d, root, title, caption),
            Points::LockWaits(c) => lock_waits::draw(c, root, title, caption),
            Points::Wakeup(c) => wakeup_plot::draw(c, root, title, caption),
            Points::Program(f) => program_plot::draw(f, root, title, caption),
        }
    }
}

/// Draws the figure `args` asks for.
pub fn run(args: &PlotArgs) -> Result<()> {
    let form = form(&args.output)?;
    // Checked before the exports are read: an unwritable -o is a usage
    // error (exit 2) like every other export's.
    let sink = crate::output::sink::Sink::open("-o", &args.output)?;
    // Reading and drawing own nothing and may take long on a big export:
    // Ctrl-C ends them as it would any program. The file is written after,
    // with the signals blocked again, whole or not at all.
    let image = crate::session::signals::interruptible(|| figure(args, form))?;
    sink.write_bytes(&image)
}

/// The figure's bytes, an SVG document or a PNG file, drawn in memory.
fn figure(args: &PlotArgs, form: Form) -> Result<Vec<u8>> {
    let several = args.files.len() > 1;
    let mut all: Option<Points> = None;
    let mut captions = Vec::new();
    for path in &args.files {
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        let (points, caption) = read(path, if several { name.as_deref() } else { None }, args.percentiles)?;
        match &mut all {
            None => all = Some(points),
            Some(all) => all.join(points)?,
        }
        captions.push(match (several, name) {
            (true, Some(n)) => format!("{n}: {caption}"),
            _ => caption,
        });
    }
    let points = all.filter(|p| !p.is_empty());
    let points = points.ok_or_else(|| SpecError("the exports hold no points to draw".into()))?;
    let caption = captions.join("; ");
    let title = args.title.as_deref();
    let size = points.size();
    match form {
        Form::Svg => {
            let mut svg = String::new();
            let area = SVGBackend::with_string(&mut svg, size).into_drawing_area();
            points.draw(area, title, &caption).map_err(anyhow::Error::msg)?;
            Ok(svg.into_bytes())
        }
        Form::Png => {
            let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
            let area = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
            points.draw(area, title, &caption).map_err(anyhow::Error::msg)?;
            let image = image::RgbImage::from_raw(size.0, size.1, rgb)
                .ok_or_else(|| anyhow::anyhow!("the bitmap does not match its size"))?;
            let mut png = std::io::Cursor::new(Vec::new());
            image.write_to(&mut png, image::ImageOutputFormat::Png)?;
            Ok(png.into_inner())
        }
    }
}
