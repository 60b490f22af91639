//! The report's reader, run by `contend run` on each process's report:
//! one function per kind of line, each given a line whose field count
//! [`super::FIELDS`] has already checked.

use super::{
    fits, Frame, HolderLine, Inits, MutexLine, ProcessReport, ReportedCounts, RwCounts, RwLine, SideCounts,
    Site, StackLine, MAGIC, VERSION,
};
use std::fmt;

/// The stack the next frame lines belong to.
#[derive(Clone, Copy)]
enum FramesOf {
    Nothing,
    First,
    Site,
    Stack,
    Holder,
    RwFirst,
}

/// The report read so far, and where the next lines attach.
struct Reader {
    r: ProcessReport,
    /// Which stack of the last lock frame lines now belong to.
    frames_of: FramesOf,
    /// Whether the last lock line was a rwlock's (its `first` follows).
    after_rwlock: bool,
}

/// Reads one report.
pub fn parse(text: &str) -> Result<ProcessReport, String> {
    let mut lines = text.lines();
    if lines.next() != Some(&format!("{MAGIC}\t{VERSION}")) {
        return Err(format!(
            "not an interposer report of format {VERSION} (an interposer of another contend version?)"
        ));
    }
    let mut reader =
        Reader { r: ProcessReport::default(), frames_of: FramesOf::Nothing, after_rwlock: false };
    for line in lines {
        let f: Vec<&str> = line.split('\t').collect();
        if !fits(f[0], f.len()) {
            return Err(format!("unexpected line {line:?}"));
        }
        reader.line(&f).map_err(|e| if e.is_empty() { format!("unexpected line {line:?}") } else { e })?;
    }
    Ok(reader.r)
}

impl Reader {
    /// One line, split; an empty error is "unexpected line".
    fn line(&mut self, f: &[&str]) -> Result<(), String> {
        let r = &mut self.r;
        match f[0] {
            "pid" => r.pid = num(f[1])?,
            "comm" => r.comm = f[1].to_string(),
            "lock" => r.lock = f[1].to_string(),
            "profile" => r.profile = f[1] == "1",
            "acquired" => (r.swapped, r.glibc) = (num(f[1])?, num(f[2])?),
            "delayed" => r.delayed = Some((num(f[1])?, num(f[2])?)),
            "sped" => r.sped = Some([num(f[1])?, num(f[2])?, num(f[3])?, num(f[4])?, num(f[5])?]),
            "inits" => r.inits = inits(f)?,
            "mutex" => {
                (self.frames_of, self.after_rwlock) = (FramesOf::Nothing, false);
                r.mutexes.push(mutex(f)?);
            }
            "rwlock" => {
                (self.frames_of, self.after_rwlock) = (FramesOf::Nothing, true);
                r.rwlocks.push(rwlock(f)?);
            }
            // The first stack of the rwlock line just before.
            "first" if self.after_rwlock => {
                let l = r.rwlocks.last().filter(|l| hex(f[1]).ok() == Some(l.counts.address));
                l.ok_or_else(|| format!("a stack of no rwlock before it: {:?}", f.join("\t")))?;
                self.frames_of = FramesOf::RwFirst;
            }
            "first" | "site" | "stack" | "holder" | "unattributed" | "parked" | "waits" => {
                self.of_mutex(f)?
            }
            "frame" => self.frame(f)?,
            _ => return Err(String::new()),
        }
        Ok(())
    }

    /// A line about the mutex line before it.
    fn of_mutex(&mut self, f: &[&str]) -> Result<(), String> {
        let m = self.r.mutexes.last_mut().filter(|m| hex(f[1]).ok() == Some(m.counts.address));
        let m = m.ok_or_else(|| format!("a stack of no mutex before it: {:?}", f.join("\t")))?;
        match f[0] {
            "first" => self.frames_of = FramesOf::First,
            "site" => {
                self.frames_of = FramesOf::Site;
                m.sites.push(Vec::new());
            }
            "stack" => {
                self.frames_of = FramesOf::Stack;
                m.stacks.push(StackLine { count: num(f[2])?, wait_ns: num(f[3])?, frames: Vec::new() });
            }
            "holder" => {
                self.frames_of = FramesOf::Holder;
                m.holders.push(HolderLine {
                    releases: num(f[2])?,
                    held_ns: num(f[3])?,
                    caused_ns: num(f[4])?,
                    frames: Vec::new(),
                });
            }
            "unattributed" => m.unattributed_ns = num(f[2])?,
            "parked" => (m.parked, m.parked_wait_ns) = (num(f[2])?, num(f[3])?),
            _ => m.waits.extend(waits(&f[2..])?),
        }
        Ok(())
    }

    /// A frame of the stack whose line came last.
    fn frame(&mut self, f: &[&str]) -> Result<(), String> {
        let frame = Frame { address: hex(f[1])?, site: site(&f[2..])? };
        let m = self.r.mutexes.last_mut();
        let frames = match self.frames_of {
            FramesOf::First => m.map(|m| &mut m.first),
            FramesOf::Site => m.and_then(|m| m.sites.last_mut()),
            FramesOf::Stack => m.and_then(|m| m.stacks.last_mut()).map(|st| &mut st.frames),
            FramesOf::Holder => m.and_then(|m| m.holders.last_mut()).map(|h| &mut h.frames),
            FramesOf::RwFirst => self.r.rwlocks.last_mut().map(|l| &mut l.first),
            FramesOf::Nothing => None,
        };
        frames.ok_or_else(|| format!("a frame of no stack before it: {:?}", f.join("\t")))?.push(frame);
        Ok(())
    }
}

fn inits(f: &[&str]) -> Result<Inits, String> {
    Ok(Inits { swapped: num(f[1])?, glibc: [num(f[2])?, num(f[3])?, num(f[4])?, num(f[5])?, num(f[6])?] })
}

fn mutex(f: &[&str]) -> Result<MutexLine, String> {
    Ok(MutexLine {
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
        ..MutexLine::default()
    })
}

fn rwlock(f: &[&str]) -> Result<RwLine, String> {
    let spin = match f[2] {
        "spin" => true,
        "rwlock" => false,
        other => return Err(format!("a lock of no known kind {other:?}")),
    };
    Ok(RwLine {
        counts: RwCounts {
            address: hex(f[1])?,
            spin,
            read: side(&f[3..8])?,
            write: side(&f[8..13])?,
            site: hex(f[13])?,
        },
        site: site(&f[14..])?,
        first: Vec::new(),
    })
}

/// A histogram's buckets, `EDGE:COUNT` each.
fn waits(f: &[&str]) -> Result<Vec<(u64, u64)>, String> {
    f.iter()
        .map(|b| {
            let (edge, count) =
                b.split_once(':').ok_or_else(|| format!("a bucket without a count: {b:?}"))?;
            Ok((num(edge)?, num(count)?))
        })
        .collect()
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
