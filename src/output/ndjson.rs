//! `--export-ndjson`: the JSON document as newline-delimited JSON, for
//! tools that stream records (jq -c, log pipelines, databases). The first
//! line is the header (everything but the points, with `"record":
//! "header"`); then one line per point, each with `"record": "point"`,
//! the family and the schema version, so a line stands on its own.

use anyhow::{anyhow, Result};
use serde_json::Value;

/// Renders `doc` (an export document) as NDJSON.
pub fn render(doc: &Value) -> Result<String> {
    let mut header = doc.as_object().cloned().ok_or_else(|| anyhow!("an export is an object"))?;
    let points = header.remove("points").unwrap_or(Value::Array(Vec::new()));
    header.insert("record".into(), "header".into());
    let mut out = serde_json::to_string(&header)? + "\n";
    for point in points.as_array().into_iter().flatten() {
        let mut line = serde_json::Map::new();
        line.insert("record".into(), "point".into());
        for key in ["schema_version", "family"] {
            line.insert(key.into(), doc[key].clone());
        }
        if let Some(fields) = point.as_object() {
            line.extend(fields.clone());
        }
        out += &(serde_json::to_string(&line)? + "\n");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_header_then_a_line_per_point() {
        let doc = json!({"schema_version": 3, "family": "lock", "spec": {"runs": 2},
                         "points": [{"stats": {"mean": 1.0}}, {"stats": {"mean": 2.0}}]});
        let text = render(&doc).unwrap();
        let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0]["record"], "header");
        assert!(lines[0].get("points").is_none() && lines[0]["spec"]["runs"] == 2);
        assert_eq!(lines[2]["record"], "point");
        assert_eq!(
            (lines[2]["family"].clone(), lines[2]["stats"]["mean"].clone()),
            (json!("lock"), json!(2.0))
        );
    }
}
