//! Where the two threads of each wake-up pair run: `--affinity` turns the
//! usable CPUs into one CPU set per thread, and each worker pins itself
//! (sched_setaffinity on the calling thread) before it reaches the gate.

use crate::model::value::choice::{choice_name, parse_choice};
use crate::model::value::format_cpu_list;
use serde::Serialize;

/// A placement policy for the pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Affinity {
    /// Both threads of pair i on one CPU (pairs round-robin over the CPUs):
    /// every wake-up is a context switch on that CPU, no IPI.
    Same,
    /// The two threads on different CPUs: A of pair i on CPU 2i, B on
    /// 2i+1 (mod the CPUs): every wake-up crosses CPUs.
    Cross,
    /// Not pinned (restricted to `--cpus` when given): the scheduler
    /// decides, and the report shows how often it put them together.
    None,
    /// A of pair i on CPU i, B on CPU i + half the CPUs: partners as far
    /// apart as the list allows, and every CPU hosts as many A as B
    /// threads, so pairs share CPUs evenly.
    Spread,
}

/// Each placement's CLI name.
const NAMES: [(&str, Affinity); 4] = [
    ("same", Affinity::Same),
    ("cross", Affinity::Cross),
    ("none", Affinity::None),
    ("spread", Affinity::Spread),
];

impl Affinity {
    /// The CLI name.
    pub fn name(self) -> &'static str {
        choice_name(self, &NAMES)
    }

    /// Parses a CLI name.
    pub fn parse(text: &str) -> Result<Self, String> {
        parse_choice(text, "affinity", &NAMES)
    }
}

/// The CPUs each thread of one pair may run on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Placement {
    /// For thread A (the one that measures).
    pub a: Vec<usize>,
    /// For thread B (the one that answers).
    pub b: Vec<usize>,
}

impl Placement {
    /// "0→1", or the sets when unpinned.
    pub fn label(&self) -> String {
        format!("{}→{}", format_cpu_list(&self.a), format_cpu_list(&self.b))
    }
}

/// One placement per pair over the usable `cpus` (sorted, non-empty).
pub fn plan(affinity: Affinity, cpus: &[usize], pairs: usize) -> Result<Vec<Placement>, String> {
    let m = cpus.len();
    if m == 0 {
        return Err("no CPU left to run on (check --cpus and --exclude-cpus)".into());
    }
    if m < 2 && matches!(affinity, Affinity::Cross | Affinity::Spread) {
        return Err(format!(
            "--affinity {} puts a pair's threads on different CPUs, but only CPU {} is usable",
            affinity.name(),
            cpus[0]
        ));
    }
    let one = |i: usize| vec![cpus[i % m]];
    Ok((0..pairs)
        .map(|i| match affinity {
            Affinity::Same => Placement { a: one(i), b: one(i) },
            Affinity::Cross => Placement { a: one(2 * i), b: one(2 * i + 1) },
            Affinity::Spread => Placement { a: one(i), b: one(i + m.div_ceil(2)) },
            Affinity::None => Placement { a: cpus.to_vec(), b: cpus.to_vec() },
        })
        .collect())
}

/// The CPUs this process may run on (none if the kernel would not say).
pub fn allowed_cpus() -> Vec<usize> {
    locks::sys::sched::allowed_cpus().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_placement_on_two_cpus() {
        let cpus = [0, 1];
        let same = plan(Affinity::Same, &cpus, 2).unwrap();
        assert_eq!(same[0], Placement { a: vec![0], b: vec![0] });
        assert_eq!(same[1], Placement { a: vec![1], b: vec![1] });
        let cross = plan(Affinity::Cross, &cpus, 2).unwrap();
        assert!(cross.iter().all(|p| p.a == vec![0] && p.b == vec![1]));
        let spread = plan(Affinity::Spread, &cpus, 2).unwrap();
        assert_eq!(spread[0], Placement { a: vec![0], b: vec![1] });
        assert_eq!(spread[1], Placement { a: vec![1], b: vec![0] });
        let none = plan(Affinity::None, &cpus, 1).unwrap();
        assert_eq!(none[0].a, vec![0, 1]);
        assert_eq!(none[0].label(), "0-1→0-1");
    }

    #[test]
    fn partners_differ_whenever_they_must() {
        for m in 2..9 {
            let cpus: Vec<usize> = (10..10 + m).collect();
            for aff in [Affinity::Cross, Affinity::Spread] {
                for p in plan(aff, &cpus, 13).unwrap() {
                    assert_ne!(p.a, p.b, "{aff:?} on {m} CPUs");
                    assert!(cpus.contains(&p.a[0]) && cpus.contains(&p.b[0]));
                }
            }
        }
    }

    #[test]
    fn one_cpu_refuses_cross_and_spread() {
        assert!(plan(Affinity::Cross, &[3], 1).unwrap_err().contains("only CPU 3"));
        assert!(plan(Affinity::Spread, &[3], 1).is_err());
        assert!(plan(Affinity::Same, &[3], 2).is_ok());
        assert!(plan(Affinity::Same, &[], 1).is_err());
    }

    #[test]
    fn this_process_may_run_somewhere() {
        assert!(!allowed_cpus().is_empty());
    }
}
