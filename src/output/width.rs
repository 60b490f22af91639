//! How wide the terminal is, once per process: the width every table,
//! legend and note is laid out for. The terminal's own width when the
//! output is a terminal (stdout, else stderr, which carries the table when
//! the JSON goes to stdout), else `COLUMNS` (what a pager, `watch` or a
//! script sets), else 100, which is also what the docs' transcripts use.

use std::sync::OnceLock;

/// Without a terminal or `COLUMNS`.
pub const DEFAULT: usize = 100;

/// Below this nothing useful fits (a name and one number column): a
/// narrower terminal gets this width, and wraps.
pub const NARROWEST: usize = 60;

thread_local! {
    /// A width that overrides the terminal's while a file is written.
    static FIXED: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// The width to lay out for.
pub fn get() -> usize {
    static WIDTH: OnceLock<usize> = OnceLock::new();
    if let Some(w) = FIXED.with(std::cell::Cell::get) {
        return w;
    }
    *WIDTH.get_or_init(|| {
        let terminal = terminal_columns(std::io::stdout()).or_else(|| terminal_columns(std::io::stderr()));
        choose(terminal, std::env::var("COLUMNS").ok().as_deref())
    })
}

/// Runs `f` laid out for [`DEFAULT`] whatever the terminal: a file (the
/// Markdown export) reads the same from whichever terminal wrote it.
pub fn for_files<T>(f: impl FnOnce() -> T) -> T {
    let before = FIXED.with(|c| c.replace(Some(DEFAULT)));
    let out = f();
    FIXED.with(|c| c.set(before));
    out
}

/// The width from the terminal's (if any) and `COLUMNS` (if set).
fn choose(terminal: Option<usize>, columns: Option<&str>) -> usize {
    let columns = columns.and_then(|c| c.trim().parse::<usize>().ok()).filter(|&c| c > 0);
    terminal.or(columns).unwrap_or(DEFAULT).max(NARROWEST)
}

/// The columns of the terminal `fd` is, if it is one.
fn terminal_columns(fd: impl std::os::fd::AsFd) -> Option<usize> {
    terminal_size::terminal_size_of(fd).map(|(w, _)| usize::from(w.0)).filter(|&w| w > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_terminal_then_columns_then_the_default() {
        assert_eq!(choose(Some(132), Some("80")), 132);
        assert_eq!(choose(None, Some("80")), 80);
        assert_eq!(choose(None, Some(" 160 ")), 160);
        assert_eq!(choose(None, Some("wide")), DEFAULT);
        assert_eq!(choose(None, Some("0")), DEFAULT);
        assert_eq!(choose(None, None), DEFAULT);
        assert_eq!(choose(Some(20), None), NARROWEST);
    }
}
