//! What this library says, and to whom: a fault goes to the program's
//! stderr (as any library's complaint would) and, with a note, into the
//! execution's directory, where `contend run` reads it
//! ([`locks::in_mutex::said`] defines the file). Nothing here allocates:
//! a fault may be said from inside the program's allocator (jemalloc's
//! fork handler) or from a thread waiting for memory.

use locks::in_mutex::said::{self, Gravity};
use std::fmt::Write;

/// A line built in place, cut at its capacity.
struct Line {
    buf: [u8; 512],
    len: usize,
}

impl Write for Line {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        for &b in s.as_bytes() {
            if self.len == self.buf.len() {
                break;
            }
            self.buf[self.len] = b;
            self.len += 1;
        }
        Ok(())
    }
}

impl Line {
    fn new() -> Self {
        Line { buf: [0; 512], len: 0 }
    }
    /// The text so far (cut at its capacity, perhaps mid-character: the
    /// valid prefix).
    fn text(&self) -> &str {
        let bytes = &self.buf[..self.len];
        match std::str::from_utf8(bytes) {
            Ok(s) => s,
            // SAFETY: `valid_up_to` bytes are valid UTF-8 by its definition.
            Err(e) => unsafe { std::str::from_utf8_unchecked(&bytes[..e.valid_up_to()]) },
        }
    }
}

/// Writes all of `bytes` to `fd`, as far as the kernel takes them.
fn write_all(fd: libc::c_int, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: a valid buffer of that length.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n <= 0 {
            return;
        }
        bytes = &bytes[n as usize..];
    }
}

/// Says `text` (`contend-interpose: ` is put in front): a fault also on
/// stderr.
pub fn say(gravity: Gravity, text: &str) {
    let mut l = Line::new();
    let _ = write!(l, "contend-interpose: {text}");
    if gravity == Gravity::Fault {
        write_all(2, l.text().as_bytes());
        write_all(2, b"\n");
    }
    let Some(dir) = crate::rundir::open() else { return };
    // SAFETY: getpid cannot fail.
    let pid = unsafe { libc::getpid() };
    let fd = crate::rundir::create(dir, said::PREFIX, pid);
    // SAFETY: closes the directory `rundir::open` opened.
    unsafe { libc::close(dir) };
    let Some(fd) = fd else { return };
    let mut out = Line::new();
    let _ = said::write(&mut out, gravity, l.text());
    write_all(fd, out.text().as_bytes());
    // SAFETY: closes the file just created.
    unsafe { libc::close(fd) };
}

/// Says `text` as a fault and ends the process (status 127, as the loader
/// does for a library it cannot use), without a report: what it would
/// count is cut short, and writing it may need the very decision that
/// failed (the mode, when its environment is wrong).
pub fn die(text: &str) -> ! {
    say(Gravity::Fault, text);
    // SAFETY: exit_group ends every thread of the process, as _exit does,
    // without this library's `_exit` and its report.
    unsafe { libc::syscall(libc::SYS_exit_group, 127) };
    unreachable!("exit_group returned")
}

/// Called once by the node cache when a thread found no lock node
/// anywhere (no page from the kernel, the reserve all held) and waits for
/// memory.
pub fn starved() {
    let (_, _, _, errno) = locks::in_mutex::nodes::counts::read();
    let mut l = Line::new();
    let _ = write!(
        l,
        "a thread waits for memory for a lock node: the kernel refused a page (errno {errno}) and the \
         reserve of {} is all held; the program is stalled until memory frees",
        locks::in_mutex::nodes::RESERVE
    );
    say(Gravity::Fault, l.text());
}

/// At exit: what the node cache had to do beyond its pages, as a note.
pub fn node_notes() {
    let (_, reserve, _, errno) = locks::in_mutex::nodes::counts::read();
    if reserve == 0 {
        return;
    }
    let mut l = Line::new();
    let _ = write!(
        l,
        "{reserve} lock node(s) came from the reserve: the kernel refused a page for them (errno {errno})"
    );
    say(Gravity::Note, l.text());
}
