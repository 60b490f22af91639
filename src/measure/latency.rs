//! Latency distributions: an HDR histogram (the hdrhistogram crate, 3
//! significant digits from 1 ns to an hour) with the summary the reports
//! print, and the compressed V2 encoding that exports carry, that
//! HdrHistogram's own tools read and that worker processes use to send
//! their histograms back. Exports before schema version 5 also carried
//! every bucket as a JSON object: 30 times the size (a six-point wakeup
//! export was 52 MB), for nothing the encoding lacks.

use base64::Engine;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::Serialize;

/// Values above an hour are clamped to it (a thread stopped in a debugger).
const HIGHEST_NS: u64 = 3_600_000_000_000;
/// Three significant digits: 0.1% relative error at every scale.
const SIGFIG: u8 = 3;

/// A histogram of latencies in nanoseconds.
#[derive(Debug, Clone)]
pub struct Latencies(Histogram<u64>);

impl Default for Latencies {
    fn default() -> Self {
        Self::new()
    }
}

/// The summary every report prints, in nanoseconds.
#[derive(Debug, Clone, Copy, Serialize, serde::Deserialize, PartialEq, schemars::JsonSchema)]
pub struct LatencySummary {
    /// Samples recorded.
    pub samples: u64,
    /// Smallest.
    pub min_ns: u64,
    /// Median.
    pub p50_ns: u64,
    /// 90th percentile.
    pub p90_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p999_ns: u64,
    /// Largest.
    pub max_ns: u64,
    /// Arithmetic mean.
    pub mean_ns: f64,
    /// Standard deviation.
    pub stdev_ns: f64,
}

/// One recorded bucket: `count` samples whose value is equivalent (within
/// the histogram's precision) to `value_ns`.
#[derive(Debug, Clone, Copy, Serialize, serde::Deserialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct Bucket {
    /// The highest value equivalent to this bucket's samples.
    pub value_ns: u64,
    /// Samples in the bucket.
    pub count: u64,
}

/// A distribution as exports carry it: its summary and everything needed
/// to redraw it.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Distribution {
    /// Min, percentiles, max, mean; None when nothing was recorded.
    pub summary: Option<LatencySummary>,
    /// The histogram (3 significant digits) in HdrHistogram's compressed
    /// V2 encoding, base64 (readable by HdrHistogram's own tools).
    pub hdr_v2_base64: String,
}

impl Distribution {
    /// All of `parts` as one distribution.
    pub fn merged<'a>(parts: impl IntoIterator<Item = &'a Distribution>) -> Self {
        let mut h = Latencies::new();
        for d in parts {
            h.merge(&d.histogram());
        }
        Self::of(&h)
    }

    /// Summarizes a histogram.
    pub fn of(h: &Latencies) -> Self {
        Self { summary: h.summary(), hdr_v2_base64: h.encode_base64() }
    }

    /// The histogram, decoded; an error for an encoding that does not
    /// decode (an export edited by hand).
    pub fn try_histogram(&self) -> Result<Latencies, String> {
        Latencies::decode_base64(&self.hdr_v2_base64)
    }

    /// The histogram of a distribution contend made (its encoding always
    /// decodes; one that does not reads as empty).
    pub fn histogram(&self) -> Latencies {
        self.try_histogram().unwrap_or_default()
    }

    /// The histogram of the distribution an export keeps at `v` (an object
    /// with `hdr_v2_base64`; exports before version 5 also list `buckets`,
    /// which say the same).
    pub fn from_export(v: &serde_json::Value) -> Result<Latencies, String> {
        let text = v["hdr_v2_base64"].as_str().ok_or("no hdr_v2_base64 in a distribution")?;
        Latencies::decode_base64(text)
    }
}

impl Latencies {
    /// An empty histogram. Its counts are allocated (and touched) here, not
    /// on the first records inside the measured loop.
    pub fn new() -> Self {
        let mut h = Histogram::new_with_bounds(1, HIGHEST_NS, SIGFIG).expect("valid histogram bounds");
        // Recording and clearing the extremes touches the counts array's
        // pages at both ends before any latency is measured.
        h.saturating_record(HIGHEST_NS);
        h.saturating_record(1);
        h.reset();
        Self(h)
    }

    /// Records one latency; values above an hour count as an hour.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.0.saturating_record(ns.max(1));
    }

    /// Records `count` latencies of `ns` each.
    pub fn record_n(&mut self, ns: u64, count: u64) {
        self.0.saturating_record_n(ns.max(1), count);
    }

    /// Samples recorded.
    pub fn len(&self) -> u64 {
        self.0.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds another histogram's samples.
    pub fn merge(&mut self, other: &Latencies) {
        self.0.add(&other.0).expect("histograms with the same bounds");
    }

    /// The value at quantile `q` (0..=1).
    pub fn quantile(&self, q: f64) -> u64 {
        self.0.value_at_quantile(q)
    }

    /// Samples at or below `ns`.
    pub fn count_up_to(&self, ns: u64) -> u64 {
        self.0.count_between(0, ns)
    }

    /// Min, percentiles, max, mean; None when empty.
    pub fn summary(&self) -> Option<LatencySummary> {
        let h = &self.0;
        (!h.is_empty()).then(|| LatencySummary {
            samples: h.len(),
            min_ns: h.min(),
            p50_ns: h.value_at_quantile(0.5),
            p90_ns: h.value_at_quantile(0.9),
            p99_ns: h.value_at_quantile(0.99),
            p999_ns: h.value_at_quantile(0.999),
            max_ns: h.max(),
            mean_ns: h.mean(),
            stdev_ns: h.stdev(),
        })
    }

    /// Every non-empty bucket, in increasing order.
    pub fn buckets(&self) -> Vec<Bucket> {
        self.0
            .iter_recorded()
            .map(|v| Bucket { value_ns: v.value_iterated_to(), count: v.count_at_value() })
            .collect()
    }

    /// The compressed V2 encoding (what HdrHistogram's tools call a
    /// histogram log entry).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        V2DeflateSerializer::new().serialize(&self.0, &mut out).expect("serializing into memory cannot fail");
        out
    }

    /// [`Self::encode`] as base64, for JSON.
    pub fn encode_base64(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(self.encode())
    }

    /// Decodes what [`Self::encode_base64`] produced.
    pub fn decode_base64(text: &str) -> Result<Self, String> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(|e| format!("bad base64 in a latency histogram: {e}"))?;
        Self::decode(&bytes)
    }

    /// Decodes what [`Self::encode`] produced.
    pub fn decode(bytes: &[u8]) -> Result<Self, String> {
        let h: Histogram<u64> = Deserializer::new()
            .deserialize(&mut &bytes[..])
            .map_err(|e| format!("decoding a latency histogram: {e:?}"))?;
        let mut out = Self::new();
        out.0.add(&h).map_err(|e| format!("decoding a latency histogram: {e:?}"))?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(values: &[u64]) -> Latencies {
        let mut h = Latencies::new();
        for &v in values {
            h.record(v);
        }
        h
    }

    #[test]
    fn summary_reads_the_recorded_values() {
        let h = filled(&(1..=1000).collect::<Vec<_>>());
        let s = h.summary().unwrap();
        assert_eq!(s.samples, 1000);
        assert_eq!(s.min_ns, 1);
        assert_eq!(s.max_ns, 1000);
        assert_eq!(s.p50_ns, 500);
        assert_eq!(s.p99_ns, 990);
        assert!((s.mean_ns - 500.5).abs() < 1.0);
        assert!(Latencies::new().summary().is_none());
    }

    #[test]
    fn buckets_account_for_every_sample() {
        let h = filled(&[5, 5, 7, 1_000_000, 1_000_001]);
        let b = h.buckets();
        assert_eq!(b.iter().map(|b| b.count).sum::<u64>(), 5);
        assert_eq!(b[0], Bucket { value_ns: 5, count: 2 });
        assert!(b.windows(2).all(|w| w[0].value_ns < w[1].value_ns));
    }

    #[test]
    fn encoding_round_trips_and_merging_adds() {
        let a = filled(&[10, 20, 30_000]);
        let back = Latencies::decode(&a.encode()).unwrap();
        assert_eq!(back.buckets(), a.buckets());
        let mut m = filled(&[40]);
        m.merge(&back);
        assert_eq!(m.len(), 4);
        assert!(Latencies::decode(b"not a histogram").is_err());
        let d = Distribution::of(&m);
        assert_eq!(d.histogram().buckets(), m.buckets(), "what an export carries is the whole histogram");
        // Zero and out-of-range values are clamped, not lost.
        let c = filled(&[0, u64::MAX]);
        assert_eq!(c.len(), 2);
    }
}
