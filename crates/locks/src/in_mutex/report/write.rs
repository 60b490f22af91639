//! The report's writer, run by the interposer while a process exits: it
//! allocates nothing (perhaps inside the allocator whose locks it
//! reports), writing numbers through `core::fmt` and the loader's strings
//! byte by byte.

use super::{Inits, ReportSink, ReportedCounts, RwCounts, MAGIC, VERSION};
use std::fmt;

/// Writes the lines before the mutexes.
pub fn write_header(
    out: &mut impl ReportSink,
    (pid, comm): (u32, &[u8]),
    lock: &str,
    profile: bool,
    (swapped, glibc): (u64, u64),
    inits: &Inits,
) -> fmt::Result {
    writeln!(out, "{MAGIC}\t{VERSION}")?;
    writeln!(out, "pid\t{pid}")?;
    write!(out, "comm\t")?;
    name(out, Some(comm));
    writeln!(out)?;
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

/// Writes the line before the first stack of a mutex's acquisitions from
/// another call site (its frames follow).
pub fn write_site(out: &mut impl ReportSink, mutex: u64) -> fmt::Result {
    writeln!(out, "site\t{mutex:#x}")
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

/// Writes what a virtual speedup did (see [`super::ProcessReport::sped`]).
pub fn write_sped(out: &mut impl ReportSink, s: [u64; 5]) -> fmt::Result {
    writeln!(out, "sped\t{}\t{}\t{}\t{}\t{}", s[0], s[1], s[2], s[3], s[4])
}

/// Writes a mutex's waits whose releaser is not known.
pub fn write_unattributed(out: &mut impl ReportSink, mutex: u64, ns: u64) -> fmt::Result {
    writeln!(out, "unattributed\t{mutex:#x}\t{ns}")
}

/// Writes a mutex's parking: its contended acquisitions whose section was
/// empty, and their wait, ns.
pub fn write_parked(out: &mut impl ReportSink, mutex: u64, count: u64, ns: u64) -> fmt::Result {
    writeln!(out, "parked\t{mutex:#x}\t{count}\t{ns}")
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
