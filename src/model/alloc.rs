//! What one alloc point measured: the pattern (threads freeing their own
//! blocks, or producer/consumer pairs freeing each other's), one run of a
//! pattern under an allocator, and the point's result.

use crate::measure::cpu::CpuSplit;
use crate::measure::futex::FutexCounts;
use crate::model::family::{Cell, Column, Family, Key, KeyIn, Metric};
use crate::model::run::{RunInfo, RunRecord};
use nix::sys::signal::Signal;
use serde::{Deserialize, Serialize};

/// Which pattern.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// Each thread frees what it allocated.
    Local,
    /// Producers allocate, consumers free.
    Pairs,
}

/// One run of one pattern under one allocator.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct AllocSample {
    /// Its round, start time and status (measured, rejected, counting).
    #[serde(flatten)]
    pub run: RunInfo,
    /// The pattern.
    pub pattern: Pattern,
    /// The allocator as given (with tunables).
    pub allocator: String,
    /// The library preloaded, if any.
    pub preloaded: Option<String>,
    /// What the child saw mapped (proof the preload took).
    pub mapped_allocator: Option<String>,
    /// GLIBC_TUNABLES as the child saw it (proof the tunables reached it).
    pub glibc_tunables: Option<String>,
    /// The child's workload wall time, s.
    pub wall_s: f64,
    /// The child's user CPU, s (wait4).
    pub user_s: f64,
    /// The child's system CPU, s (wait4).
    pub sys_s: f64,
    /// mallocs + frees.
    pub operations: u64,
    /// operations / wall_s.
    pub ops_per_s: f64,
    /// ops_per_s relative to glibc's for the same pattern in this run.
    pub vs_glibc: Option<f64>,
    /// Peak resident set, kB.
    pub max_rss_kib: i64,
    /// Voluntary context switches.
    pub voluntary_context_switches: i64,
    /// Involuntary context switches.
    pub involuntary_context_switches: i64,
    /// All futex syscalls of the child, when countable.
    pub futex: Option<FutexCounts>,
    /// Of those, the ones the pattern's own semaphores made.
    pub own_futex_calls: u64,
    /// The rest: the allocator's and libc's (`futex.calls - own`).
    pub allocator_futex_calls: Option<u64>,
    /// System-wide CPU split from the child's start to its reaping (what
    /// --max-steal screens on), None if /proc/stat could not be read.
    pub cpu: Option<CpuSplit>,
    /// From the child's start to its reaping, s.
    pub elapsed_s: f64,
}

impl RunRecord for AllocSample {
    fn info(&self) -> &RunInfo {
        &self.run
    }
    fn info_mut(&mut self) -> &mut RunInfo {
        &mut self.run
    }
    fn metric(&self) -> f64 {
        self.ops_per_s
    }
    fn cut_short(&self) -> Option<Signal> {
        // An interrupted child is an error (Interrupted), never a sample.
        None
    }
    fn disturbance_pct(&self) -> Option<f64> {
        self.cpu.and_then(|cpu| cpu.disturbance_pct(self.elapsed_s, self.user_s + self.sys_s))
    }
}

/// One point of an alloc sweep: a pattern under an allocator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct AllocPoint {
    /// The pattern.
    pub pattern: Pattern,
    /// The allocator as given (with tunables).
    pub allocator: String,
}

/// The alloc family in exports (see [`crate::model::family`]). Its key is
/// read from the sample, where version-2 exports kept it.
pub const FAMILY: Family = Family {
    name: "alloc",
    key_in: KeyIn::Sample,
    identity: &[Key::Field("pattern"), Key::Field("allocator")],
    settings: &[],
    metric: ops_per_s,
    columns: &[
        Column { header: "pattern", path: &["point", "pattern"], cell: Cell::Text },
        Column { header: "allocator", path: &["point", "allocator"], cell: Cell::Text },
        Column { header: "ops/s", path: &["stats", "mean"], cell: Cell::Si },
        Column { header: "±%", path: &["stats", "ci95_pct"], cell: Cell::Pct },
        Column { header: "runs", path: &["stats", "n"], cell: Cell::Text },
        Column { header: "vs glibc", path: &["sample", "vs_glibc"], cell: Cell::Fixed(2) },
    ],
    figure: None,
    details: crate::model::family::no_details,
};

fn ops_per_s(_spec: &serde_json::Value) -> Metric {
    Metric { name: "ops/s", path: &["ops_per_s"], higher_is_better: true }
}

/// One pattern under one allocator and what its runs measured (ops/s);
/// its sample is the run with the median ops/s (its `vs_glibc` compares
/// means).
pub type AllocResult = super::Measured<AllocPoint, AllocSample>;

#[cfg(test)]
mod family_tests {
    #[test]
    fn every_field_of_an_alloc_point_is_identity_or_setting() {
        let p = super::AllocPoint { pattern: super::Pattern::Local, allocator: "glibc".into() };
        crate::model::family::check::classifies_every_field(
            &super::FAMILY,
            &serde_json::to_value(&p).unwrap(),
        );
    }
}
