//! Text a program controls, made safe to show: a function name from its
//! DWARF or symbol table, its path and arguments, a module's path can hold
//! any bytes, and an ESC sequence among them, printed raw, clears the
//! screen or retitles the terminal of whoever reads contend's table
//! (root, often). Every control character (C0, DEL, C1) but the newline
//! and the tab (contend's own gnuplot columns; a terminal only moves on),
//! and the bidirectional overrides that reorder what is shown ("Trojan
//! Source"), are written as escapes instead (`\x1b`, `\u{202e}`), on the
//! terminal, in Markdown and in `contend report`'s page. Exports keep the
//! text as it was (JSON escapes it in its own way).

use std::borrow::Cow;

/// Whether `c` must not reach a terminal as it is.
fn hidden(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every control character but `\n` and `\t` escaped.
pub fn text(text: &str) -> Cow<'_, str> {
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if !hidden(c) => out.push(c),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::text;

    #[test]
    fn controls_become_escapes_and_the_rest_stays() {
        assert_eq!(text("lock\nwait µs"), "lock\nwait µs");
        assert!(matches!(text("plain"), std::borrow::Cow::Borrowed(_)));
        assert_eq!(text("f\x1b[2J\x1b]0;owned\x07g"), "f\\x1b[2J\\x1b]0;owned\\x07g");
        assert_eq!(text("a\tb\rc\x7f"), "a\tb\\x0dc\\x7f");
        assert_eq!(text("x\u{9b}31m\u{202e}y"), "x\\u{9b}31m\\u{202e}y");
    }
}
