//! `contend lock --affinity none|spread|same`: where the workers run.
//! An axis, so that pinned and unpinned points run in one sweep.

use super::choice::{choice_name, parse_choice};
use serde::Serialize;
use std::fmt;

/// Where each worker of a lock point may run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WorkerAffinity {
    /// Not pinned: the scheduler places and moves the workers (over the
    /// CPUs contend may use).
    #[default]
    None,
    /// Worker i pinned to the i-th usable CPU, modulo their count: perf
    /// bench futex's placement (it pins thread i to CPU i mod N).
    Spread,
    /// Every worker pinned to the first usable CPU: contention with no
    /// parallelism, each hand-off a context switch on that CPU.
    Same,
}

impl WorkerAffinity {
    /// Whether the workers run unpinned (left out of exports then, so a
    /// point reads as it did before the axis existed).
    pub fn is_none(&self) -> bool {
        *self == WorkerAffinity::None
    }

    /// The CPU worker `worker` is pinned to, drawn from the usable `cpus`
    /// (sorted); None when unpinned or no CPU is known.
    pub fn cpu_of(self, worker: usize, cpus: &[usize]) -> Option<usize> {
        match self {
            _ if cpus.is_empty() => None,
            WorkerAffinity::None => None,
            WorkerAffinity::Spread => Some(cpus[worker % cpus.len()]),
            WorkerAffinity::Same => Some(cpus[0]),
        }
    }
}

/// Each placement's CLI name.
const NAMES: [(&str, WorkerAffinity); 3] =
    [("none", WorkerAffinity::None), ("spread", WorkerAffinity::Spread), ("same", WorkerAffinity::Same)];

impl fmt::Display for WorkerAffinity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(choice_name(*self, &NAMES))
    }
}

/// Parses `none`, `spread` or `same`.
pub fn parse_affinity(text: &str) -> Result<WorkerAffinity, String> {
    parse_choice(text, "affinity", &NAMES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affinities_parse_and_print() {
        for a in [WorkerAffinity::None, WorkerAffinity::Spread, WorkerAffinity::Same] {
            assert_eq!(parse_affinity(&a.to_string()), Ok(a));
        }
        assert!(parse_affinity("cross").unwrap_err().contains("none, spread or same"));
    }

    #[test]
    fn spread_goes_round_the_usable_cpus_as_perf_bench_does() {
        let cpus = [2, 5, 7];
        let spread: Vec<_> = (0..5).map(|i| WorkerAffinity::Spread.cpu_of(i, &cpus)).collect();
        assert_eq!(spread, [Some(2), Some(5), Some(7), Some(2), Some(5)]);
        assert!((0..5).all(|i| WorkerAffinity::Same.cpu_of(i, &cpus) == Some(2)));
        assert!((0..5).all(|i| WorkerAffinity::None.cpu_of(i, &cpus).is_none()));
        assert_eq!(WorkerAffinity::Spread.cpu_of(0, &[]), None);
    }
}
