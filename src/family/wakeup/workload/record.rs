//! What side A of one pair measured: three latency histograms and the
//! counters that explain them. Worker processes send it back to the
//! coordinator as JSON with the histograms in HdrHistogram's compressed
//! encoding (base64).

use crate::family::wakeup::placement::Placement;
use crate::measure::latency::Latencies;
use crate::model::wakeup::{Distribution, PairSample};
use serde::{Deserialize, Serialize};

/// One pair's measurements.
#[derive(Debug, Clone, Default)]
pub struct PairRecord {
    /// A's post to A's wake-up.
    pub round_trip: Latencies,
    /// A's post to B's wake-up, measured across the two threads' stamps.
    pub a_to_b: Latencies,
    /// B's post to A's wake-up.
    pub b_to_a: Latencies,
    /// One-way times that came out negative (clock skew between CPUs),
    /// recorded as 0.
    pub negative_one_way: u64,
    /// Rounds in which A and B ran on the same CPU.
    pub same_cpu_rounds: u64,
    /// CPUs A was seen on (bit per CPU, CPUs 0..63).
    pub cpus_a: u64,
    /// CPUs B was seen on.
    pub cpus_b: u64,
    /// Rounds whose sleep overran the schedule by a whole interval (the
    /// schedule then restarts from now instead of bursting to catch up).
    pub late_starts: u64,
    /// Round trips tagged in the trace buffer.
    pub tagged: u64,
    /// Whether this pair stopped tracing.
    pub stopped_trace: bool,
}

/// The serialized form.
#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct Wire {
    round_trip: String,
    a_to_b: String,
    b_to_a: String,
    negative_one_way: u64,
    same_cpu_rounds: u64,
    cpus_a: u64,
    cpus_b: u64,
    late_starts: u64,
    tagged: u64,
    stopped_trace: bool,
}

impl PairRecord {
    /// Serializes for the trip from a worker process.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&Wire {
            round_trip: self.round_trip.encode_base64(),
            a_to_b: self.a_to_b.encode_base64(),
            b_to_a: self.b_to_a.encode_base64(),
            negative_one_way: self.negative_one_way,
            same_cpu_rounds: self.same_cpu_rounds,
            cpus_a: self.cpus_a,
            cpus_b: self.cpus_b,
            late_starts: self.late_starts,
            tagged: self.tagged,
            stopped_trace: self.stopped_trace,
        })
        .expect("plain data serializes")
    }

    /// Reads what [`Self::to_json`] wrote.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let w: Wire = serde_json::from_str(text).map_err(|e| format!("a pair record: {e}"))?;
        Ok(Self {
            round_trip: Latencies::decode_base64(&w.round_trip)?,
            a_to_b: Latencies::decode_base64(&w.a_to_b)?,
            b_to_a: Latencies::decode_base64(&w.b_to_a)?,
            negative_one_way: w.negative_one_way,
            same_cpu_rounds: w.same_cpu_rounds,
            cpus_a: w.cpus_a,
            cpus_b: w.cpus_b,
            late_starts: w.late_starts,
            tagged: w.tagged,
            stopped_trace: w.stopped_trace,
        })
    }
}

/// The CPUs in a bit mask, as a kernel-style list.
pub fn cpu_mask_list(mask: u64) -> String {
    let cpus: Vec<usize> = (0..64).filter(|c| mask & (1 << c) != 0).collect();
    crate::model::value::format_cpu_list(&cpus)
}

/// Summarizes pair `pair`'s record.
pub fn pair_sample(pair: usize, placement: &Placement, rec: &PairRecord) -> PairSample {
    let mut one_way = rec.a_to_b.clone();
    one_way.merge(&rec.b_to_a);
    let rounds = rec.round_trip.len();
    PairSample {
        pair,
        placement: placement.label(),
        cpus_a: cpu_mask_list(rec.cpus_a),
        cpus_b: cpu_mask_list(rec.cpus_b),
        same_cpu_pct: if rounds == 0 { 0.0 } else { 100.0 * rec.same_cpu_rounds as f64 / rounds as f64 },
        round_trip: Distribution::of(&rec.round_trip),
        one_way: Distribution::of(&one_way),
        a_to_b: rec.a_to_b.summary(),
        b_to_a: rec.b_to_a.summary(),
        negative_one_way: rec.negative_one_way,
        late_starts: rec.late_starts,
        tagged: rec.tagged,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_survives_the_trip() {
        let mut r = PairRecord::default();
        for v in [1_000, 2_000, 3_000_000] {
            r.round_trip.record(v);
            r.a_to_b.record(v / 2);
        }
        r.b_to_a.record(7);
        r.same_cpu_rounds = 2;
        r.cpus_a = 0b101;
        r.tagged = 1;
        let back = PairRecord::from_json(&r.to_json()).unwrap();
        assert_eq!(back.round_trip.buckets(), r.round_trip.buckets());
        assert_eq!(back.a_to_b.len(), 3);
        assert_eq!(back.b_to_a.len(), 1);
        assert_eq!((back.same_cpu_rounds, back.cpus_a, back.tagged), (2, 0b101, 1));
        assert!(PairRecord::from_json("{}").is_err());
        assert_eq!(cpu_mask_list(0b1011), "0-1,3");
    }
}
