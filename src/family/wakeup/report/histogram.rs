//! `--histogram`: round-trip histograms as cyclictest prints them, one row
//! per bucket of fixed width and one column per pair, so they paste into
//! gnuplot or a spreadsheet. Built from the HDR buckets, so bucket width
//! is free to choose after the run; samples beyond the last row are
//! counted as overflows instead of printing thousands of empty rows.

use crate::family::wakeup::sweep::WakeupResult;

/// The most rows printed per point.
const MAX_ROWS: u64 = 1000;

/// Renders one block per point.
pub fn render(results: &[WakeupResult], bucket_ns: u64) -> String {
    let mut out = String::new();
    for r in results {
        let pairs = &r.sample.pairs;
        let top = pairs.iter().filter_map(|p| p.round_trip.summary.map(|s| s.max_ns)).max().unwrap_or(0);
        let rows = (top / bucket_ns + 1).min(MAX_ROWS);
        let mut counts = vec![vec![0u64; pairs.len()]; rows as usize];
        let mut overflows = vec![0u64; pairs.len()];
        for (j, p) in pairs.iter().enumerate() {
            for b in &p.round_trip.histogram().buckets() {
                let row = b.value_ns / bucket_ns;
                if row < rows {
                    counts[row as usize][j] += b.count;
                } else {
                    overflows[j] += b.count;
                }
            }
        }
        out += &format!(
            "# {} {}: round-trip histogram, bucket {} (row = lower edge in µs), one column per pair\n",
            r.point.primitive,
            r.point.affinity.name(),
            crate::model::value::format_nanos(bucket_ns)
        );
        for (i, row) in counts.iter().enumerate() {
            // cyclictest prints every row; empty tails are noise here.
            if row.iter().all(|&c| c == 0) && (i as u64 + 1) * bucket_ns > top {
                break;
            }
            let edge = i as f64 * bucket_ns as f64 / 1e3;
            out += &format!("{edge:10.3}");
            for c in row {
                out += &format!(" {c:9}");
            }
            out += "\n";
        }
        out += &format!("# overflows {}\n", join(&overflows));
        let maxes: Vec<u64> = pairs.iter().map(|p| p.round_trip.summary.map_or(0, |s| s.max_ns)).collect();
        out += &format!("# max ns    {}\n\n", join(&maxes));
    }
    out
}

fn join(values: &[u64]) -> String {
    values.iter().map(|v| format!("{v:9}")).collect::<Vec<_>>().join(" ")
}
