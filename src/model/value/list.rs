//! Comma lists: `1,10,100` becomes a sweep axis.

/// A comma list given to one flag: each list flag is one sweep axis.
#[derive(Debug, Clone, PartialEq)]
pub struct List<T>(pub Vec<T>);

/// Splits `text` on commas and parses each element with `parse`, naming the
/// element that failed. Empty elements (`1,,2`, a trailing comma) are
/// refused.
pub fn parse_list<T>(text: &str, parse: impl Fn(&str) -> Result<T, String>) -> Result<Vec<T>, String> {
    text.split(',')
        .map(|item| {
            let item = item.trim();
            if item.is_empty() {
                return Err(format!("empty element in list `{text}`"));
            }
            parse(item)
        })
        .collect()
}

/// Parses a sweep axis: a comma list (as [`parse_list`]) whose values
/// must all differ. A repeated value would run the same point twice with
/// nothing in the output to tell the rows apart; values are compared
/// after parsing, so `1us,1000ns` is caught too.
pub fn parse_axis<T: PartialEq>(
    text: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<List<T>, String> {
    let values = parse_list(text, parse)?;
    let raw: Vec<&str> = text.split(',').map(str::trim).collect();
    for (j, v) in values.iter().enumerate() {
        if let Some(i) = values[..j].iter().position(|u| u == v) {
            return Err(format!(
                "`{}` repeats `{}` in `{text}`: the values of a list must differ \
                 (to measure a point more often, raise --runs)",
                raw[j], raw[i]
            ));
        }
    }
    Ok(List(values))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::value::parse_count;

    #[test]
    fn lists_expand_in_order() {
        assert_eq!(parse_list("1,10,100", parse_count), Ok(vec![1, 10, 100]));
        assert_eq!(parse_list(" 4 ", parse_count), Ok(vec![4]));
        assert_eq!(parse_list("4, 8", parse_count), Ok(vec![4, 8]));
    }

    #[test]
    fn an_axis_refuses_a_value_twice() {
        assert!(parse_axis("1,2,3", parse_count).is_ok());
        let e = parse_axis("2, 4,2", parse_count).unwrap_err();
        assert!(e.contains("`2` repeats `2`"), "{e}");
        let e = parse_axis("1us,1000ns", crate::model::value::parse_nanos).unwrap_err();
        assert!(e.contains("`1000ns` repeats `1us`"), "{e}");
    }

    #[test]
    fn empty_and_bad_elements_are_refused() {
        assert!(parse_list("1,,2", parse_count).unwrap_err().contains("empty element"));
        assert!(parse_list("1,", parse_count).unwrap_err().contains("empty element"));
        assert!(parse_list("", parse_count).is_err());
        assert!(parse_list("1,x", parse_count).unwrap_err().contains("`x`"));
    }
}
