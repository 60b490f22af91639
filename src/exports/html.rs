//! `contend report FILE.json... -o report.html`: one self-contained HTML
//! page from one or more exports, to publish or mail: per export its
//! command, the machine it ran on, the warnings, the figure (inline SVG,
//! the one `contend plot` draws) and a table of its points. It loads
//! nothing from outside: no scripts, no stylesheets, no fonts, no images
//! by URL.

use crate::model::family::Cell;
use crate::model::SpecError;
use crate::output::number::si;
use anyhow::Result;
use clap::Args;
use plotters::prelude::*;
use serde_json::Value;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// `contend report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Exports (`--export-json`) of any family, one or more.
    #[arg(required = true, value_name = "FILE.json")]
    pub files: Vec<PathBuf>,
    /// The page to write (.html).
    #[arg(long, short = 'o', value_name = "OUT.html")]
    pub output: PathBuf,
    /// The page's title.
    #[arg(long, default_value = "contend report")]
    #[arg(value_name = "TEXT")]
    pub title: String,
}

/// `text` with the five characters HTML gives meaning to escaped.
pub fn escape(text: &str) -> String {
    let text = crate::session::visible::text(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:sans-serif;max-width:1150px;margin:2em auto;padding:0 1em;color:#222}\
figure svg{max-width:100%;height:auto}.wide{overflow-x:auto}\
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #bbb;padding:.2em .5em;text-align:right}\
th{background:#eee}td:first-child,th:first-child{text-align:left}code{background:#f4f4f4;padding:.1em .3em}\
.warn{color:#8a4b00}figure{margin:1em 0}table.summary th,table.summary td{text-align:left}details.warn summary{cursor:pointer}";

/// An HTML table of `header` and `rows` (cells escaped here).
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    // In a box of its own that scrolls sideways: a table wider than a
    // narrow window is scrolled, not cut off with the page.
    let mut out = String::from("<div class=\"wide\"><table><tr>");
    for h in header {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr>");
    for row in rows {
        out.push_str("<tr>");
        for cell in row {
            let _ = write!(out, "<td>{}</td>", escape(cell));
        }
        out.push_str("</tr>");
    }
    out + "</table></div>"
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A point entry's cell in `column`, `doc` being its export.
fn cell(doc: &Value, entry: &Value, column: &crate::model::family::Column) -> String {
    let v = column.path.iter().fold(entry, |v, f| &v[*f]);
    match (column.cell, v.as_f64()) {
        (Cell::Derived(made), _) => made(doc, entry),
        (_, _) if v.is_null() => "-".into(),
        (Cell::Si, Some(x)) => si(x),
        (Cell::Pct, Some(x)) => format!("{x:.1}"),
        (Cell::Fixed(d), Some(x)) => format!("{x:.d$}"),
        (Cell::Micros, Some(ns)) => format!("{:.2}", ns / 1e3),
        (Cell::Work, _) => crate::model::family::work_text(v).unwrap_or_else(|| text(v)),
        _ => text(v),
    }
}

/// The figure and the table of one export's points, as its family
/// describes them.
fn points(doc: &Value, caption: &str) -> Result<(String, String), String> {
    let family = crate::exports::families::of(doc)?;
    let mut svg = String::new();
    let entries = doc["points"].as_array().map(Vec::as_slice).unwrap_or_default();
    if let Some(figure) = crate::exports::plot::figure_of(doc, None, false)?.filter(|f| !f.is_empty()) {
        let area = SVGBackend::with_string(&mut svg, figure.size()).into_drawing_area();
        figure.draw(area, None, caption)?;
    }
    let header: Vec<&str> = family.columns.iter().map(|c| c.header).collect();
    let rows: Vec<Vec<String>> =
        entries.iter().map(|p| family.columns.iter().map(|c| cell(doc, p, c)).collect()).collect();
    let mut tables = table(&header, &rows);
    for d in entries.iter().flat_map(family.details) {
        let _ = write!(tables, "<h3>{}</h3>", escape(&d.title));
        tables += &table(d.header, &d.rows);
    }
    Ok((svg, tables))
}

/// One export's section of the page, `n` its place (the summary links
/// to it by `#export-N`).
fn section(n: usize, path: &Path, doc: &Value) -> Result<String> {
    let env = &doc["environment"];
    let caption = crate::exports::plot::export_caption(doc);
    let (svg, points) = points(doc, &caption).map_err(|e| SpecError(format!("{}: {e}", path.display())))?;
    let mut out = String::new();
    let _ = write!(
        out,
        "<h2 id=\"export-{n}\">{} <small>({})</small></h2>",
        escape(&file_name(path)),
        escape(&text(&doc["family"]))
    );
    let _ = write!(out, "<p><code>{}</code></p>", escape(&caption));
    let facts: Vec<Vec<String>> = [
        "cpu_model",
        "cpus_online",
        "kernel",
        "glibc",
        "clocksource",
        "governor",
        "tool_version",
        "git_hash",
    ]
    .iter()
    .map(|k| vec![(*k).to_string(), text(&env[*k])])
    .collect();
    out += &table(&["environment", ""], &facts);
    if !svg.is_empty() {
        // The SVG as plotters writes it: a document of its own, inlined.
        let body = svg.find("<svg").map_or(svg.as_str(), |i| &svg[i..]);
        let _ = write!(out, "<figure>{body}</figure>");
    }
    out += &points;
    out += &warnings(doc);
    Ok(out)
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or(String::new(), |n| n.to_string_lossy().into_owned())
}

/// The export's warnings, after its figure and tables, grouped by kind
/// and folded: the count by kind shows, the messages open on a click.
fn warnings(doc: &Value) -> String {
    let all = doc["warnings"].as_array().map(Vec::as_slice).unwrap_or_default();
    if all.is_empty() {
        return String::new();
    }
    let groups = crate::exports::summary::by_kind(all);
    let mut out = format!(
        "<details class=\"warn\"><summary>{} warning{}: {}</summary>",
        all.len(),
        if all.len() == 1 { "" } else { "s" },
        escape(&crate::exports::summary::counted(&groups))
    );
    for (kind, ws) in &groups {
        let _ = write!(out, "<h4>{}</h4><ul>", escape(kind));
        for w in ws {
            let point = w["point"].as_str().map_or(String::new(), |p| format!("{p}: "));
            let message = w["message"].as_str().map_or_else(|| text(w), str::to_string);
            let _ = write!(out, "<li>{}</li>", escape(&(point + &message)));
        }
        out.push_str("</ul>");
    }
    out + "</details>"
}

/// The summary at the top: each export's answer and its warnings by
/// kind, linked to its section.
fn summary(docs: &[(PathBuf, Value)]) -> Result<String> {
    let mut rows = String::new();
    for (n, (path, doc)) in docs.iter().enumerate() {
        let answer = crate::exports::summary::answer(doc)
            .map_err(|e| SpecError(format!("{}: {e}", path.display())))?;
        let all = doc["warnings"].as_array().map(Vec::as_slice).unwrap_or_default();
        let warned = crate::exports::summary::counted(&crate::exports::summary::by_kind(all));
        let _ = write!(
            rows,
            "<tr><td><a href=\"#export-{n}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&file_name(path)),
            escape(&text(&doc["family"])),
            escape(&answer),
            escape(&warned)
        );
    }
    Ok(format!(
        "<h2>Summary</h2><div class=\"wide\"><table class=\"summary\"><tr><th>export</th><th>family</th>\
         <th>answer</th><th>warnings</th></tr>{rows}</table></div>"
    ))
}

/// Writes the page `args` asks for.
pub fn run(args: &ReportArgs) -> Result<()> {
    let ext = args.output.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    if !matches!(ext.as_deref(), Some("html" | "htm")) {
        return Err(SpecError(format!("-o {}: name the report .html", args.output.display())).into());
    }
    // Checked before the exports are read: an unwritable -o is a usage
    // error (exit 2) like every other export's.
    let sink = crate::output::sink::Sink::open("-o", &args.output)?;
    // Reading and rendering own nothing and may take long on big exports:
    // Ctrl-C ends them as it would any program. The file is written
    // after, with the signals blocked again, whole or not at all.
    let page = crate::session::signals::interruptible(|| -> Result<String> {
        let mut page = format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{t}</title><style>{STYLE}</style></head>\
             <body><h1>{t}</h1>",
            t = escape(&args.title)
        );
        let docs = args
            .files
            .iter()
            .map(|path| Ok((path.clone(), crate::exports::reader::read_export(path)?)))
            .collect::<Result<Vec<_>>>()?;
        page += &summary(&docs)?;
        for (n, (path, doc)) in docs.iter().enumerate() {
            page += &section(n, path, doc)?;
        }
        page.push_str("</body></html>\n");
        Ok(page)
    })?;
    sink.write(&page)
}

#[cfg(test)]
mod tests {
    #[test]
    fn html_special_characters_are_escaped() {
        assert_eq!(super::escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    }
}
