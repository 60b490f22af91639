//! One `contend wakeup` point (a primitive under one placement, with
//! everything one run of pairs needs) and the wakeup family as exports
//! describe it: which of the point's fields identify it, its metric, its
//! table and figure.

use crate::family::wakeup::placement::{Affinity, Placement};
use crate::family::wakeup::sched::Sched;
use crate::model::family::{Cell, Column, Family, Figure, Key, KeyIn, Metric};
use crate::model::Mode;
use serde::Serialize;
use std::time::Duration;

/// How a point's measurement ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Length {
    /// After this many recorded round trips per pair.
    Iterations(u64),
    /// After this long, ns.
    Duration(u64),
}

/// One point: everything one run of pairs needs.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct WakeupPoint {
    /// Registry name of the primitive.
    pub primitive: &'static str,
    /// Threads or processes.
    pub mode: Mode,
    /// Placement policy.
    pub affinity: Affinity,
    /// Where each pair's threads run.
    pub placements: Vec<Placement>,
    /// How the measurement ends.
    pub length: Length,
    /// Rounds before recording starts, ns.
    pub warmup_ns: u64,
    /// Sleep between rounds, ns.
    pub interval_ns: u64,
    /// Scheduling of the measured threads.
    pub sched: Sched,
    /// Whether memory is locked.
    pub mlock: bool,
    /// Abort when a pair makes no round trip for this long, ns.
    pub stall_timeout_ns: u64,
}

/// The wakeup family in exports (see [`crate::model::family`]).
pub const FAMILY: Family = Family {
    name: "wakeup",
    key_in: KeyIn::Point,
    identity: &[
        Key::Field("primitive"),
        Key::Field("mode"),
        Key::Field("affinity"),
        Key::Count { name: "pairs", of: "placements" },
        Key::Field("interval_ns"),
        Key::Field("sched"),
    ],
    settings: &["length", "warmup_ns", "mlock", "stall_timeout_ns"],
    metric: round_trip_p50,
    columns: &[
        Column { header: "primitive", path: &["point", "primitive"], cell: Cell::Text },
        Column { header: "placement", path: &["point", "affinity"], cell: Cell::Text },
        Column { header: "samples", path: &["sample", "round_trip", "summary", "samples"], cell: Cell::Text },
        Column {
            header: "p50 µs", path: &["sample", "round_trip", "summary", "p50_ns"], cell: Cell::Micros
        },
        Column { header: "p50 ±% (runs)", path: &["stats", "ci95_pct"], cell: Cell::Pct },
        Column { header: "runs", path: &["stats", "n"], cell: Cell::Text },
        Column {
            header: "p99 µs", path: &["sample", "round_trip", "summary", "p99_ns"], cell: Cell::Micros
        },
        Column {
            header: "p99.9 µs",
            path: &["sample", "round_trip", "summary", "p999_ns"],
            cell: Cell::Micros,
        },
        Column {
            header: "max µs", path: &["sample", "round_trip", "summary", "max_ns"], cell: Cell::Micros
        },
    ],
    figure: Some(Figure::Latency),
    details: crate::model::family::no_details,
};

fn round_trip_p50(_spec: &serde_json::Value) -> Metric {
    Metric { name: "round-trip p50 ns", path: &["round_trip", "summary", "p50_ns"], higher_is_better: false }
}

impl WakeupPoint {
    /// Number of pairs.
    pub fn pairs(&self) -> usize {
        self.placements.len()
    }

    /// "futex cross", for progress lines and warnings.
    pub fn label(&self) -> String {
        let mode = match self.mode {
            Mode::Threads => "",
            Mode::Processes => " procs",
        };
        format!("{} {}{mode}", self.primitive, self.affinity.name())
    }

    /// The longest the window may last.
    pub fn max_window(&self) -> Duration {
        match self.length {
            Length::Duration(ns) => Duration::from_nanos(ns),
            // A fixed count ends when done, and the stall watchdog catches
            // a pair that stops making progress; a year only keeps the
            // deadline arithmetic finite.
            Length::Iterations(_) => Duration::from_secs(365 * 24 * 3600),
        }
    }
}
