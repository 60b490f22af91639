//! The nearest known name to a mistyped one (`Futex` → `futex`, `tcmaloc`
//! → `tcmalloc`), for the errors that list what is known.

/// The candidate `typed` most likely meant: one equal but for case, else
/// the closest within a small edit distance (two edits, or one for names
/// of four characters or fewer, where two would reach unrelated names).
pub fn nearest<'a>(typed: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let typed = typed.trim();
    let lower = typed.to_lowercase();
    let candidates: Vec<&str> = candidates.into_iter().collect();
    if let Some(&same) = candidates.iter().find(|c| c.to_lowercase() == lower) {
        return Some(same);
    }
    let limit = if typed.chars().count() <= 4 { 1 } else { 2 };
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(&lower, &c.to_lowercase()), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// ` (did you mean `NAME`?)` for the nearest candidate, or nothing.
pub fn did_you_mean<'a>(typed: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    nearest(typed, candidates).map_or(String::new(), |n| format!(" (did you mean `{n}`?)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_then_edits() {
        let locks = ["futex", "futex2", "tas", "ttas", "parking_lot"];
        assert_eq!(nearest("Futex", locks), Some("futex"));
        assert_eq!(nearest("parking-lot", locks), Some("parking_lot"));
        assert_eq!(nearest("tass", locks), Some("tas"));
        assert_eq!(nearest("qwerty", locks), None);
        assert_eq!(nearest("tcmaloc", ["glibc", "tcmalloc", "jemalloc"]), Some("tcmalloc"));
        assert_eq!(did_you_mean("xyz", locks), "");
    }
}
