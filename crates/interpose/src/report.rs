//! What the interposer tells `contend run`: at exit, one file per process,
//! `$CONTEND_RUN_DIR/interpose.<pid>.tsv`, tab-separated lines (format
//! version 1):
//!
//! ```text
//! contend-interpose  1
//! pid                <pid>
//! lock               <the swapped lock, or pthread>
//! profile            0 | 1
//! to_glibc           <acquisitions a swapped process sent to glibc>
//! inits              <swapped> <recursive> <errorcheck> <robust> <pi/pp> <pshared>
//! mutex              <address> <kind> <acquisitions> <contended> <try failed>
//!                    <wait ns> <max wait ns> <p50 wait ns> <p99 wait ns>
//!                    <holds> <hold ns> <site> <module> <module base>
//!                    <symbol> <symbol address>     (one line each, with --profile)
//! ```
//!
//! Its existence is the proof that the preload took effect. Written by a
//! destructor, or by this library's `_exit` for programs that end with it
//! (dash); a process killed by a signal writes none (`contend run` says
//! so). Without `CONTEND_RUN_DIR` nothing is written. A vfork child that
//! calls `_exit` through the PLT reports its parent's profile as its own
//! (vfork shares the memory); glibc's posix_spawn calls its internal
//! `_exit` and writes nothing.

use crate::mutex::{to_glibc, INITS};
use crate::profile::{Record, SLOTS, TABLE};
use std::fmt::Write as _;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;

/// Says `msg` on stderr and ends the process: the interposer cannot go on
/// (the program would misbehave silently).
pub fn die(msg: &str) -> ! {
    let line = format!("{msg}\n");
    // SAFETY: writes a valid buffer to fd 2, then ends the process without
    // running destructors that might lock the mutexes being interposed.
    unsafe {
        libc::write(2, line.as_ptr() as *const libc::c_void, line.len());
        libc::_exit(127)
    }
}

/// Runs when the library is loaded: decides the mode (if no earlier
/// pthread call did), and with a profile, makes a forked child start its
/// own. Here and not on the first call, because pthread_atfork allocates,
/// and the first call may come from inside the program's allocator.
extern "C" fn loaded() {
    if crate::mode::current().profiling() {
        // SAFETY: registers a plain function with no preparation or parent
        // handler; it touches only the static table.
        unsafe { libc::pthread_atfork(None, None, Some(crate::profile::clear_in_child)) };
    }
}

#[used]
#[unsafe(link_section = ".init_array")]
static LOADED: extern "C" fn() = loaded;

#[used]
#[unsafe(link_section = ".fini_array")]
static EXITING: extern "C" fn() = exiting;

/// A file written through a fixed buffer: no allocation, because the
/// report is written while the process exits (its allocator may be gone,
/// or be the mutex user being reported) and from `_exit`, which a vfork
/// child may call with its parent's heap.
struct Sink {
    fd: libc::c_int,
    buf: [u8; 4096],
    len: usize,
}

impl Sink {
    fn flush(&mut self) {
        let mut done = 0;
        while done < self.len {
            // SAFETY: writes initialized bytes of `buf` to an open fd.
            let n = unsafe { libc::write(self.fd, self.buf[done..].as_ptr().cast(), self.len - done) };
            if n <= 0 {
                break;
            }
            done += n as usize;
        }
        self.len = 0;
    }

    fn bytes(&mut self, b: &[u8]) {
        for chunk in b.chunks(self.buf.len()) {
            if self.len + chunk.len() > self.buf.len() {
                self.flush();
            }
            self.buf[self.len..self.len + chunk.len()].copy_from_slice(chunk);
            self.len += chunk.len();
        }
    }
}

impl std::fmt::Write for Sink {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.bytes(s.as_bytes());
        Ok(())
    }
}

/// A C string from the loader, with tabs and newlines (the format's
/// separators) shown as spaces; `-` when absent.
fn text(out: &mut Sink, p: *const libc::c_char) {
    if p.is_null() {
        let _ = out.write_str("-");
        return;
    }
    // SAFETY: dladdr's strings are NUL-terminated and live.
    for &b in unsafe { std::ffi::CStr::from_ptr(p) }.to_bytes() {
        out.bytes(&[if b == b'\t' || b == b'\n' { b' ' } else { b }]);
    }
}

fn mutex_line(out: &mut Sink, r: &Record) {
    let site = r.site.load(Relaxed);
    let _ = write!(
        out,
        "mutex\t{:#x}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:#x}\t",
        r.key.load(Relaxed),
        r.kind.load(Relaxed),
        r.acquisitions.load(Relaxed),
        r.contended.load(Relaxed),
        r.try_failed.load(Relaxed),
        r.wait_ns.load(Relaxed),
        r.max_wait_ns.load(Relaxed),
        r.wait_quantile(0.5),
        r.wait_quantile(0.99),
        r.holds.load(Relaxed),
        r.hold_ns.load(Relaxed),
        site,
    );
    // SAFETY: plain data for dladdr to fill.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // The return address is after the call: look up the call itself.
    // SAFETY: dladdr only reads the loader's tables; `info` is valid.
    let found = site != 0 && unsafe { libc::dladdr((site - 1) as *const libc::c_void, &mut info) } != 0;
    if found {
        text(out, info.dli_fname);
        let _ = write!(out, "\t{:#x}\t", info.dli_fbase as usize);
        text(out, info.dli_sname);
        let _ = writeln!(out, "\t{:#x}", info.dli_saddr as usize);
    } else {
        let _ = writeln!(out, "-\t0x0\t-\t0x0");
    }
}

/// Writes this process's report, once.
fn report() {
    static DONE: AtomicBool = AtomicBool::new(false);
    if DONE.swap(true, Relaxed) {
        return;
    }
    // SAFETY: NUL-terminated name; getenv's result lives with the process.
    let dir = unsafe { libc::getenv(c"CONTEND_RUN_DIR".as_ptr()) };
    if dir.is_null() {
        return;
    }
    // SAFETY: getpid cannot fail.
    let pid = unsafe { libc::getpid() };
    // The path, built in a stack buffer.
    let mut path = [0u8; 4096];
    // SAFETY: `dir` is a NUL-terminated string from the environment.
    let dir = unsafe { std::ffi::CStr::from_ptr(dir) }.to_bytes();
    let name = {
        let mut n = [0u8; 48];
        let mut w = std::io::Cursor::new(&mut n[..]);
        let _ = std::io::Write::write_fmt(&mut w, format_args!("/interpose.{pid}.tsv"));
        let len = w.position() as usize;
        (n, len)
    };
    if dir.len() + name.1 + 1 > path.len() {
        return;
    }
    path[..dir.len()].copy_from_slice(dir);
    path[dir.len()..dir.len() + name.1].copy_from_slice(&name.0[..name.1]);
    // SAFETY: `path` is NUL-terminated (zero-filled beyond what was copied).
    let fd = unsafe {
        libc::open(
            path.as_ptr().cast(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC,
            0o644,
        )
    };
    if fd < 0 {
        return;
    }
    let mut out = Sink { fd, buf: [0; 4096], len: 0 };
    let mode = crate::mode::current();
    let _ = writeln!(out, "contend-interpose\t1");
    let _ = writeln!(out, "pid\t{pid}");
    let _ = writeln!(out, "lock\t{}", mode.swap().name());
    let _ = writeln!(out, "profile\t{}", u8::from(mode.profiling()));
    let _ = writeln!(out, "to_glibc\t{}", to_glibc());
    let _ = write!(out, "inits\t{}", INITS.swapped.load(Relaxed));
    for g in &INITS.glibc {
        let _ = write!(out, "\t{}", g.load(Relaxed));
    }
    let _ = writeln!(out);
    if mode.profiling() {
        // A forked child keeps its parent's keys with the counts zeroed:
        // only what this process did is reported.
        let used = |r: &&Record| r.acquisitions.load(Relaxed) != 0 || r.try_failed.load(Relaxed) != 0;
        for r in TABLE[..SLOTS].iter().filter(|r| r.key.load(Relaxed) != 0).filter(used) {
            mutex_line(&mut out, r);
        }
        if TABLE[SLOTS].acquisitions.load(Relaxed) != 0 {
            // Mutexes beyond the table, together (address 0).
            mutex_line(&mut out, &TABLE[SLOTS]);
        }
    }
    out.flush();
    // SAFETY: closes the fd opened above.
    unsafe { libc::close(fd) };
}

extern "C" fn exiting() {
    report();
}

/// `_exit`: programs that end with it (dash does, and forked children
/// that fail to exec) skip the library destructors, so the report is
/// written here first. glibc's own `exit` reaches `_exit` internally,
/// not through this symbol, and the report is written once either way.
///
/// # Safety
/// As `_exit(2)`.
#[unsafe(no_mangle)]
pub extern "C" fn _exit(status: libc::c_int) -> ! {
    report();
    // SAFETY: exit_group ends every thread of the process, as _exit does.
    unsafe { libc::syscall(libc::SYS_exit_group, status) };
    unreachable!("exit_group returned")
}

/// `_Exit`: the same as [`_exit`].
#[unsafe(no_mangle)]
pub extern "C" fn _Exit(status: libc::c_int) -> ! {
    _exit(status)
}
