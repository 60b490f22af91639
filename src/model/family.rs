//! What identifies a family's results in an export, as the commands that
//! read exports need it (`compare`, `plot`, `report`): the family's name,
//! which fields of a point make it that point, which only say how it was
//! measured, the metric and which way is better, the columns of its table
//! and the figure it gets. Each family states its own [`Family`] once,
//! next to its point type (`model::lock::FAMILY`, ...); the readers find
//! it by the export's `family` field (`exports::families`) and ask it,
//! instead of restating the family by field name.
//!
//! Every field a point serializes is either identity or a setting: a test
//! next to each point type checks it, so a new sweep axis cannot be
//! forgotten (two points that differ only in it would be paired wrongly).

use serde_json::Value;

/// One family's identity in exports.
#[derive(Debug)]
pub struct Family {
    /// As exports write it (`"family"`).
    pub name: &'static str,
    /// Where a point entry keeps the fields that identify it.
    pub key_in: KeyIn,
    /// The fields that make a point that point, in the order a label
    /// reads them.
    pub identity: &'static [Key],
    /// The point's other fields: how it was measured, not which point it
    /// is (points that differ only in these are the same point).
    pub settings: &'static [&'static str],
    /// The metric of a run, given the export's `spec`.
    pub metric: fn(&Value) -> Metric,
    /// The table of `contend report`'s page.
    pub columns: &'static [Column],
    /// The figure `contend plot` and `contend report` draw, if any.
    pub figure: Option<Figure>,
    /// The tables `contend report` shows under the points' table, from
    /// one point entry (run: its median run's profile); [`no_details`]
    /// for a family whose points say everything in their row.
    pub details: fn(&Value) -> Vec<Detail>,
}

/// A table of one point's detail in `contend report`.
#[derive(Debug, Clone, PartialEq)]
pub struct Detail {
    /// What it shows, in a sentence.
    pub title: String,
    /// Column headers.
    pub header: &'static [&'static str],
    /// The rows, as shown.
    pub rows: Vec<Vec<String>>,
}

/// No detail tables.
pub fn no_details(_: &Value) -> Vec<Detail> {
    Vec::new()
}

/// Where a point entry keeps its identifying fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyIn {
    /// `point` (lock, wakeup, run).
    Point,
    /// `sample` (alloc, whose version-2 exports had no `point`).
    Sample,
}

/// One identifying field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A field as it is.
    Field(&'static str),
    /// The length of a list field, under another name (a wake-up point's
    /// pairs are its placements).
    Count {
        /// The key's name.
        name: &'static str,
        /// The list it counts.
        of: &'static str,
    },
}

impl Key {
    /// The key's name in a label.
    pub fn name(self) -> &'static str {
        match self {
            Key::Field(f) => f,
            Key::Count { name, .. } => name,
        }
    }

    /// The point field it reads.
    pub fn source(self) -> &'static str {
        match self {
            Key::Field(f) => f,
            Key::Count { of, .. } => of,
        }
    }

    /// Its value in `fields`.
    pub fn value(self, fields: &serde_json::Map<String, Value>) -> Value {
        match self {
            Key::Field(f) => fields.get(f).cloned().unwrap_or(Value::Null),
            Key::Count { of, .. } => {
                Value::from(fields.get(of).and_then(Value::as_array).map_or(0, Vec::len))
            }
        }
    }
}

/// What a run's number is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metric {
    /// In words, with its unit.
    pub name: &'static str,
    /// Where a run keeps it (field names from the run down).
    pub path: &'static [&'static str],
    /// Whether larger is better (a rate) or worse (a time, a latency).
    pub higher_is_better: bool,
}

impl Metric {
    /// Its value in `run`, if there.
    pub fn of(&self, run: &Value) -> Option<f64> {
        self.path.iter().try_fold(run, |v, f| v.get(f))?.as_f64()
    }
}

/// One column of a family's table in `contend report`.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    /// Its header.
    pub header: &'static str,
    /// Where a point entry keeps it (field names from the entry down).
    pub path: &'static [&'static str],
    /// How it is shown.
    pub cell: Cell,
}

/// How a table cell shows its value (not comparable: a function's
/// address says nothing about which function it is).
#[derive(Debug, Clone, Copy)]
pub enum Cell {
    /// As written (a name, a count, a duration).
    Text,
    /// A rate with an SI suffix (1.23M).
    Si,
    /// A percentage, one decimal.
    Pct,
    /// A ratio or index, `decimals` places.
    Fixed(usize),
    /// Nanoseconds shown as microseconds, two decimals.
    Micros,
    /// A hold or idle time (`{"mode": "sleep", "ns": 50000}` shown as
    /// `sleep:50µs`).
    Work,
    /// Made from the whole document and the point entry, for what no one
    /// field holds: a label joined from two fields, a ratio the export
    /// keeps beside the points. The column's path names the fields it
    /// needs of the entry (checked to exist, as every path is).
    Derived(fn(doc: &Value, entry: &Value) -> String),
}

/// A hold or idle time as an export writes it (`{"mode", "ns"}`), in the
/// words of the command line: `1µs`, `sleep:50µs`. None for anything else.
pub fn work_text(v: &Value) -> Option<String> {
    let o = v.as_object()?;
    let ns = o.get("ns")?.as_u64()?;
    let mode = if o.get("mode").and_then(Value::as_str) == Some("sleep") { "sleep:" } else { "" };
    Some(format!("{mode}{}", crate::model::value::format_nanos(ns)))
}

/// The figures contend draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    /// Throughput with 95% intervals, and fairness, against the swept
    /// axis (lock exports).
    Throughput,
    /// Round-trip latency against percentile (wakeup exports).
    Latency,
    /// Each lock's metric with 95% intervals, and the top mutexes' waits
    /// by percentile (run exports).
    Program,
}

#[cfg(test)]
pub(crate) mod check {
    //! The test each family runs on its point type.

    use super::{Family, KeyIn};

    /// Every field `point` serializes is identity or a setting, and no
    /// field is both.
    pub fn classifies_every_field(family: &Family, point: &serde_json::Value) {
        let fields: Vec<&str> =
            point.as_object().expect("a point is an object").keys().map(String::as_str).collect();
        let identity: Vec<&str> = family.identity.iter().map(|k| k.source()).collect();
        for f in &fields {
            let (id, set) = (identity.contains(f), family.settings.contains(f));
            assert!(
                id || set,
                "{}: the point field `{f}` is neither identity nor setting: add it to the family's FAMILY",
                family.name
            );
            assert!(!(id && set), "{}: `{f}` is both identity and a setting", family.name);
        }
        if family.key_in == KeyIn::Point {
            for f in identity.iter().chain(family.settings) {
                assert!(
                    fields.contains(f),
                    "{}: FAMILY names `{f}`, which the point does not have",
                    family.name
                );
            }
        }
    }
}
