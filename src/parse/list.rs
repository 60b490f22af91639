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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_count;

    #[test]
    fn lists_expand_in_order() {
        assert_eq!(parse_list("1,10,100", parse_count), Ok(vec![1, 10, 100]));
        assert_eq!(parse_list(" 4 ", parse_count), Ok(vec![4]));
        assert_eq!(parse_list("4, 8", parse_count), Ok(vec![4, 8]));
    }

    #[test]
    fn empty_and_bad_elements_are_refused() {
        assert!(parse_list("1,,2", parse_count)
            .unwrap_err()
            .contains("empty element"));
        assert!(parse_list("1,", parse_count)
            .unwrap_err()
            .contains("empty element"));
        assert!(parse_list("", parse_count).is_err());
        assert!(parse_list("1,x", parse_count).unwrap_err().contains("`x`"));
    }
}
