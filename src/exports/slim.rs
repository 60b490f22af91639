//! An export read into memory with what its readers use, within a budget.
//!
//! A JSON document held as `serde_json::Value` takes about sixteen times
//! its size (a node is 32 bytes, every key its own allocation): a valid
//! 200 MB export of a profiled `contend run` took 3.5 GB and half a
//! minute to compare. Most of it is the profile every execution carries
//! (each mutex with its stacks and holders), which no reader uses but in
//! the run a table shows: the median run (`sample`) and the futex-counting
//! run (`family::program::report::details::profile_run`). So each run of `points` and
//! `failed` is read whole, one at a time, and a run that is not a counting
//! run loses [`PROFILE_FIELDS`] before the next is read. Everything else
//! is kept as it was.
//!
//! And whatever a file holds, at most [`MAX_NODES`] nodes are alive at
//! once: a file that needs more is refused (the user's mistake, exit 2)
//! instead of filling memory.

use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::cell::Cell;
use std::fmt;

/// The fields of a run that only a profile table reads.
pub const PROFILE_FIELDS: [&str; 3] = ["mutexes", "rwlocks", "symbol_hints"];

/// The most JSON nodes (values) alive at once: about a gigabyte at worst,
/// far above any export contend writes once its runs are slimmed.
pub const MAX_NODES: usize = 12_000_000;

/// Where in the document a value sits, as far as slimming cares.
#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    /// The document itself.
    Top,
    /// `points` or `failed`: a list of entries.
    Entries,
    /// One entry of them.
    Entry,
    /// An entry's `runs`.
    Runs,
    /// Anywhere else (kept whole).
    Other,
}

/// Parses `bytes` as an export, slimmed; the error says what is wrong.
pub fn parse(bytes: &[u8]) -> Result<Value, String> {
    let live = Cell::new(0usize);
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = Node { at: At::Top, live: &live, limit: MAX_NODES }
        .deserialize(&mut de)
        .map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())?;
    Ok(value)
}

/// How many nodes `v` is.
fn nodes(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(nodes).sum::<usize>(),
        Value::Object(m) => 1 + m.values().map(nodes).sum::<usize>(),
        _ => 1,
    }
}

/// Drops a non-counting run's profile, giving its nodes back.
fn slim(run: &mut Value, live: &Cell<usize>) {
    if run.get("status").and_then(Value::as_str) == Some("counting") {
        return;
    }
    if let Value::Object(m) = run {
        for field in PROFILE_FIELDS {
            if let Some(gone) = m.remove(field) {
                live.set(live.get() - nodes(&gone));
            }
        }
    }
}

/// One value to read, at `at`, counting against `live`.
struct Node<'a> {
    at: At,
    live: &'a Cell<usize>,
    limit: usize,
}

impl Node<'_> {
    fn count<E: serde::de::Error>(&self) -> Result<(), E> {
        self.live.set(self.live.get() + 1);
        if self.live.get() > self.limit {
            return Err(E::custom(format!(
                "more than {} values: not an export contend can hold in memory",
                self.limit
            )));
        }
        Ok(())
    }

    fn below(&self, at: At) -> Node<'_> {
        Node { at, live: self.live, limit: self.limit }
    }
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("JSON")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Value, E> {
        self.count()?;
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Value, E> {
        self.count()?;
        Ok(Value::from(v))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Value, E> {
        self.count()?;
        Ok(Value::from(v))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        self.count()?;
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        self.count()?;
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Value, E> {
        self.count()?;
        Ok(Value::String(v))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        self.count()?;
        Ok(Value::Null)
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.count()?;
        let (item, is_run) = match self.at {
            At::Entries => (At::Entry, false),
            At::Runs => (At::Other, true),
            _ => (At::Other, false),
        };
        let mut out = Vec::new();
        while let Some(mut v) = seq.next_element_seed(self.below(item))? {
            if is_run {
                slim(&mut v, self.live);
            }
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.count()?;
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let at = match (self.at, key.as_str()) {
                (At::Top, "points" | "failed") => At::Entries,
                (At::Entry, "runs") => At::Runs,
                _ => At::Other,
            };
            let v = map.next_value_seed(self.below(at))?;
            if out.insert(key, v).is_some() {
                return Err(A::Error::custom("a key appears twice in one object"));
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn runs_lose_their_profile_unless_counting_and_the_rest_is_kept() {
        let doc = json!({
            "family": "run",
            "points": [{
                "sample": {"mutexes": [{"a": 1}]},
                "runs": [
                    {"status": "measured", "wall_s": 1.0, "mutexes": [{"a": 1}], "rwlocks": [], "cpu": {"x": 1}},
                    {"mutexes": [{"a": 2}], "status": "counting"},
                ],
            }],
            "failed": [{"runs": [{"status": "failed", "mutexes": [1, 2]}]}],
            "other": {"runs": [{"mutexes": [3]}]},
        });
        let read = parse(doc.to_string().as_bytes()).unwrap();
        let runs = &read["points"][0]["runs"];
        assert_eq!(runs[0], json!({"status": "measured", "wall_s": 1.0, "cpu": {"x": 1}}));
        assert_eq!(runs[1]["mutexes"], json!([{"a": 2}]), "the counting run keeps its profile");
        assert_eq!(read["points"][0]["sample"], doc["points"][0]["sample"], "the sample is whole");
        assert!(read["failed"][0]["runs"][0].get("mutexes").is_none());
        assert_eq!(read["other"], doc["other"], "only entries' runs are slimmed");
    }

    #[test]
    fn too_many_live_values_are_refused_and_a_bad_document_named() {
        let live = Cell::new(0);
        let many = format!("[{}0]", "0,".repeat(100));
        let mut de = serde_json::Deserializer::from_str(&many);
        let e = Node { at: At::Top, live: &live, limit: 50 }.deserialize(&mut de).unwrap_err();
        assert!(e.to_string().contains("more than 50 values"), "{e}");
        assert!(parse(b"{\"a\": 1} x").is_err());
        assert!(parse(b"{\"a\": 1, \"a\": 2}").unwrap_err().contains("twice"));
        assert_eq!(parse(b"[1, 2.5, null, true, \"x\"]").unwrap(), json!([1, 2.5, null, true, "x"]));
    }
}
