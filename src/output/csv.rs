//! `--export-csv` for every family, written by the `csv` crate (RFC 4180
//! quoting, one header row from the row type's field names). Each family
//! defines its row as a serde struct in its `report/csv.rs`: the columns
//! are the struct's fields, so a header cannot drift from its values.
//! Numbers are written unrounded: a CSV is data, the table is for eyes.

use serde::Serialize;

/// Renders `rows` as CSV text. With no rows, the header alone (from
/// `R::default()`), so a reader of an empty sweep still sees the columns.
pub fn render<R: Serialize + Default>(rows: impl IntoIterator<Item = R>) -> String {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut any = false;
    for row in rows {
        any = true;
        // Rows are flat structs of scalars and strings, written to memory:
        // the only failures left are programming errors.
        writer.serialize(row).expect("a CSV row is a flat struct");
    }
    if !any {
        writer.serialize(R::default()).expect("a CSV row is a flat struct");
    }
    let bytes = writer.into_inner().expect("writing to memory cannot fail");
    let text = String::from_utf8(bytes).expect("serde writes UTF-8");
    if any {
        text
    } else {
        text.lines().next().map_or(String::new(), |header| format!("{header}\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Default)]
    struct Row<'a> {
        a: &'a str,
        b: Option<f64>,
    }

    #[test]
    fn fields_are_quoted_only_when_needed() {
        let text = render([Row { a: "x,y", b: Some(1.5) }, Row { a: "say \"hi\"\nthere", b: None }]);
        assert_eq!(text, "a,b\n\"x,y\",1.5\n\"say \"\"hi\"\"\nthere\",\n");
    }

    #[test]
    fn no_rows_still_give_the_header() {
        assert_eq!(render(Vec::<Row>::new()), "a,b\n");
    }
}
