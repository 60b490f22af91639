//! `contend lock`'s gnuplot columns: lockscale's layout. For each
//! lock, hold and idle (and spin or spinner policy, where swept), a header
//! line `# <lock> <hold> <idle> <duration>`, then one line per worker
//! count: workers, measured seconds, user CPU s, system CPU s, total
//! acquisitions, and the min, max, mean and sample standard deviation
//! (n - 1, as lockscale computes it) of the per-worker acquisitions. A tenth column adds the workers' total CPU
//! seconds, measured precisely even when the user/system split is below
//! clock-tick resolution (then NaN; see `measure::children`). Blocks are
//! separated by two blank lines, so gnuplot's `index` selects one.

use crate::family::lock::sweep::PointResult;
use std::fmt::Write;

/// Sample standard deviation (n - 1), lockscale's definition; 0 with
/// fewer than two workers.
fn stddev(values: &[u64], mean: f64) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    let sum = values.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>();
    (sum / (values.len() - 1) as f64).sqrt()
}

/// The gnuplot blocks for `results`.
pub fn render(results: &[PointResult]) -> String {
    let mut out = String::new();
    let mut current = String::new();
    for r in results {
        let p = &r.point;
        let s = &r.sample;
        let mut header = format!(
            "# {} {} {} {}",
            p.lock,
            p.hold,
            p.idle,
            crate::model::value::format_nanos(p.duration_ns)
        );
        if let Some(spin) = p.spin {
            let _ = write!(header, " spin={spin}");
        }
        if let Some(policy) = p.spinners {
            let _ = write!(header, " spinners={policy}");
        }
        if header != current {
            if !current.is_empty() {
                out.push_str("\n\n");
            }
            let _ = writeln!(out, "{header}");
            let _ = writeln!(
                out,
                "# {}\tseconds\tuser_s\tsys_s\ttotal\tmin\tmax\tmean\tstddev\tcpu_s",
                p.mode.label()
            );
            current = header;
        }
        let counts: Vec<u64> = s.workers.iter().map(|w| w.acquisitions).collect();
        let mean = if counts.is_empty() { 0.0 } else { s.acquisitions as f64 / counts.len() as f64 };
        let _ = writeln!(
            out,
            "{}\t{:.6}\t{:.3}\t{:.3}\t{}\t{}\t{}\t{:.1}\t{:.1}\t{:.3}",
            p.workers,
            s.window_s,
            s.process.user_s,
            s.process.sys_s,
            s.acquisitions,
            counts.iter().min().copied().unwrap_or(0),
            counts.iter().max().copied().unwrap_or(0),
            mean,
            stddev(&counts, mean),
            s.process.cpu_s
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::family::lock::report::gnuplot::stddev;

    #[test]
    fn sample_stddev_as_lockscale() {
        assert_eq!(stddev(&[], 0.0), 0.0);
        assert_eq!(stddev(&[7], 7.0), 0.0);
        assert_eq!(stddev(&[5, 5, 5], 5.0), 0.0);
        // Population 2.0; sample sqrt(32 / 7).
        let s = stddev(&[2, 4, 4, 4, 5, 5, 7, 9], 5.0);
        assert!((s - (32.0f64 / 7.0).sqrt()).abs() < 1e-12, "{s}");
    }
}
