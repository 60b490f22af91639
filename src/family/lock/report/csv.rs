//! `contend lock --export-csv`: one row per point with every scalar the
//! JSON carries (per-worker counts and the individual runs stay in the
//! JSON). The per-run columns are the median run's; `cs_per_s_mean` and
//! its interval cover all runs.

use crate::family::lock::sweep::PointResult;
use crate::model::run::Stopped;
use serde::Serialize;

/// One CSV row: a point and its median run.
#[derive(Debug, Default, Serialize)]
struct Row<'a> {
    lock: &'a str,
    mode: &'a str,
    workers: u32,
    locks: u32,
    futex_hash: Option<u32>,
    spin: Option<u32>,
    spinners: Option<String>,
    glibc_spin: Option<u32>,
    read_pct: Option<u32>,
    affinity: String,
    // Machine columns carry numbers: the length in ns and the mode apart
    // (the table's `1µs` / `sleep:50µs` would need parsing).
    hold_ns: u64,
    hold_mode: &'static str,
    idle_ns: u64,
    idle_mode: &'static str,
    window_s: f64,
    acquisitions: u64,
    cs_per_s: f64,
    runs: usize,
    cs_per_s_mean: f64,
    cs_per_s_ci95: Option<f64>,
    cs_per_s_stdev: f64,
    stopped: Option<Stopped>,
    usr_pct: f64,
    sys_pct: f64,
    idle_pct: f64,
    steal_pct: f64,
    mean_hold_ns: Option<f64>,
    stretched_holds: u64,
    min_share_pct: f64,
    max_share_pct: f64,
    jain: f64,
    cpu_s: f64,
    user_s: f64,
    sys_s: f64,
    voluntary_cs: u64,
    involuntary_cs: u64,
    futex_calls: Option<u64>,
    futex_errors: Option<u64>,
    spins: Option<u64>,
    waits: Option<u64>,
    wakes: Option<u64>,
    // Acquisition latency pooled over the runs (the table's wait group).
    wait_every: Option<u32>,
    wait_samples: Option<u64>,
    wait_p50_ns: Option<u64>,
    wait_p99_ns: Option<u64>,
    wait_p999_ns: Option<u64>,
    wait_max_ns: Option<u64>,
    // A reader-writer lock's point: reads and writes apart (the median
    // run's rates; waits pooled over the runs).
    reads_per_s: Option<f64>,
    writes_per_s: Option<f64>,
    read_wait_p99_ns: Option<u64>,
    write_wait_p99_ns: Option<u64>,
    write_wait_max_ns: Option<u64>,
    interrupted: Option<&'a str>,
}

/// A work mode as a CSV cell.
fn mode(m: crate::model::value::WorkMode) -> &'static str {
    match m {
        crate::model::value::WorkMode::Busy => "busy",
        crate::model::value::WorkMode::Sleep => "sleep",
    }
}

/// The CSV text.
pub fn render(results: &[PointResult]) -> String {
    crate::output::csv::render(results.iter().map(|r| {
        let (p, s) = (&r.point, &r.sample);
        let counters = s.lock_counters;
        // Futex counts come from the counting run, when there is one.
        let futex = r.kernel_run().futex;
        let wait = r.acquire_latency();
        let summary = wait.as_ref().and_then(|(_, h)| h.summary());
        let rw_waits = r.rw_waits();
        let (read_wait, write_wait) = match &rw_waits {
            Some((read, write)) => (read.summary(), write.summary()),
            None => (None, None),
        };
        Row {
            lock: p.lock,
            mode: p.mode.label(),
            workers: p.workers,
            locks: p.locks,
            futex_hash: p.futex_hash,
            spin: p.spin,
            spinners: p.spinners.map(|s| s.to_string()),
            glibc_spin: p.glibc_spin,
            read_pct: p.read_pct,
            affinity: p.affinity.to_string(),
            hold_ns: p.hold.ns,
            hold_mode: mode(p.hold.mode),
            idle_ns: p.idle.ns,
            idle_mode: mode(p.idle.mode),
            window_s: s.window_s,
            acquisitions: s.acquisitions,
            cs_per_s: s.cs_per_s,
            runs: r.stats.n,
            cs_per_s_mean: r.stats.mean,
            cs_per_s_ci95: r.stats.ci95,
            cs_per_s_stdev: r.stats.stdev,
            stopped: Some(r.stopped),
            usr_pct: s.cpu.usr_pct,
            sys_pct: s.cpu.sys_pct,
            idle_pct: s.cpu.idle_pct,
            steal_pct: s.cpu.steal_pct,
            mean_hold_ns: s.mean_hold_ns,
            stretched_holds: s.stretched_holds,
            min_share_pct: s.fairness.min_share_pct,
            max_share_pct: s.fairness.max_share_pct,
            jain: s.fairness.jain,
            cpu_s: s.process.cpu_s,
            user_s: s.process.user_s,
            sys_s: s.process.sys_s,
            voluntary_cs: s.process.voluntary_context_switches,
            involuntary_cs: s.process.involuntary_context_switches,
            futex_calls: futex.map(|f| f.calls),
            futex_errors: futex.map(|f| f.errors),
            spins: counters.map(|c| c.spins),
            waits: counters.map(|c| c.waits),
            wakes: counters.map(|c| c.wakes),
            wait_every: wait.as_ref().map(|(every, _)| *every),
            wait_samples: summary.map(|s| s.samples),
            wait_p50_ns: summary.map(|s| s.p50_ns),
            wait_p99_ns: summary.map(|s| s.p99_ns),
            wait_p999_ns: summary.map(|s| s.p999_ns),
            wait_max_ns: summary.map(|s| s.max_ns),
            reads_per_s: s.rw.as_ref().map(|rw| rw.reads_per_s),
            writes_per_s: s.rw.as_ref().map(|rw| rw.writes_per_s),
            read_wait_p99_ns: read_wait.map(|s| s.p99_ns),
            write_wait_p99_ns: write_wait.map(|s| s.p99_ns),
            write_wait_max_ns: write_wait.map(|s| s.max_ns),
            interrupted: s.interrupted.as_deref(),
        }
    }))
}
