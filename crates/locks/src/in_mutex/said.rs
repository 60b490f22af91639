//! What the interposer says to `contend run` besides its exit report: the
//! lines it writes to the program's stderr, and what it notes without
//! disturbing the program. Each is one file in the execution's directory,
//! `said.<pid>.tsv` (then `said.<pid>.<k>.tsv`), written at the moment it
//! is said, because a fault may end the process before any report: one
//! line, `fault<TAB>text` or `note<TAB>text`.
//!
//! A **fault** means the program cannot go on as it would under glibc's
//! mutex (the interposer ended it, or one of its threads waits for memory
//! the lock needs): `contend run` makes that execution's point a failed
//! one, with no ratio. A **note** is said and counted, and the run stands
//! (the reserve of lock nodes was used).
//!
//! Defined here, writer and reader together, as the report is
//! ([`super::report`]); the writer allocates nothing.

use std::fmt::{self, Write};

/// The file name's first word.
pub const PREFIX: &str = "said";

/// How grave a line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gravity {
    /// The execution failed because of the interposer.
    Fault,
    /// Worth saying; the execution stands.
    Note,
}

impl Gravity {
    fn word(self) -> &'static str {
        match self {
            Gravity::Fault => "fault",
            Gravity::Note => "note",
        }
    }
}

/// Writes one said line (tabs and newlines in `text` become spaces, so it
/// stays one line).
pub fn write(out: &mut impl Write, gravity: Gravity, text: &str) -> fmt::Result {
    out.write_str(gravity.word())?;
    out.write_char('\t')?;
    for c in text.chars() {
        out.write_char(if c == '\t' || c == '\n' || c == '\r' { ' ' } else { c })?;
    }
    out.write_char('\n')
}

/// Reads a said file back.
pub fn parse(text: &str) -> Result<(Gravity, String), String> {
    let line = text.strip_suffix('\n').unwrap_or(text);
    let (word, rest) = line.split_once('\t').ok_or_else(|| format!("not a said line: {line:?}"))?;
    let gravity = match word {
        "fault" => Gravity::Fault,
        "note" => Gravity::Note,
        other => return Err(format!("unknown gravity {other:?}")),
    };
    if rest.contains('\n') {
        return Err("more than one line".into());
    }
    Ok((gravity, rest.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_reads_back_as_one_line() {
        let mut s = String::new();
        write(&mut s, Gravity::Fault, "a thread\twaits\nfor memory").unwrap();
        assert_eq!(parse(&s).unwrap(), (Gravity::Fault, "a thread waits for memory".to_string()));
        let mut n = String::new();
        write(&mut n, Gravity::Note, "3 nodes").unwrap();
        assert_eq!(parse(&n).unwrap().0, Gravity::Note);
        assert!(parse("panic\tx\n").is_err());
        assert!(parse("fault x").is_err());
        assert!(parse("fault\tx\ny\n").is_err());
    }
}
