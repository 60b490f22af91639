//! `contend plot FILE.json... -o OUT.svg|OUT.png`: figures from one or
//! more exports of one family, drawn after the fact: two machines, two
//! kernels, before and after a change. Lock exports give throughput and
//! fairness against the swept axis; wakeup exports give latency against
//! percentile. With several exports each series is named after its file.
//! The figures are the ones `--plot` draws during a run (the same code);
//! PNG uses plotters' bitmap backend and the embedded font.

use crate::family::lock::report::plot::{self as lock_plot, Dot};
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
    /// Lock exports (`contend lock --export-json`), one or more.
    #[arg(required = true, value_name = "FILE.json")]
    pub files: Vec<PathBuf>,
    /// The figure: .svg or .png.
    #[arg(long, short = 'o', value_name = "OUT.svg|OUT.png")]
    pub output: PathBuf,
    /// A short title (default: after the swept axis).
    #[arg(long)]
    pub title: Option<String>,
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
enum Points {
    Lock(Vec<Dot>),
    Wakeup(Vec<Curve>),
}

/// Reads one export: its points, and its command and machine in words.
fn read(path: &Path, source: Option<&str>) -> Result<(Points, String)> {
    let doc = crate::exports::reader::read_export(path)?;
    let bad = |e: String| SpecError(format!("{}: {e}", path.display()));
    let family = crate::exports::families::of(&doc).map_err(bad)?;
    let points = match family.figure {
        Some(Figure::Throughput) => Points::Lock(Dot::read(&doc, source).map_err(bad)?),
        Some(Figure::Latency) => Points::Wakeup(Curve::read(&doc, source).map_err(bad)?),
        None => {
            return Err(SpecError(format!(
                "{}: a `{}` export has no figure; contend plot draws lock and wakeup exports (its table \
                 is in `contend report`)",
                path.display(),
                family.name
            ))
            .into())
        }
    };
    let caption = export_caption(&doc);
    Ok((points, caption))
}

/// Draws the figure `args` asks for.
pub fn run(args: &PlotArgs) -> Result<()> {
    let form = form(&args.output)?;
    // Checked before the exports are read: an unwritable -o is a usage
    // error (exit 2) like every other export's.
    let sink = crate::output::sink::Sink::open("-o", &args.output)?;
    let several = args.files.len() > 1;
    let (mut dots, mut curves) = (Vec::new(), Vec::new());
    let mut captions = Vec::new();
    for path in &args.files {
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        let (points, caption) = read(path, if several { name.as_deref() } else { None })?;
        match points {
            Points::Lock(d) => dots.extend(d),
            Points::Wakeup(c) => curves.extend(c),
        }
        captions.push(match (several, name) {
            (true, Some(n)) => format!("{n}: {caption}"),
            _ => caption,
        });
    }
    if dots.is_empty() && curves.is_empty() {
        return Err(SpecError("the exports hold no points to draw".into()).into());
    }
    if !dots.is_empty() && !curves.is_empty() {
        return Err(
            SpecError("lock and wakeup exports make different figures: plot them apart".into()).into()
        );
    }
    let caption = captions.join("; ");
    let title = args.title.as_deref();
    let draw = |file: &mut std::fs::File, out: &Path| -> Result<()> {
        let mut svg = String::new();
        let drawn = match (form, curves.is_empty()) {
            (Form::Svg, true) => lock_plot::draw(
                &dots,
                SVGBackend::with_string(&mut svg, lock_plot::SIZE).into_drawing_area(),
                title,
                &caption,
            ),
            (Form::Svg, false) => wakeup_plot::draw(
                &curves,
                SVGBackend::with_string(&mut svg, wakeup_plot::SIZE).into_drawing_area(),
                title,
                &caption,
            ),
            (Form::Png, true) => lock_plot::draw(
                &dots,
                BitMapBackend::new(out, lock_plot::SIZE).into_drawing_area(),
                title,
                &caption,
            ),
            (Form::Png, false) => wakeup_plot::draw(
                &curves,
                BitMapBackend::new(out, wakeup_plot::SIZE).into_drawing_area(),
                title,
                &caption,
            ),
        };
        drawn.map_err(anyhow::Error::msg)?;
        if !svg.is_empty() {
            use std::io::Write;
            file.write_all(svg.as_bytes())?;
        }
        Ok(())
    };
    sink.write_with(draw)?;
    Ok(())
}
