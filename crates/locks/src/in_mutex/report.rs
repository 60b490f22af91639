//! The report the interposer writes at each process's exit and `contend
//! run` reads: its one definition, writer and reader side by side, so the
//! two cannot drift apart (a test writes a report through [`write_header`]
//! and [`write_mutex`] and reads it back with [`parse`]).
//!
//! Tab-separated lines, format [`VERSION`]:
//!
//! ```text
//! contend-interpose  2
//! pid                <pid>
//! lock               <the swapped lock, or pthread>
//! profile            0 | 1
//! acquired           <by the swapped lock> <by glibc's mutex>
//! inits              <swapped> <recursive> <errorcheck> <robust> <pi/pp> <pshared>
//! delayed            <sections lengthened> <ns added>      (under a what-if delay)
//! sped               <percent> <sections> <their virtual ns> <pause owed ns>
//!                    <ns waited to pay it>                 (under a virtual speedup)
//! mutex              <address> <kind> <acquisitions> <contended> <try failed>
//!                    <condition waits> <wait ns> <max wait ns> <p50 wait ns> <p99 wait ns>
//!                    <holds> <hold ns> <site> <module> <module base>
//!                    <symbol> <symbol address>     (one line each, with --profile)
//! first              <mutex address>   (after its mutex: the stack of its
//!                    first acquisition, in frame lines)
//! stack              <mutex address> <walked contended acquisitions> <their wait ns>
//!                    (after its mutex: one per stack it was contended from)
//! holder             <mutex address> <releases with waiters> <held ns> <wait caused ns>
//!                    (after its mutex: one per release site, its frames
//!                    following; without frames, the other sites together)
//! unattributed       <mutex address> <wait ns whose releaser is unknown>
//! rwlock             <address> rwlock|spin <read: acquisitions> <contended>
//!                    <try failed> <wait ns> <max wait ns> <write: the same
//!                    five> <site> <module> <module base> <symbol>
//!                    <symbol address>    (one line each, with --profile;
//!                    its `first` stack may follow)
//! waits              <mutex address> <upper edge ns>:<count> ...
//!                    (after its mutex: the contended waits' histogram,
//!                    non-empty buckets only, 12.5% wide)
//! frame              <address> <module> <module base> <symbol> <symbol address>
//!                    (after its stack, innermost first; a stack without
//!                    frames counts the stacks beyond those kept)
//! ```
//!
//! The writer allocates nothing (it runs while a process exits, perhaps
//! inside the allocator whose locks it reports): it writes numbers through
//! `core::fmt` and the loader's strings byte by byte.

use std::fmt::{self, Write};

/// The first word of a report.
pub const MAGIC: &str = "contend-interpose";
/// The format this crate writes and reads.
pub const VERSION: u32 = 7;

/// Where a report is written: text, and the loader's names as bytes.
pub trait ReportSink: Write {
    /// Writes bytes that are not known to be UTF-8 (a module path).
    fn raw(&mut self, bytes: &[u8]);
}

impl ReportSink for String {
    fn raw(&mut self, bytes: &[u8]) {
        self.push_str(&String::from_utf8_lossy(bytes));
    }
}

/// `pthread_mutex_init` calls, by what became of the mutex.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Inits {
    /// Holding the swapped lock.
    pub swapped: u64,
    /// Left to glibc: recursive, error-checking, robust, PI or PP,
    /// process-shared.
    pub glibc: [u64; 5],
}

/// One mutex's numbers as the interposer wrote them (the export's
/// `MutexCounts`, in contend's model, is made from these).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReportedCounts {
    /// Its address (0: the mutexes beyond the profile's table, together).
    pub address: u64,
    /// glibc's kind field at its first acquisition.
    pub kind: i32,
    /// Acquisitions.
    pub acquisitions: u64,
    /// Of those, contended.
    pub contended: u64,
    /// The program's own try-locks that failed.
    pub try_failed: u64,
    /// Condition waits that released and re-took it.
    pub cond_waits: u64,
    /// Total wait of the contended ones, ns.
    pub wait_ns: u64,
    /// The longest, ns.
    pub max_wait_ns: u64,
    /// Median contended wait, ns.
    pub p50_wait_ns: u64,
    /// 99th percentile, ns.
    pub p99_wait_ns: u64,
    /// Holds measured.
    pub holds: u64,
    /// Their total, ns.
    pub hold_ns: u64,
    /// The return address of its first acquisition.
    pub site: u64,
}

/// Where a site is: what dladdr said of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Site {
    /// The module's path.
    pub module: String,
    /// Where it is loaded.
    pub module_base: u64,
    /// The nearest dynamic symbol, if any.
    pub symbol: Option<String>,
    /// Its address.
    pub symbol_address: u64,
}

/// One frame of a stack: its return address and where it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Frame {
    /// The return address.
    pub address: u64,
    /// Its module and symbol.
    pub site: Site,
}

/// The contended acquisitions of a mutex from one stack.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StackLine {
    /// How many.
    pub count: u64,
    /// Their total wait, ns.
    pub wait_ns: u64,
    /// Innermost first; empty for the stacks beyond those kept, together.
    pub frames: Vec<Frame>,
}

/// One mutex line, read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MutexLine {
    /// Its numbers.
    pub counts: ReportedCounts,
    /// Its site's module and symbol.
    pub site: Site,
    /// The stack of its first acquisition, innermost first.
    pub first: Vec<Frame>,
    /// Its contended acquisitions by stack.
    pub stacks: Vec<StackLine>,
    /// Its releases to waiters by release site.
    pub holders: Vec<HolderLine>,
    /// Waits whose releaser is not known, ns.
    pub unattributed_ns: u64,
    /// Its contended waits by size: (the bucket's upper edge, ns; count).
    pub waits: Vec<(u64, u64)>,
}

/// The releases of a mutex from one site while others waited.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HolderLine {
    /// Releases with waiters.
    pub releases: u64,
    /// The holds they ended, ns.
    pub held_ns: u64,
    /// The waits they ended, ns.
    pub caused_ns: u64,
    /// The release site and its callers; empty for the other sites.
    pub frames: Vec<Frame>,
}

/// One side of a rwlock (readers or writers; a spinlock's holders are
/// writers).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SideCounts {
    /// Acquisitions.
    pub acquisitions: u64,
    /// Of those, the ones whose first try-lock failed.
    pub contended: u64,
    /// The program's own try-locks that failed.
    pub try_failed: u64,
    /// Total wait of the contended ones, ns.
    pub wait_ns: u64,
    /// The longest, ns.
    pub max_wait_ns: u64,
}

/// One rwlock's or spinlock's numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RwCounts {
    /// Its address (0: the locks beyond the profile's table, together).
    pub address: u64,
    /// A spinlock (else a rwlock).
    pub spin: bool,
    /// Readers.
    pub read: SideCounts,
    /// Writers.
    pub write: SideCounts,
    /// The return address of its first acquisition.
    pub site: u64,
}

/// One rwlock line, read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RwLine {
    /// Its numbers.
    pub counts: RwCounts,
    /// Its site's module and symbol.
    pub site: Site,
    /// The stack of its first acquisition, innermost first.
    pub first: Vec<Frame>,
}

/// One process's report, read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessReport {
    /// The process.
    pub pid: u32,
    /// The lock it ran.
    pub lock: String,
    /// Whether it profiled.
    pub profile: bool,
    /// Acquisitions by the swapped lock.
    pub swapped: u64,
    /// Acquisitions of glibc's mutex through the interposer.
    pub glibc: u64,
    /// Mutex inits by outcome.
    pub inits: Inits,
    /// With a profile: every mutex.
    pub mutexes: Vec<MutexLine>,
    /// With a profile: every rwlock and spinlock.
    pub rwlocks: Vec<RwLine>,
    /// Under a what-if delay: the critical sections lengthened and the
    /// time they were lengthened by, ns, as measured.
    pub delayed: Option<(u64, u64)>,
    /// Under a virtual speedup: the percent, the sections of the mutex
    /// ended, their virtual length in all, the pause every thread owed in
    /// all and what was waited to pay it, ns.
    pub sped: Option<[u64; 5]>,
}

/// Writes the lines before the mutexes.
pub fn write_header(
    out: &mut impl ReportSink,
    pid: u32,
    lock: &str,
    profile: bool,
    (swapped, glibc): (u64, u64),
    inits: &Inits,
) -> fmt::Result {
    writeln!(out, "{MAGIC}\t{VERSION}")?;
    writeln!(out, "pid\t{pid}")?;
    writeln!(out, "lock\t{lock}")?;
    writeln!(out, "profile\t{}", u8::from(profile))?;
    writeln!(out, "acquired\t{swapped}\t{glibc}")?;
    write!(out, "inits\t{}", inits.swapped)?;
    for g in inits.glibc {
        write!(out, "\t{g}")?;
    }
    writeln!(out)
}

/// A loader string with the format's separators (tab, newline) shown as
/// spaces; `-` when absent or empty.
fn name(out: &mut impl ReportSink, bytes: Option<&[u8]>) {
    match bytes {
        Some(b) if !b.is_empty() => {
            for &c in b {
                out.raw(&[if c == b'\t' || c == b'\n' { b' ' } else { c }]);
            }
        }
        _ => out.raw(b"-"),
    }
}

/// Writes one mutex line; `module` and `symbol` are dladdr's strings
/// (None when it found nothing).
pub fn write_mutex(
    out: &mut impl ReportSink,
    m: &ReportedCounts,
    module: Option<(&[u8], u64)>,
    symbol: Option<(&[u8], u64)>,
) -> fmt::Result {
    write!(
        out,
        "mutex\t{:#x}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:#x}\t",
        m.address,
        m.kind,
        m.acquisitions,
        m.contended,
        m.try_failed,
        m.cond_waits,
        m.wait_ns,
        m.max_wait_ns,
        m.p50_wait_ns,
        m.p99_wait_ns,
        m.holds,
        m.hold_ns,
        m.site,
    )?;
    write_where(out, module, symbol)
}

/// Writes one rwlock or spinlock line.
pub fn write_rwlock(
    out: &mut impl ReportSink,
    r: &RwCounts,
    module: Option<(&[u8], u64)>,
    symbol: Option<(&[u8], u64)>,
) -> fmt::Result {
    write!(out, "rwlock\t{:#x}\t{}", r.address, if r.spin { "spin" } else { "rwlock" })?;
    for side in [&r.read, &r.write] {
        write!(
            out,
            "\t{}\t{}\t{}\t{}\t{}",
            side.acquisitions, side.contended, side.try_failed, side.wait_ns, side.max_wait_ns
        )?;
    }
    write!(out, "\t{:#x}\t", r.site)?;
    write_where(out, module, symbol)
}

/// Writes the line before the frames of a mutex's first stack.
pub fn write_first(out: &mut impl ReportSink, mutex: u64) -> fmt::Result {
    writeln!(out, "first\t{mutex:#x}")
}

/// Writes the line of one of a mutex's stacks (its frames follow).
pub fn write_stack(out: &mut impl ReportSink, mutex: u64, count: u64, wait_ns: u64) -> fmt::Result {
    writeln!(out, "stack\t{mutex:#x}\t{count}\t{wait_ns}")
}

/// Writes the line of one of a mutex's release sites (its frames follow).
pub fn write_holder(
    out: &mut impl ReportSink,
    mutex: u64,
    releases: u64,
    held_ns: u64,
    caused_ns: u64,
) -> fmt::Result {
    writeln!(out, "holder\t{mutex:#x}\t{releases}\t{held_ns}\t{caused_ns}")
}

/// Writes what a what-if delay added: critical sections lengthened and
/// their total added time, ns, as measured.
pub fn write_delayed(out: &mut impl ReportSink, count: u64, ns: u64) -> fmt::Result {
    writeln!(out, "delayed\t{count}\t{ns}")
}

/// Writes what a virtual speedup did (see [`Report::sped`]).
pub fn write_sped(out: &mut impl ReportSink, s: [u64; 5]) -> fmt::Result {
    writeln!(out, "sped\t{}\t{}\t{}\t{}\t{}", s[0], s[1], s[2], s[3], s[4])
}

/// Writes a mutex's waits whose releaser is not known.
pub fn write_unattributed(out: &mut impl ReportSink, mutex: u64, ns: u64) -> fmt::Result {
    writeln!(out, "unattributed\t{mutex:#x}\t{ns}")
}

/// Writes a mutex's wait histogram: `(upper edge ns, count)` per
/// non-empty bucket.
pub fn write_waits(
    out: &mut impl ReportSink,
    mutex: u64,
    buckets: impl Iterator<Item = (u64, u64)>,
) -> fmt::Result {
    write!(out, "waits\t{mutex:#x}")?;
    for (edge, count) in buckets {
        write!(out, "\t{edge}:{count}")?;
    }
    writeln!(out)
}

/// Writes one frame of the stack before it.
pub fn write_frame(
    out: &mut impl ReportSink,
    address: u64,
    module: Option<(&[u8], u64)>,
    symbol: Option<(&[u8], u64)>,
) -> fmt::Result {
    write!(out, "frame\t{address:#x}\t")?;
    write_where(out, module, symbol)
}

/// Module, base, symbol and its address, to the end of the line.
fn write_where(
    out: &mut impl ReportSink,
    module: Option<(&[u8], u64)>,
    symbol: Option<(&[u8], u64)>,
) -> fmt::Result {
    name(out, module.map(|(n, _)| n));
    write!(out, "\t{:#x}\t", module.map_or(0, |(_, base)| base))?;
    name(out, symbol.map(|(n, _)| n));
    writeln!(out, "\t{:#x}", symbol.map_or(0, |(_, at)| at))
}

fn site(f: &[&str]) -> Result<Site, String> {
    Ok(Site {
        module: f[0].to_string(),
        module_base: hex(f[1])?,
        symbol: (f[2] != "-").then(|| f[2].to_string()),
        symbol_address: hex(f[3])?,
    })
}

fn hex(s: &str) -> Result<u64, String> {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).map_err(|e| format!("{s:?}: {e}"))
}

fn num<T: std::str::FromStr>(s: &str) -> Result<T, String>
where
    T::Err: fmt::Display,
{
    s.parse().map_err(|e| format!("{s:?}: {e}"))
}

/// The stack the next frame lines belong to.
#[derive(Clone, Copy)]
enum FramesOf {
    Nothing,
    First,
    Stack,
    Holder,
    RwFirst,
}

/// One side's five numbers.
fn side(f: &[&str]) -> Result<SideCounts, String> {
    Ok(SideCounts {
        acquisitions: num(f[0])?,
        contended: num(f[1])?,
        try_failed: num(f[2])?,
        wait_ns: num(f[3])?,
        max_wait_ns: num(f[4])?,
    })
}

/// Reads one report.
pub fn parse(text: &str) -> Result<ProcessReport, String> {
    let mut r = ProcessReport::default();
    let mut lines = text.lines();
    if lines.next() != Some(&format!("{MAGIC}\t{VERSION}")) {
        return Err(format!(
            "not an interposer report of format {VERSION} (an interposer of another contend version?)"
        ));
    }
    // Which stack of the last mutex frame lines now belong to.
    let mut frames_of = FramesOf::Nothing;
    // Whether the last lock line was a rwlock's (its `first` follows).
    let mut after_rwlock = false;
    for line in lines {
        let f: Vec<&str> = line.split('\t').collect();
        match (f[0], f.len()) {
            ("pid", 2) => r.pid = num(f[1])?,
            ("lock", 2) => r.lock = f[1].to_string(),
            ("profile", 2) => r.profile = f[1] == "1",
            ("acquired", 3) => (r.swapped, r.glibc) = (num(f[1])?, num(f[2])?),
            ("delayed", 3) => r.delayed = Some((num(f[1])?, num(f[2])?)),
            ("sped", 6) => r.sped = Some([num(f[1])?, num(f[2])?, num(f[3])?, num(f[4])?, num(f[5])?]),
            ("inits", 7) => {
                r.inits = Inits {
                    swapped: num(f[1])?,
                    glibc: [num(f[2])?, num(f[3])?, num(f[4])?, num(f[5])?, num(f[6])?],
                }
            }
            ("mutex", 18) => {
                frames_of = FramesOf::Nothing;
                after_rwlock = false;
                r.mutexes.push(MutexLine {
                    counts: ReportedCounts {
                        address: hex(f[1])?,
                        kind: num(f[2])?,
                        acquisitions: num(f[3])?,
                        contended: num(f[4])?,
                        try_failed: num(f[5])?,
                        cond_waits: num(f[6])?,
                        wait_ns: num(f[7])?,
                        max_wait_ns: num(f[8])?,
                        p50_wait_ns: num(f[9])?,
                        p99_wait_ns: num(f[10])?,
                        holds: num(f[11])?,
                        hold_ns: num(f[12])?,
                        site: hex(f[13])?,
                    },
                    site: site(&f[14..])?,
                    first: Vec::new(),
                    stacks: Vec::new(),
                    holders: Vec::new(),
                    unattributed_ns: 0,
                    waits: Vec::new(),
                })
            }
            ("rwlock", 18) => {
                frames_of = FramesOf::Nothing;
                after_rwlock = true;
                let spin = match f[2] {
                    "spin" => true,
                    "rwlock" => false,
                    other => return Err(format!("a lock of no known kind {other:?}")),
                };
                r.rwlocks.push(RwLine {
                    counts: RwCounts {
                        address: hex(f[1])?,
                        spin,
                        read: side(&f[3..8])?,
                        write: side(&f[8..13])?,
                        site: hex(f[13])?,
                    },
                    site: site(&f[14..])?,
                    first: Vec::new(),
                });
            }
            // The first stack of the rwlock line just before.
            ("first", 2) if after_rwlock => {
                let l = r.rwlocks.last().filter(|l| hex(f[1]).ok() == Some(l.counts.address));
                l.ok_or_else(|| format!("a stack of no rwlock before it: {line:?}"))?;
                frames_of = FramesOf::RwFirst;
            }
            ("first" | "stack" | "holder" | "unattributed" | "waits", _) => {
                let m =
                    r.mutexes.last_mut().filter(|m| f.len() > 1 && hex(f[1]).ok() == Some(m.counts.address));
                let m = m.ok_or_else(|| format!("a stack of no mutex before it: {line:?}"))?;
                match (f[0], f.len()) {
                    ("first", 2) => frames_of = FramesOf::First,
                    ("stack", 4) => {
                        frames_of = FramesOf::Stack;
                        m.stacks.push(StackLine {
                            count: num(f[2])?,
                            wait_ns: num(f[3])?,
                            frames: Vec::new(),
                        });
                    }
                    ("holder", 5) => {
                        frames_of = FramesOf::Holder;
                        m.holders.push(HolderLine {
                            releases: num(f[2])?,
                            held_ns: num(f[3])?,
                            caused_ns: num(f[4])?,
                            frames: Vec::new(),
                        });
                    }
                    ("unattributed", 3) => m.unattributed_ns = num(f[2])?,
                    ("waits", _) => {
                        for b in &f[2..] {
                            let (edge, count) = b
                                .split_once(':')
                                .ok_or_else(|| format!("a bucket without a count: {b:?}"))?;
                            m.waits.push((num(edge)?, num(count)?));
                        }
                    }
                    _ => return Err(format!("unexpected line {line:?}")),
                }
            }
            ("frame", 6) => {
                let frame = Frame { address: hex(f[1])?, site: site(&f[2..])? };
                let m = r.mutexes.last_mut();
                let frames = match frames_of {
                    FramesOf::First => m.map(|m| &mut m.first),
                    FramesOf::Stack => m.and_then(|m| m.stacks.last_mut()).map(|st| &mut st.frames),
                    FramesOf::Holder => m.and_then(|m| m.holders.last_mut()).map(|h| &mut h.frames),
                    FramesOf::RwFirst => r.rwlocks.last_mut().map(|l| &mut l.first),
                    FramesOf::Nothing => None,
                };
                frames.ok_or_else(|| format!("a frame of no stack before it: {line:?}"))?.push(frame);
            }
            _ => return Err(format!("unexpected line {line:?}")),
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_writer_writes_the_reader_reads() {
        let inits = Inits { swapped: 3, glibc: [1, 2, 0, 0, 5] };
        let m = ReportedCounts {
            address: 0x10,
            kind: 3,
            acquisitions: 100,
            contended: 5,
            try_failed: 1,
            cond_waits: 6,
            wait_ns: 5000,
            max_wait_ns: 2000,
            p50_wait_ns: 900,
            p99_wait_ns: 1900,
            holds: 100,
            hold_ns: 12345,
            site: 0x5000,
        };
        let mut text = String::new();
        write_header(&mut text, 42, "mcs", true, (90, 7), &inits).unwrap();
        write_mutex(&mut text, &m, Some((b"/bin/x\twith tab", 0x4000)), None).unwrap();
        write_mutex(&mut text, &m, None, Some((b"possess", 0x5010))).unwrap();
        write_first(&mut text, 0x10).unwrap();
        write_frame(&mut text, 0x5008, Some((b"/bin/x", 0x4000)), None).unwrap();
        write_stack(&mut text, 0x10, 4, 4000).unwrap();
        write_frame(&mut text, 0x5004, Some((b"/bin/x", 0x4000)), Some((b"possess", 0x5000))).unwrap();
        write_frame(&mut text, 0x6008, Some((b"/bin/x", 0x4000)), None).unwrap();
        write_stack(&mut text, 0x10, 1, 1000).unwrap();
        write_holder(&mut text, 0x10, 3, 9000, 4500).unwrap();
        write_frame(&mut text, 0x700c, Some((b"/bin/x", 0x4000)), None).unwrap();
        write_holder(&mut text, 0x10, 1, 10, 5).unwrap();
        write_unattributed(&mut text, 0x10, 77).unwrap();
        write_waits(&mut text, 0x10, [(1125, 3), (9000, 2)].into_iter()).unwrap();
        let rw = RwCounts {
            address: 0x80,
            spin: false,
            read: SideCounts { acquisitions: 9, contended: 2, try_failed: 1, wait_ns: 300, max_wait_ns: 200 },
            write: SideCounts { acquisitions: 4, contended: 1, try_failed: 0, wait_ns: 50, max_wait_ns: 50 },
            site: 0x5100,
        };
        write_rwlock(&mut text, &rw, Some((b"/bin/x", 0x4000)), None).unwrap();
        write_first(&mut text, 0x80).unwrap();
        write_frame(&mut text, 0x5100, Some((b"/bin/x", 0x4000)), None).unwrap();
        let spin = RwCounts { address: 0x90, spin: true, ..RwCounts::default() };
        write_rwlock(&mut text, &spin, None, None).unwrap();
        let r = parse(&text).unwrap();
        assert_eq!((r.pid, r.lock.as_str(), r.profile, r.swapped, r.glibc), (42, "mcs", true, 90, 7));
        assert_eq!(r.inits, inits);
        assert_eq!(r.mutexes[0].counts, m);
        assert_eq!(
            r.mutexes[0].site,
            Site { module: "/bin/x with tab".into(), module_base: 0x4000, symbol: None, symbol_address: 0 }
        );
        assert_eq!(r.mutexes[1].site.module, "-");
        assert_eq!(r.mutexes[1].site.symbol.as_deref(), Some("possess"));
        assert!(r.mutexes[0].stacks.is_empty() && r.mutexes[0].first.is_empty());
        assert_eq!(r.mutexes[1].first.iter().map(|f| f.address).collect::<Vec<_>>(), [0x5008]);
        let stacks = &r.mutexes[1].stacks;
        assert_eq!(stacks.len(), 2);
        assert_eq!((stacks[0].count, stacks[0].wait_ns, stacks[0].frames.len()), (4, 4000, 2));
        assert_eq!(stacks[0].frames[0].address, 0x5004);
        assert_eq!(stacks[0].frames[0].site.symbol.as_deref(), Some("possess"));
        assert_eq!(
            (stacks[0].frames[1].site.module.as_str(), stacks[0].frames[1].site.symbol.as_ref()),
            ("/bin/x", None)
        );
        assert_eq!((stacks[1].count, stacks[1].frames.len()), (1, 0), "the stacks beyond those kept");
        let h = &r.mutexes[1].holders;
        assert_eq!(
            (h[0].releases, h[0].held_ns, h[0].caused_ns, h[0].frames[0].address),
            (3, 9000, 4500, 0x700c)
        );
        assert_eq!((h[1].releases, h[1].frames.len()), (1, 0), "the other release sites");
        assert_eq!(r.mutexes[1].unattributed_ns, 77);
        assert_eq!(r.mutexes[1].waits, [(1125, 3), (9000, 2)]);
        assert_eq!(r.rwlocks.len(), 2);
        assert_eq!(r.rwlocks[0].counts, rw);
        assert_eq!(r.rwlocks[0].first.iter().map(|f| f.address).collect::<Vec<_>>(), [0x5100]);
        assert_eq!(r.rwlocks[1].counts, spin);
        assert!(r.rwlocks[1].first.is_empty());
        assert_eq!(r.mutexes[1].first.len(), 1, "the rwlock's stack is not the mutex's");
        assert!(r.mutexes[0].waits.is_empty());
    }

    #[test]
    fn another_format_or_a_broken_line_is_refused() {
        let head = format!("{MAGIC}\t{VERSION}\n");
        assert!(parse("pid\t1\n").unwrap_err().contains(&format!("format {VERSION}")));
        assert!(parse("contend-interpose\t1\npid\t1\n").is_err());
        assert!(parse(&format!("{head}mutex\t1\n")).unwrap_err().contains("unexpected line"));
        assert!(parse(&format!("{head}stack\t0x10\t1\t5\n")).unwrap_err().contains("no mutex"));
        assert_eq!(parse(&format!("{head}delayed\t3\t4500\n")).unwrap().delayed, Some((3, 4500)));
        let mut line = String::new();
        write_sped(&mut line, [50, 2, 300, 150, 0]).unwrap();
        assert_eq!(parse(&format!("{head}{line}")).unwrap().sped, Some([50, 2, 300, 150, 0]));
    }
}
