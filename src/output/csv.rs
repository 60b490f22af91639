//! `--export-csv` for every family: the RFC 4180 writer (a header row and
//! one row per result, quoted where a field needs it) and one file per
//! family saying which rows.

/// Quotes a field if it contains a comma, a quote or a line break.
fn field(f: &str) -> String {
    if f.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", f.replace('"', "\"\""))
    } else {
        f.to_string()
    }
}

/// Renders `header` and `rows` as CSV text.
pub fn render<S: AsRef<str>>(header: &[&str], rows: impl IntoIterator<Item = Vec<S>>) -> String {
    let line = |fields: Vec<String>| fields.join(",") + "\n";
    let mut out = line(header.iter().map(|h| field(h)).collect());
    for row in rows {
        out += &line(row.iter().map(|f| field(f.as_ref())).collect());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_only_when_needed() {
        let text = render(&["a", "b"], [vec!["1", "x,y"], vec!["say \"hi\"", "line\nbreak"]]);
        assert_eq!(text, "a,b\n1,\"x,y\"\n\"say \"\"hi\"\"\",\"line\nbreak\"\n");
    }
}
