//! `contend plot FILE.json... -o OUT.svg|OUT.png`: the lock figure from
//! one or more exports, drawn after the fact: two machines, two kernels,
//! before and after a change. With several exports each series is named
//! after its file. The figure is the one `--plot` draws during a run (the
//! same code); PNG uses plotters' bitmap backend and the embedded font.

use crate::family::lock::report::plot::{draw, Dot, SIZE};
use crate::model::SpecError;
use anyhow::{Context, Result};
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

/// Reads one export: its points, and its command and machine in words.
fn read(path: &Path, source: Option<&str>) -> Result<(Vec<Dot>, String)> {
    let text =
        std::fs::read_to_string(path).map_err(|e| SpecError(format!("reading {}: {e}", path.display())))?;
    let doc: Value =
        serde_json::from_str(&text).map_err(|e| SpecError(format!("{}: not JSON: {e}", path.display())))?;
    match doc.get("family").and_then(Value::as_str) {
        Some("lock") => {}
        Some(other) => {
            return Err(SpecError(format!(
                "{}: a `{other}` export; contend plot draws lock exports (for a wakeup figure, use --plot \
                 on the run)",
                path.display()
            ))
            .into())
        }
        None => return Err(SpecError(format!("{}: not a contend export (no family)", path.display())).into()),
    }
    let dots = Dot::read(&doc, source).map_err(|e| SpecError(format!("{}: {e}", path.display())))?;
    let env = &doc["environment"];
    let argv: Vec<&str> =
        env["command_line"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let caption = crate::output::family::caption(
        &argv,
        env["cpus_online"].as_u64().unwrap_or(0),
        env["kernel"].as_str().unwrap_or("?"),
    );
    Ok((dots, caption))
}

/// Draws the figure `args` asks for.
pub fn run(args: &PlotArgs) -> Result<()> {
    let form = form(&args.output)?;
    let several = args.files.len() > 1;
    let mut dots = Vec::new();
    let mut captions = Vec::new();
    for path in &args.files {
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        let (d, caption) = read(path, if several { name.as_deref() } else { None })?;
        dots.extend(d);
        captions.push(match (several, name) {
            (true, Some(n)) => format!("{n}: {caption}"),
            _ => caption,
        });
    }
    let caption = captions.join("; ");
    let title = args.title.as_deref();
    let out = &args.output;
    match form {
        Form::Svg => {
            let mut svg = String::new();
            draw(&dots, SVGBackend::with_string(&mut svg, SIZE).into_drawing_area(), title, &caption)
                .map_err(anyhow::Error::msg)?;
            std::fs::write(out, svg).with_context(|| format!("writing {}", out.display()))?;
        }
        Form::Png => {
            draw(&dots, BitMapBackend::new(out, SIZE).into_drawing_area(), title, &caption)
                .map_err(anyhow::Error::msg)
                .with_context(|| format!("writing {}", out.display()))?;
        }
    }
    Ok(())
}
