//! What the interposer tells `contend run`: at exit, one file per process,
//! `$CONTEND_RUN_DIR/interpose.<pid>.tsv`, in the format defined once in
//! [`locks::in_mutex::report`] (written here, read by contend through the
//! same module). The directory is checked against `CONTEND_RUN_DIR_ID` and
//! the file created with O_EXCL|O_NOFOLLOW, mode 0600, so that nobody else
//! can redirect the write (src/family/program/scratch.rs says why each
//! check is there).
//!
//! Written by a destructor, or by this library's `_exit` for programs that
//! end with it (dash); a process killed by a signal, or one that leaves by
//! a raw exit_group (Go's runtime), writes none. So that `contend run` can
//! still tell "loaded, but no report" from "never loaded" (a static or
//! set-uid program), the library's constructor leaves an empty
//! `loaded.<pid>.tsv` beside it in every process it enters by exec. As
//! root, the constructor also makes the (empty) report file then, and the
//! report is written through it at exit, so that a server that drops root
//! still reports (`rundir::prepare_report`); one left empty is no report.
//! Without `CONTEND_RUN_DIR` and its identity nothing is written. A vfork
//! child that calls `_exit` through the PLT reports its parent's profile
//! as its own (vfork shares the memory); glibc's posix_spawn calls its
//! internal `_exit` and writes nothing.

use crate::mutex::INITS;
use crate::profile::{Record, SLOTS};
use crate::rwlock::{Record as RwRecord, SLOTS as RW_SLOTS};
use crate::stack::Frames;
use locks::in_mutex::report::{
    write_delayed, write_first, write_frame, write_header, write_holder, write_mutex, write_parked,
    write_rwlock, write_site, write_sped, write_stack, write_unattributed, write_waits, Inits, ReportSink,
    ReportedCounts, RwCounts, SideCounts,
};
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;

/// Runs when the library is loaded: decides the mode (if no earlier
/// pthread call did), and with a profile, makes a forked child start its
/// own. Here and not on the first call, because pthread_atfork allocates,
/// and the first call may come from inside the program's allocator.
extern "C" fn loaded() {
    // SAFETY: registers a plain function with no preparation or parent
    // handler; it touches only static tables.
    unsafe { libc::pthread_atfork(None, None, Some(in_child)) };
    locks::in_mutex::nodes::on_starved(crate::say::starved);
    mark_loaded();
    crate::rundir::prepare_report();
}

/// A forked child counts from zero: its parent reports what came before.
extern "C" fn in_child() {
    crate::tally::clear_in_child();
    crate::delay::clear_in_child();
    crate::speedup::clear_in_child();
    if crate::mode::current().profiling() {
        crate::profile::clear_in_child();
        crate::rwlock::clear_in_child();
    }
}

/// Leaves `loaded.<pid>.tsv` in the run's directory: the proof that the
/// preload took effect in this process even if it never writes a report
/// (a Go program leaves by a raw exit_group, skipping every destructor).
fn mark_loaded() {
    let Some(dir) = crate::rundir::open() else { return };
    // SAFETY: getpid cannot fail.
    let pid = unsafe { libc::getpid() };
    if let Some(fd) = crate::rundir::create(dir, "loaded", pid) {
        // SAFETY: closes the empty file just created.
        unsafe { libc::close(fd) };
    }
    // SAFETY: closes the directory opened by `rundir::open`.
    unsafe { libc::close(dir) };
}

#[used]
#[unsafe(link_section = ".init_array")]
static LOADED: extern "C" fn() = loaded;

#[used]
#[unsafe(link_section = ".fini_array")]
static EXITING: extern "C" fn() = exiting;

/// This process's name, read from /proc/self/comm into `buf` (the
/// kernel's limit is 15 bytes and a newline); empty if it cannot be read.
fn comm(buf: &mut [u8; 16]) -> &[u8] {
    // SAFETY: a NUL-terminated literal path; the fd is closed below.
    let fd = unsafe { libc::open(c"/proc/self/comm".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return &[];
    }
    // SAFETY: reads at most the buffer's length into it.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    // SAFETY: an fd this function opened.
    unsafe { libc::close(fd) };
    let n = usize::try_from(n).unwrap_or(0);
    buf[..n].strip_suffix(b"\n").unwrap_or(&buf[..n])
}

/// A file written through a fixed buffer: no allocation, because the
/// report is written while the process exits (its allocator may be gone,
/// or be the mutex user being reported) and from `_exit`, which a vfork
/// child may call with its parent's heap.
struct Sink {
    fd: libc::c_int,
    buf: [u8; 4096],
    len: usize,
    /// Where the report's addresses are.
    modules: &'static crate::modules::Modules,
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

impl ReportSink for Sink {
    fn raw(&mut self, b: &[u8]) {
        self.bytes(b);
    }
}

fn mutex_line(out: &mut Sink, r: &Record) {
    let site = r.site.load(Relaxed);
    let counts = ReportedCounts {
        address: r.key() as u64,
        kind: r.kind.load(Relaxed),
        acquisitions: r.hot.acquisitions.load(Relaxed),
        contended: r.contended.load(Relaxed),
        try_failed: r.try_failed.load(Relaxed),
        cond_waits: r.cond_waits.load(Relaxed),
        wait_ns: r.wait_ns.load(Relaxed),
        max_wait_ns: r.max_wait_ns.load(Relaxed),
        p50_wait_ns: r.wait_quantile(0.5),
        p99_wait_ns: r.wait_quantile(0.99),
        holds: r.hot.holds.load(Relaxed),
        hold_ns: r.hot.hold_ns.load(Relaxed),
        site: site as u64,
    };
    let module = out.modules.find(site);
    let _ = write_mutex(out, &counts, module, None);
    first_stack(out, counts.address, &r.first_stack);
    for kept in r.sites.iter().filter(|s| s.first() != 0) {
        let _ = write_site(out, counts.address);
        frames(out, kept);
    }
    for st in r.stacks.iter().filter(|st| st.count.load(Relaxed) != 0) {
        let _ = write_stack(out, counts.address, st.count.load(Relaxed), st.wait_ns.load(Relaxed));
        frames(out, &st.frames);
    }
    let other = r.other_stacks.load(Relaxed);
    if other != 0 {
        let _ = write_stack(out, counts.address, other, r.other_stacks_wait_ns.load(Relaxed));
    }
    for h in r.holders.iter().filter(|h| h.releases.load(Relaxed) != 0) {
        let (n, held, caused) =
            (h.releases.load(Relaxed), h.held_ns.load(Relaxed), h.caused_ns.load(Relaxed));
        let _ = write_holder(out, counts.address, n, held, caused);
        frames(out, &h.frames);
    }
    let [n, held, caused] = r.other_holders.each_ref().map(|c| c.load(Relaxed));
    if n != 0 || caused != 0 {
        let _ = write_holder(out, counts.address, n, held, caused);
    }
    if counts.contended != 0 {
        let _ = write_waits(out, counts.address, r.wait_buckets());
    }
    let unattributed = r.unattributed_ns.load(Relaxed);
    if unattributed != 0 {
        let _ = write_unattributed(out, counts.address, unattributed);
    }
    let parked = r.parked.load(Relaxed);
    if parked != 0 {
        let _ = write_parked(out, counts.address, parked, r.parked_wait_ns.load(Relaxed));
    }
}

/// A rwlock's or spinlock's line, and its first stack.
fn rwlock_line(out: &mut Sink, r: &RwRecord) {
    let side = |s: &crate::rwlock::Side| SideCounts {
        acquisitions: s.acquisitions.load(Relaxed),
        contended: s.contended.load(Relaxed),
        try_failed: s.try_failed.load(Relaxed),
        wait_ns: s.wait_ns.load(Relaxed),
        max_wait_ns: s.max_wait_ns.load(Relaxed),
    };
    let site = r.site.load(Relaxed);
    let counts = RwCounts {
        address: r.key.load(Relaxed) as u64,
        spin: r.kind.load(Relaxed) == crate::rwlock::SPINLOCK,
        read: side(&r.read),
        write: side(&r.write),
        site: site as u64,
    };
    let module = out.modules.find(site);
    let _ = write_rwlock(out, &counts, module, None);
    first_stack(out, counts.address, &r.first_stack);
}

/// A lock's first stack, if it has one.
fn first_stack(out: &mut Sink, address: u64, stack: &Frames) {
    if stack.first() != 0 {
        let _ = write_first(out, address);
        frames(out, stack);
    }
}

/// The frame lines of a stack.
fn frames(out: &mut Sink, stack: &Frames) {
    for frame in stack.load() {
        let module = out.modules.find(frame);
        let _ = write_frame(out, frame as u64, module, None);
    }
}

/// Writes this process's report, once.
fn report() {
    static DONE: AtomicBool = AtomicBool::new(false);
    if DONE.swap(true, Relaxed) {
        return;
    }
    // Decided before any file is opened: a mode that cannot be decided
    // ends the process with a line on fd 2, which a program that closed
    // its stderr at exit (coreutils do) would have given to our file.
    let mode = crate::mode::current();
    crate::say::node_notes();
    // SAFETY: getpid cannot fail.
    let pid = unsafe { libc::getpid() };
    let Some(fd) = crate::rundir::report_file(pid) else { return };
    // SAFETY: once per process (the DONE flag above), on this thread.
    let modules = unsafe { crate::modules::Modules::list() };
    let mut out = Sink { fd, buf: [0; 4096], len: 0, modules };
    let inits = Inits {
        swapped: INITS.swapped.load(Relaxed),
        glibc: std::array::from_fn(|i| INITS.glibc[i].load(Relaxed)),
    };
    let _ = write_header(
        &mut out,
        (pid as u32, comm(&mut [0; 16])),
        mode.label(),
        mode.profiling(),
        crate::tally::totals(),
        &inits,
    );
    if let Some((count, ns)) = crate::delay::totals() {
        let _ = write_delayed(&mut out, count, ns);
    }
    if let Some(sped) = crate::speedup::totals() {
        let _ = write_sped(&mut out, sped);
    }
    if mode.profiling() {
        // A forked child keeps its parent's keys with the counts zeroed:
        // only what this process did is reported.
        let used = |r: &Record| r.hot.acquisitions.load(Relaxed) != 0 || r.try_failed.load(Relaxed) != 0;
        for r in (0..SLOTS).map(Record::at).filter(|r| r.key() != 0).filter(used) {
            mutex_line(&mut out, &r);
        }
        let overflow = Record::at(SLOTS);
        if overflow.hot.acquisitions.load(Relaxed) != 0 {
            // Mutexes beyond the table, together (address 0).
            mutex_line(&mut out, &overflow);
        }
        let used = |r: &&RwRecord| {
            [&r.read, &r.write]
                .iter()
                .any(|s| s.acquisitions.load(Relaxed) != 0 || s.try_failed.load(Relaxed) != 0)
        };
        let rw = &crate::rwlock::TABLE;
        for r in
            rw[..RW_SLOTS].iter().filter(|r| r.key.load(Relaxed) != 0).chain([&rw[RW_SLOTS]]).filter(used)
        {
            rwlock_line(&mut out, r);
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
