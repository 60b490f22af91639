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
//! comm               <the process's name, /proc/PID/comm>
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
//! site               <mutex address>   (after its mutex: the first stack
//!                    of its acquisitions from another call site, one per
//!                    site, a few at most)
//! stack              <mutex address> <walked contended acquisitions> <their wait ns>
//!                    (after its mutex: one per stack it was contended from)
//! holder             <mutex address> <releases with waiters> <held ns> <wait caused ns>
//!                    (after its mutex: one per release site, its frames
//!                    following; without frames, the other sites together)
//! unattributed       <mutex address> <wait ns whose releaser is unknown>
//! parked             <mutex address> <contended acquisitions whose section
//!                    was empty> <their wait ns>   (parking, not contention)
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

use std::fmt::Write;

mod parse;
mod write;
pub use parse::parse;
pub use write::{
    write_delayed, write_first, write_frame, write_header, write_holder, write_mutex, write_parked,
    write_rwlock, write_site, write_sped, write_stack, write_unattributed, write_waits,
};

/// The first word of a report.
pub const MAGIC: &str = "contend-interpose";
/// The format this crate writes and reads.
pub const VERSION: u32 = 8;

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
    /// The first stack from each other call site it was acquired at.
    pub sites: Vec<Vec<Frame>>,
    /// Its contended acquisitions by stack.
    pub stacks: Vec<StackLine>,
    /// Its releases to waiters by release site.
    pub holders: Vec<HolderLine>,
    /// Waits whose releaser is not known, ns.
    pub unattributed_ns: u64,
    /// Contended acquisitions whose section was empty (parking).
    pub parked: u64,
    /// Their wait, ns.
    pub parked_wait_ns: u64,
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
    /// Its name (`/proc/PID/comm` as it exited).
    pub comm: String,
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

/// Each kind of line and its number of tab-separated fields, the kind
/// included: the writer's test checks every line it writes against this,
/// and the reader refuses a line that does not match it. `waits` has
/// one field per non-empty bucket, so any number from two.
const FIELDS: [(&str, usize); 17] = [
    ("pid", 2),
    ("comm", 2),
    ("lock", 2),
    ("profile", 2),
    ("acquired", 3),
    ("inits", 7),
    ("delayed", 3),
    ("sped", 6),
    ("mutex", 18),
    ("rwlock", 18),
    ("first", 2),
    ("site", 2),
    ("stack", 4),
    ("holder", 5),
    ("unattributed", 3),
    ("parked", 4),
    ("frame", 6),
];

/// Whether a line of `kind` may have `n` fields.
fn fits(kind: &str, n: usize) -> bool {
    match kind {
        "waits" => n >= 2,
        _ => FIELDS.iter().any(|&(k, want)| k == kind && want == n),
    }
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
        write_header(&mut text, (42, b"my\tprog"), "mcs", true, (90, 7), &inits).unwrap();
        write_mutex(&mut text, &m, Some((b"/bin/x\twith tab", 0x4000)), None).unwrap();
        write_mutex(&mut text, &m, None, Some((b"possess", 0x5010))).unwrap();
        write_first(&mut text, 0x10).unwrap();
        write_frame(&mut text, 0x5008, Some((b"/bin/x", 0x4000)), None).unwrap();
        write_site(&mut text, 0x10).unwrap();
        write_frame(&mut text, 0x5208, Some((b"/bin/x", 0x4000)), None).unwrap();
        write_frame(&mut text, 0x5308, Some((b"/bin/x", 0x4000)), None).unwrap();
        write_stack(&mut text, 0x10, 4, 4000).unwrap();
        write_frame(&mut text, 0x5004, Some((b"/bin/x", 0x4000)), Some((b"possess", 0x5000))).unwrap();
        write_frame(&mut text, 0x6008, Some((b"/bin/x", 0x4000)), None).unwrap();
        write_stack(&mut text, 0x10, 1, 1000).unwrap();
        write_holder(&mut text, 0x10, 3, 9000, 4500).unwrap();
        write_frame(&mut text, 0x700c, Some((b"/bin/x", 0x4000)), None).unwrap();
        write_holder(&mut text, 0x10, 1, 10, 5).unwrap();
        write_unattributed(&mut text, 0x10, 77).unwrap();
        write_parked(&mut text, 0x10, 2, 6000).unwrap();
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
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split('\t').collect();
            assert!(fits(f[0], f.len()), "{} fields in {line:?}", f.len());
        }
        let r = parse(&text).unwrap();
        assert_eq!((r.pid, r.lock.as_str(), r.profile, r.swapped, r.glibc), (42, "mcs", true, 90, 7));
        assert_eq!(r.comm, "my prog", "a tab in a name is shown as a space");
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
        let sites: Vec<Vec<u64>> =
            r.mutexes[1].sites.iter().map(|s| s.iter().map(|f| f.address).collect()).collect();
        assert_eq!(sites, [[0x5208, 0x5308]], "another call site's first stack");
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
        assert_eq!((r.mutexes[1].parked, r.mutexes[1].parked_wait_ns), (2, 6000));
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
