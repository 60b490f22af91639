//! Reads what the interposer wrote at each process's exit (the format is
//! documented in crates/interpose/src/report.rs): one file per process,
//! `interpose.<pid>.tsv`, in the execution's directory (`scratch.rs`).

use crate::model::program::{MutexCounts, MutexInits};

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
    /// Acquisitions by the swapped lock.
    pub swapped: u64,
    /// Acquisitions of glibc's mutex through the interposer.
    pub glibc: u64,
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
    if lines.next() != Some("contend-interpose\t2") {
        return Err("not an interposer report of format 2 (an interposer of another contend version?)".into());
    }
    for line in lines {
        let f: Vec<&str> = line.split('\t').collect();
        match (f[0], f.len()) {
            ("pid", 2) => r.pid = num(f[1])?,
            ("lock", 2) => r.lock = f[1].to_string(),
            ("profile", 2) => r.profile = f[1] == "1",
            ("acquired", 3) => (r.swapped, r.glibc) = (num(f[1])?, num(f[2])?),
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

#[cfg(test)]
mod tests {
    #[test]
    fn a_report_round_trips_and_a_bad_one_is_refused() {
        let text = "contend-interpose\t2\npid\t42\nlock\tmcs\nprofile\t1\nacquired\t90\t7\ninits\t3\t1\t0\t0\t0\t0\n\
                    mutex\t0x10\t0\t100\t5\t0\t5000\t2000\t900\t1900\t100\t12345\t0x5000\t/bin/x\t0x4000\t-\t0x0\n";
        let r = super::parse(text).unwrap();
        assert_eq!((r.pid, r.lock.as_str(), r.profile, r.swapped, r.glibc), (42, "mcs", true, 90, 7));
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
