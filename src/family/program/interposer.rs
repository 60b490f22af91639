//! What the interposer of each process reported, read from the
//! execution's directory (`scratch.rs`) in the format both sides share
//! (`locks::in_mutex::report`), and turned into contend's model: the
//! processes it entered, the inits summed, every mutex named.

use crate::family::program::scratch::ExecDir;
use crate::family::program::symbols::Symbolizer;
use crate::model::program::{MutexCounts, MutexInits, MutexProfile};
use anyhow::{anyhow, Result};
pub use locks::in_mutex::report::ProcessReport as Report;

/// The pid in a `<what>.<pid>.tsv` or `<what>.<pid>.<k>.tsv` name.
fn pid_of(name: &str) -> Option<u32> {
    name.split('.').nth(1)?.parse().ok()
}

/// Every process's report, by pid.
pub fn read(exec: &ExecDir) -> Result<Vec<Report>> {
    let mut out = Vec::new();
    for (name, bytes) in exec.read_files("interpose.")? {
        // Module paths are bytes; a path that is not UTF-8 is shown lossily.
        let r = locks::in_mutex::report::parse(&String::from_utf8_lossy(&bytes))
            .map_err(|e| anyhow!("the interposer's report {name}: {e}"))?;
        out.push(r);
    }
    out.sort_by_key(|r| r.pid);
    Ok(out)
}

/// The processes the interposer was loaded into (its marker at load).
pub fn loaded(exec: &ExecDir) -> Result<Vec<u32>> {
    Ok(exec.read_files("loaded.")?.iter().filter_map(|(name, _)| pid_of(name)).collect())
}

/// The `pthread_mutex_init` calls of every process, by outcome.
pub fn inits(reports: &[Report]) -> MutexInits {
    let mut t = MutexInits::default();
    for r in reports {
        let [recursive, errorcheck, robust, pi_or_pp, pshared] = r.inits.glibc;
        t.swapped += r.inits.swapped;
        t.recursive += recursive;
        t.errorcheck += errorcheck;
        t.robust += robust;
        t.pi_or_pp += pi_or_pp;
        t.pshared += pshared;
    }
    t
}

/// Every mutex of every process, named, most waited-on first.
pub fn profiles(reports: &[Report], symbols: &mut Symbolizer) -> Vec<MutexProfile> {
    let mut out: Vec<MutexProfile> = reports
        .iter()
        .flat_map(|r| r.mutexes.iter().map(move |m| (r, m)))
        .map(|(r, m)| {
            let (c, at) = (&m.counts, &m.site);
            let dynamic = at.symbol.as_deref().map(|s| (s, at.symbol_address));
            let (site, offset) = symbols.name(c.site, &at.module, at.module_base, dynamic);
            MutexProfile {
                pid: r.pid,
                address: c.address,
                site,
                module: at.module.clone(),
                offset,
                kind: c.kind,
                swapped: r.lock != "pthread" && locks::in_mutex::swappable_kind(c.kind),
                counts: MutexCounts {
                    acquisitions: c.acquisitions,
                    contended: c.contended,
                    try_failed: c.try_failed,
                    wait_ns: c.wait_ns,
                    max_wait_ns: c.max_wait_ns,
                    p50_wait_ns: c.p50_wait_ns,
                    p99_wait_ns: c.p99_wait_ns,
                },
                mean_hold_ns: if c.holds > 0 { c.hold_ns as f64 / c.holds as f64 } else { 0.0 },
            }
        })
        .collect();
    out.sort_by(|a, b| {
        (b.counts.wait_ns, b.counts.acquisitions).cmp(&(a.counts.wait_ns, a.counts.acquisitions))
    });
    out
}
