//! `contend lock --export-csv`: one row per point with every scalar the
//! JSON carries (per-worker counts and the individual runs stay in the
//! JSON). The per-run columns are the median run's; `cs_per_s_mean` and
//! its interval cover all runs.

use crate::family::lock::sweep::PointResult;

const COLUMNS: &[&str] = &[
    "lock",
    "mode",
    "workers",
    "spin",
    "spinners",
    "hold",
    "idle",
    "window_s",
    "acquisitions",
    "cs_per_s",
    "runs",
    "cs_per_s_mean",
    "cs_per_s_ci95",
    "cs_per_s_stdev",
    "stopped",
    "usr_pct",
    "sys_pct",
    "idle_pct",
    "steal_pct",
    "mean_hold_ns",
    "stretched_holds",
    "min_share_pct",
    "max_share_pct",
    "jain",
    "cpu_s",
    "user_s",
    "sys_s",
    "voluntary_cs",
    "involuntary_cs",
    "futex_calls",
    "futex_errors",
    "spins",
    "waits",
    "wakes",
    "interrupted",
];

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or(String::new(), |v| v.to_string())
}

/// The CSV text.
pub fn render(results: &[PointResult]) -> String {
    crate::output::csv::render(
        COLUMNS,
        results.iter().map(|r| {
            let (p, s) = (&r.point, &r.sample);
            let counters = s.lock_counters;
            // Futex counts come from the counting run, when there is one.
            let k = r.kernel_run();
            vec![
                p.lock.to_string(),
                p.mode.label().to_string(),
                p.workers.to_string(),
                opt(p.spin),
                opt(p.spinners),
                p.hold.to_string(),
                p.idle.to_string(),
                format!("{:.6}", s.window_s),
                s.acquisitions.to_string(),
                format!("{:.1}", s.cs_per_s),
                r.stats.n.to_string(),
                format!("{:.1}", r.stats.mean),
                opt(r.stats.ci95.map(|h| format!("{h:.1}"))),
                format!("{:.1}", r.stats.stdev),
                format!("{:?}", r.stopped).to_lowercase(),
                format!("{:.2}", s.cpu.usr_pct),
                format!("{:.2}", s.cpu.sys_pct),
                format!("{:.2}", s.cpu.idle_pct),
                format!("{:.2}", s.cpu.steal_pct),
                opt(s.mean_hold_ns.map(|ns| format!("{ns:.1}"))),
                s.stretched_holds.to_string(),
                format!("{:.3}", s.fairness.min_share_pct),
                format!("{:.3}", s.fairness.max_share_pct),
                format!("{:.5}", s.fairness.jain),
                format!("{:.6}", s.process.cpu_s),
                format!("{:.6}", s.process.user_s),
                format!("{:.6}", s.process.sys_s),
                s.process.voluntary_context_switches.to_string(),
                s.process.involuntary_context_switches.to_string(),
                opt(k.futex.map(|f| f.calls)),
                opt(k.futex.map(|f| f.errors)),
                opt(counters.map(|c| c.spins)),
                opt(counters.map(|c| c.waits)),
                opt(counters.map(|c| c.wakes)),
                opt(s.interrupted.clone()),
            ]
        }),
    )
}
