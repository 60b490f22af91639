//! Reads what the interposer wrote at each process's exit (the format is
//! documented in crates/interpose/src/report.rs): one file per process,
//! `interpose.<pid>.tsv`, in the run's directory.

use crate::model::program::{MutexCounts, MutexInits};
use std::path::Path;

/// One mutex line, before symbolization.
#[derive(Debug, Clone, Default)]
pub struct RawMutex {
    /// The mutex address.
    pub address: u64,
    /// glibc's kind field.
    pub kind: i32,
    /// Acquisitions and waits.
    pub counts: MutexCounts,
    /// Holds measured.
    pub holds: u64,
    /// Their total, ns.
    pub hold_ns: u64,
    /// Return address of the first acquisition.
    pub site: u64,
    /// The module of the site.
    pub module: String,
    /// Where it is loaded.
    pub module_base: u64,
    /// dladdr's nearest dynamic symbol.
    pub symbol: Option<String>,
    /// Its address.
    pub symbol_address: u64,
}

/// One process's report.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The process.
    pub pid: u32,
    /// The lock it ran.
    pub lock: String,
    /// Whether it profiled.
    pub profile: bool,
    /// Acquisitions left to glibc.
    pub to_glibc: u64,
    /// Mutex inits by outcome.
    pub inits: MutexInits,
    /// With a profile: every mutex.
    pub mutexes: Vec<RawMutex>,
}

fn hex(s: &str) -> Result<u64, String> {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).map_err(|e| format!("{s:?}: {e}"))
}

fn num<T: std::str::FromStr>(s: &str) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    s.parse().map_err(|e| format!("{s:?}: {e}"))
}

/// Parses one report.
pub fn parse(text: &str) -> Result<Report, String> {
    let mut r = Report::default();
    let mut lines = text.lines();
    if lines.next() != Some("contend-interpose\t1") {
        return Err("not an interposer report of format 1".into());
    }
    for line in lines {
        let f: Vec<&str> = line.split('\t').collect();
        match (f[0], f.len()) {
            ("pid", 2) => r.pid = num(f[1])?,
            ("lock", 2) => r.lock = f[1].to_string(),
            ("profile", 2) => r.profile = f[1] == "1",
            ("to_glibc", 2) => r.to_glibc = num(f[1])?,
            ("inits", 7) => {
                r.inits = MutexInits {
                    swapped: num(f[1])?,
                    recursive: num(f[2])?,
                    errorcheck: num(f[3])?,
                    robust: num(f[4])?,
                    pi_or_pp: num(f[5])?,
                    pshared: num(f[6])?,
                }
            }
            ("mutex", 17) => r.mutexes.push(RawMutex {
                address: hex(f[1])?,
                kind: num(f[2])?,
                counts: MutexCounts {
                    acquisitions: num(f[3])?,
                    contended: num(f[4])?,
                    try_failed: num(f[5])?,
                    wait_ns: num(f[6])?,
                    max_wait_ns: num(f[7])?,
                    p50_wait_ns: num(f[8])?,
                    p99_wait_ns: num(f[9])?,
                },
                holds: num(f[10])?,
                hold_ns: num(f[11])?,
                site: hex(f[12])?,
                module: f[13].to_string(),
                module_base: hex(f[14])?,
                symbol: (f[15] != "-").then(|| f[15].to_string()),
                symbol_address: hex(f[16])?,
            }),
            _ => return Err(format!("unexpected line {line:?}")),
        }
    }
    Ok(r)
}

/// Every report in `dir`.
pub fn read_all(dir: &Path) -> Result<Vec<Report>, String> {
    let mut out = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("interpose.") && name.ends_with(".tsv") {
            // Module paths are bytes; a path that is not UTF-8 is shown lossily.
            let bytes = std::fs::read(e.path()).map_err(|err| format!("{name}: {err}"))?;
            out.push(parse(&String::from_utf8_lossy(&bytes)).map_err(|err| format!("{name}: {err}"))?);
        }
    }
    out.sort_by_key(|r| r.pid);
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_report_round_trips_and_a_bad_one_is_refused() {
        let text = "contend-interpose\t1\npid\t42\nlock\tmcs\nprofile\t1\nto_glibc\t7\ninits\t3\t1\t0\t0\t0\t0\n\
                    mutex\t0x10\t0\t100\t5\t0\t5000\t2000\t900\t1900\t100\t12345\t0x5000\t/bin/x\t0x4000\t-\t0x0\n";
        let r = super::parse(text).unwrap();
        assert_eq!((r.pid, r.lock.as_str(), r.profile, r.to_glibc), (42, "mcs", true, 7));
        assert_eq!((r.inits.swapped, r.inits.recursive), (3, 1));
        let m = &r.mutexes[0];
        assert_eq!(
            (m.address, m.counts.contended, m.counts.p99_wait_ns, m.site, m.module_base),
            (16, 5, 1900, 0x5000, 0x4000)
        );
        assert!(m.symbol.is_none());
        assert!(super::parse("pid\t1\n").is_err());
        assert!(super::parse("contend-interpose\t1\nmutex\t1\n").is_err());
    }
}
