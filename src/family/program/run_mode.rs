//! What `contend run` does with the program: run it under each lock, or
//! recommend a lock per mutex, or predict what shorter critical sections
//! would buy. One of the three, by construction: the flags that make each
//! (`--recommend`, `--what-if`) are refused together when the spec is
//! made, and the modes cannot be set together afterwards.
//!
//! Exports keep the flat fields they always had (`recommend`, `mutexes`,
//! `threshold_pct`, `what_if`, `delays_ns`), written from the mode, so an
//! export reads the same whichever way the spec holds it.

use schemars::JsonSchema;
use serde::{Serialize, Serializer};

/// `--mutexes`' default: the mutexes `--recommend` tries.
pub const MUTEXES: usize = 3;
/// `--threshold`'s default, percent.
pub const THRESHOLD_PCT: f64 = 5.0;

/// What `contend run` does with the program.
#[derive(Debug, Clone, PartialEq)]
pub enum RunMode {
    /// Each `--lock` in rounds (profiled with `--profile`).
    Locks,
    /// `--recommend`: try the locks on the most waited-on mutexes, one at
    /// a time, then the winners together.
    Recommend {
        /// How many mutexes.
        mutexes: usize,
        /// The smallest gain worth a change, percent.
        threshold_pct: f64,
    },
    /// `--what-if`: what shorter critical sections would buy.
    WhatIf {
        /// The mutexes (addresses or names, or `top:N`).
        asked: String,
        /// The delays of the delay method, ns (None: by virtual speedup).
        delays_ns: Option<Vec<u64>>,
    },
    /// `contend attach PID`: the futex view of a running process.
    Attach {
        /// The process.
        pid: u32,
        /// How long it is followed, ns (None: until Ctrl-C or its exit).
        duration_ns: Option<u64>,
    },
}

/// The fields an export has always carried for the mode.
#[derive(Serialize, JsonSchema)]
struct Fields<'a> {
    /// `--recommend`: try `locks` (but pthread) on the most waited-on
    /// mutexes, one at a time.
    recommend: bool,
    /// With `recommend`: how many mutexes.
    mutexes: usize,
    /// With `recommend`: the smallest gain worth a change, percent.
    threshold_pct: f64,
    /// `--what-if`: the mutexes (addresses or names, or `top:N`).
    what_if: Option<&'a str>,
    /// With `what_if`: the delays of the delay method, ns (None: by
    /// virtual speedup).
    delays_ns: Option<&'a [u64]>,
    /// `contend attach`: the process followed.
    #[serde(skip_serializing_if = "Option::is_none")]
    attached: Option<u32>,
    /// With `attached`: how long it was to be followed, ns (None: until
    /// Ctrl-C or its exit).
    #[serde(skip_serializing_if = "Option::is_none")]
    attached_for_ns: Option<u64>,
}

impl RunMode {
    fn fields(&self) -> Fields<'_> {
        let mut f = Fields {
            recommend: false,
            mutexes: MUTEXES,
            threshold_pct: THRESHOLD_PCT,
            what_if: None,
            delays_ns: None,
            attached: None,
            attached_for_ns: None,
        };
        match self {
            RunMode::Locks => {}
            RunMode::Recommend { mutexes, threshold_pct } => {
                (f.recommend, f.mutexes, f.threshold_pct) = (true, *mutexes, *threshold_pct);
            }
            RunMode::WhatIf { asked, delays_ns } => {
                (f.what_if, f.delays_ns) = (Some(asked.as_str()), delays_ns.as_deref());
            }
            RunMode::Attach { pid, duration_ns } => {
                (f.attached, f.attached_for_ns) = (Some(*pid), *duration_ns)
            }
        }
        f
    }
}

impl Serialize for RunMode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.fields().serialize(s)
    }
}

impl JsonSchema for RunMode {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RunMode".into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Fields::json_schema(g)
    }
    // Inlined, so that a flattened mode's fields land among the spec's.
    fn inline_schema() -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_mode_writes_the_fields_exports_always_had() {
        let json = |m: &RunMode| serde_json::to_string(m).unwrap();
        assert_eq!(
            json(&RunMode::Locks),
            r#"{"recommend":false,"mutexes":3,"threshold_pct":5.0,"what_if":null,"delays_ns":null}"#
        );
        assert_eq!(
            json(&RunMode::Recommend { mutexes: 2, threshold_pct: 10.0 }),
            r#"{"recommend":true,"mutexes":2,"threshold_pct":10.0,"what_if":null,"delays_ns":null}"#
        );
        assert_eq!(
            json(&RunMode::WhatIf { asked: "top:2".into(), delays_ns: Some(vec![100, 200]) }),
            r#"{"recommend":false,"mutexes":3,"threshold_pct":5.0,"what_if":"top:2","delays_ns":[100,200]}"#
        );
    }
}
