//! `contend wakeup --export-gnuplot`: the round-trip distribution of each
//! point as percentile rows, the layout of HdrHistogram's percentile plots.
//! Columns: percentile, 1/(1 - percentile) (the x axis that spreads the
//! tail out on a log scale), latency in µs. One block per point.

use crate::family::wakeup::sweep::WakeupResult;

pub use crate::output::percentiles::QUANTILES;

/// The blocks.
pub fn render(results: &[WakeupResult]) -> String {
    let mut out = String::new();
    for (i, r) in results.iter().enumerate() {
        if i > 0 {
            out += "\n\n";
        }
        let h = r.sample.round_trip.histogram();
        out += &format!(
            "# {} {} {} pairs={} samples={}\n# percentile one_over_tail latency_us\n",
            r.point.primitive,
            r.point.affinity.name(),
            r.point.mode.label(),
            r.point.pairs(),
            h.len()
        );
        for q in QUANTILES {
            // The maximum has no finite 1/(1-q): put it one decade past
            // the last percentile, as HdrHistogram's plots do.
            let x = if q < 1.0 { 1.0 / (1.0 - q) } else { 1e5 };
            out += &format!("{:.4} {x:.1} {:.3}\n", 100.0 * q, h.quantile(q) as f64 / 1e3);
        }
    }
    out
}
