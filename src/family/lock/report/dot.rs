//! What `contend lock`'s figure needs of one point (a [`Dot`]): its axes,
//! its mean and interval, its fairness and its waits, from a run's
//! results or read back from an export (`contend plot`, `report`).

use crate::family::lock::sweep::PointResult;
use crate::measure::latency::Latencies;
use crate::model::value::{Work, WorkerAffinity};
use crate::model::Mode;
use serde::Deserialize;

/// What the figure needs of one point, from a run's results or read back
/// from an export (`contend plot`).
#[derive(Debug, Clone, Deserialize)]
pub struct Dot {
    /// Which export it came from, when a figure joins several.
    #[serde(skip)]
    pub source: Option<String>,
    /// The lock.
    pub lock: String,
    /// Threads or processes.
    pub mode: Mode,
    /// Worker count.
    pub workers: u32,
    /// Spin budget, for locks that have one.
    pub spin: Option<u32>,
    /// Waiting policy, for locks that have one.
    pub spinners: Option<String>,
    /// glibc's mutex spin count, where set.
    #[serde(default)]
    pub glibc_spin: Option<u32>,
    /// Locks the workers were spread over.
    #[serde(default = "crate::model::lock::one")]
    pub locks: u32,
    /// The private futex hash, where set.
    #[serde(default)]
    pub futex_hash: Option<u32>,
    /// Share of reads, for a reader-writer lock's point.
    #[serde(default)]
    pub read_pct: Option<u32>,
    /// Where the workers ran (`--affinity`; unpinned when absent).
    #[serde(default)]
    pub affinity: WorkerAffinity,
    /// Work inside the lock.
    pub hold: Work,
    /// Work outside it.
    pub idle: Work,
    /// Mean cs/s over the runs.
    #[serde(skip)]
    pub mean: f64,
    /// Half-width of its 95% interval.
    #[serde(skip)]
    pub ci95: Option<f64>,
    /// Jain's index of the median run.
    #[serde(skip)]
    pub jain: f64,
    /// The wait to acquire at 50% and 99%, µs, pooled over the runs
    /// (None when acquisitions were not timed, or too few for p99).
    #[serde(skip)]
    pub wait_us: Option<(f64, Option<f64>)>,
    /// A reader-writer lock's point: the p99 wait of its reads and of its
    /// writes, µs, each where enough were timed.
    #[serde(skip)]
    pub rw_wait_us: Option<(Option<f64>, Option<f64>)>,
}

impl Dot {
    /// The lock, prefixed with its export's name when there are several.
    pub(super) fn series_lock(&self) -> String {
        match &self.source {
            Some(s) => format!("{s}: {}", self.lock),
            None => self.lock.clone(),
        }
    }

    pub(super) fn of(r: &PointResult) -> Self {
        let p = &r.point;
        Dot {
            source: None,
            lock: p.lock.to_string(),
            mode: p.mode,
            workers: p.workers,
            spin: p.spin,
            spinners: p.spinners.map(|s| s.to_string()),
            glibc_spin: p.glibc_spin,
            locks: p.locks,
            futex_hash: p.futex_hash,
            read_pct: p.read_pct,
            affinity: p.affinity,
            hold: p.hold,
            idle: p.idle,
            mean: r.stats.mean,
            ci95: r.stats.ci95,
            jain: r.sample.fairness.jain,
            wait_us: r.acquire_latency().and_then(|(_, h)| wait_us(&h)),
            rw_wait_us: r.rw_waits().map(|(read, write)| (p99_us(&read), p99_us(&write))),
        }
    }

    /// What the wait panel draws for this dot, (dashed, solid), µs: p50
    /// and p99; or, in a figure with reader-writer points (`rw`), the p99
    /// of reads and of writes, a mutex's acquisitions counting as writes.
    pub(super) fn wait_lines(&self, rw: bool) -> (Option<f64>, Option<f64>) {
        match (rw, self.rw_wait_us, self.wait_us) {
            (true, Some(read_write), _) => read_write,
            (true, None, Some((_, p99))) => (None, p99),
            (false, _, Some((p50, p99))) => (Some(p50), p99),
            (_, _, None) => (None, None),
        }
    }

    /// The points of a lock export (`doc`), named `source` when a figure
    /// joins several exports.
    pub fn read(doc: &serde_json::Value, source: Option<&str>) -> Result<Vec<Dot>, String> {
        let points = doc.get("points").and_then(|p| p.as_array()).ok_or("no `points` list")?;
        points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut dot = Dot::deserialize(&p["point"]).map_err(|e| format!("point {i}: {e}"))?;
                dot.source = source.map(str::to_string);
                dot.mean = p["stats"]["mean"].as_f64().ok_or_else(|| format!("point {i}: no stats.mean"))?;
                dot.ci95 = p["stats"]["ci95"].as_f64();
                dot.jain = p["sample"]["fairness"]["jain"].as_f64().unwrap_or(f64::NAN);
                dot.wait_us = pooled_wait(p, &["acquire_latency", "distribution"]).and_then(|h| wait_us(&h));
                if dot.read_pct.is_some() {
                    let p99 = |at: &str| pooled_wait(p, &["rw", at]).and_then(|h| p99_us(&h));
                    dot.rw_wait_us = dot.wait_us.map(|_| (p99("read_wait"), p99("write_wait")));
                }
                Ok(dot)
            })
            .collect()
    }
}

/// p50 and p99 (when enough waits lie above it) of a wait histogram, µs.
fn wait_us(h: &Latencies) -> Option<(f64, Option<f64>)> {
    (!h.is_empty()).then(|| (h.quantile(0.5) as f64 / 1e3, p99_us(h)))
}

/// p99 of a wait histogram, µs, when enough waits lie above it.
fn p99_us(h: &Latencies) -> Option<f64> {
    crate::output::plot::enough_for(0.99, h.len()).then(|| h.quantile(0.99) as f64 / 1e3)
}

/// An exported point's waits, the distribution at `at` in each run,
/// pooled over the runs its statistics use (the measured ones, or those
/// cut short when no run was measured), as the table pools them.
pub(super) fn pooled_wait(p: &serde_json::Value, at: &[&str]) -> Option<Latencies> {
    let runs = p["runs"].as_array()?;
    let measured = runs.iter().any(|r| r["status"] == "measured");
    let used = if measured { "measured" } else { "cut_short" };
    let mut h: Option<Latencies> = None;
    for r in runs.iter().filter(|r| r["status"] == used) {
        let distribution = at.iter().fold(r, |v, key| &v[*key]);
        let part = crate::measure::latency::Distribution::from_export(distribution).ok()?;
        h.get_or_insert_with(Latencies::new).merge(&part);
    }
    h
}
