//! What a reader of `contend lock`'s numbers must know about one point:
//! steal and other load in its window, outlier runs, and a window too
//! short for its hold. The lock family's judgement, over the shared
//! warnings of `model::warning::common`.

use crate::model::lock::PointResult;
use crate::model::run::measured;
use crate::model::warning::common::{noise, outliers};
use crate::model::warning::{Warning, WarningKind};

/// Fewer critical sections per worker than this in a window and the
/// window is too short for its hold.
const MIN_CS_PER_WORKER: f64 = 100.0;

/// The warnings for one measured point.
pub fn for_point(r: &PointResult, cpus: usize, precision_pct: Option<f64>) -> Vec<Warning> {
    let (p, s) = (&r.point, &r.sample);
    let name = p.label();
    let mut out = Vec::new();
    out.extend(noise(&name, &s.cpu, s.window_s, s.process.cpu_s, cpus));
    // The statistics' outlier indices count measured runs only.
    let cs: Vec<f64> = measured(&r.runs).map(|run| run.cs_per_s).collect();
    out.extend(outliers(&name, "cs/s", &r.stats, &cs, precision_pct));
    if p.workers > 0 && (s.acquisitions as f64 / f64::from(p.workers)) < MIN_CS_PER_WORKER {
        out.push(Warning::point(
            WarningKind::TooFewSamples,
            &name,
            format!(
                "only {:.0} critical sections per worker in the window: too short for a hold of {}; \
                 use a longer --duration",
                s.acquisitions as f64 / f64::from(p.workers),
                p.hold
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::lock::LockSample;
    use crate::model::lock::Point;
    use crate::model::Mode;

    fn result(steal: f64, usr: f64, sys: f64, cpu_s: f64, acquisitions: u64) -> PointResult {
        let mut sample = blank();
        sample.window_s = 1.0;
        sample.cpu.steal_pct = steal;
        sample.cpu.usr_pct = usr;
        sample.cpu.sys_pct = sys;
        sample.process.cpu_s = cpu_s;
        sample.acquisitions = acquisitions;
        PointResult::single(Point::new("futex", Mode::Threads, 2), sample)
    }

    fn blank() -> LockSample {
        LockSample {
            run: Default::default(),
            window_s: 1.0,
            acquisitions: 0,
            cs_per_s: 0.0,
            mean_hold_ns: None,
            stretched_holds: 0,
            fairness: Default::default(),
            cpu: Default::default(),
            process: Default::default(),
            memory: Default::default(),
            fault: None,
            interrupted: None,
            futex: None,
            coordinator_cpu_s: 0.0,
            lock_counters: None,
            acquire_latency: None,
            futex_hash_slots: None,
            rw: None,
            workers: Vec::new(),
            total_acquisitions: 0,
        }
    }

    fn for_point_(r: &PointResult, cpus: usize) -> Vec<Warning> {
        for_point(r, cpus, None)
    }

    #[test]
    fn a_clean_point_has_no_warning() {
        // 2 CPUs fully busy, all of it our workers' 2 CPU-seconds.
        assert!(for_point_(&result(0.0, 60.0, 40.0, 2.0, 100_000), 2).is_empty());
    }

    #[test]
    fn each_problem_is_named() {
        let w = for_point_(&result(7.5, 60.0, 40.0, 2.0, 100_000), 2);
        assert!(w.len() == 1 && w[0].to_string().contains("stole 7.5%"), "{w:?}");
        // 100% busy but our workers used only 1 of 2 CPU-seconds.
        let w = for_point_(&result(0.0, 60.0, 40.0, 1.0, 100_000), 2);
        assert!(w.len() == 1 && w[0].to_string().contains("50% of the CPUs' time"), "{w:?}");
        let w = for_point_(&result(0.0, 60.0, 40.0, 2.0, 10), 2);
        assert!(w.len() == 1 && w[0].to_string().contains("only 5 critical sections per worker"), "{w:?}");
    }
}
