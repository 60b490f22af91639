//! `contend run` as exports describe it to their readers (`contend
//! compare`, `report`, `plot`): a point is a lock, its metric the
//! program's wall time or the rate it printed, and `contend report`'s
//! table and profile details (details.rs).

use crate::family::program::report::details::profile_details;
use crate::model::family::{Cell, Column, Family, Key, KeyIn, Metric};
use crate::model::program::{ProgramPoint, GLIBC};
use serde::Deserialize;
use serde_json::Value;

/// `contend run` in exports (see [`crate::model::family`]).
pub const FAMILY: Family = Family {
    name: "run",
    key_in: KeyIn::Point,
    identity: &[Key::Field("lock"), Key::Field("profiled"), Key::Field("parameter")],
    settings: &[],
    metric: wall_or_rate,
    columns: &[
        Column { header: "lock", path: &["point", "profiled"], cell: Cell::Derived(lock_label) },
        Column { header: "wall s or rate", path: &["stats", "mean"], cell: Cell::Fixed(3) },
        Column { header: "±%", path: &["stats", "ci95_pct"], cell: Cell::Pct },
        Column { header: "runs", path: &["stats", "n"], cell: Cell::Text },
        Column { header: "vs pthread", path: &["point", "lock"], cell: Cell::Derived(ratio) },
        Column { header: "95% interval", path: &["point", "lock"], cell: Cell::Derived(interval) },
        Column { header: "swapped", path: &["sample", "swapped"], cell: Cell::Text },
        Column { header: "glibc", path: &["sample", "to_glibc"], cell: Cell::Text },
        Column { header: "processes", path: &["sample", "processes"], cell: Cell::Text },
    ],
    figure: Some(crate::model::family::Figure::Program),
    details: profile_details,
};

/// The lock as the terminal's table names it ([`ProgramPoint::label`]):
/// "pthread (unprofiled)" beside profiled points, a scan's value after
/// the lock (`adaptive threads=4`).
fn lock_label(doc: &Value, entry: &Value) -> String {
    let profiled = |p: &Value| p["point"]["profiled"].as_bool() == Some(true);
    let any = doc["points"].as_array().is_some_and(|ps| ps.iter().any(profiled));
    match ProgramPoint::deserialize(&entry["point"]) {
        Ok(point) => point.label(any),
        Err(_) => entry["point"]["lock"].as_str().unwrap_or("-").to_string(),
    }
}

/// The entry's ratio to glibc's mutex, as the export keeps it beside the
/// points (`vs_glibc`, by lock and a scan's value).
fn vs_glibc<'a>(doc: &'a Value, entry: &Value) -> Option<&'a Value> {
    let (lock, parameter) = (&entry["point"]["lock"], &entry["point"]["parameter"]);
    doc["vs_glibc"].as_array()?.iter().find(|v| &v["lock"] == lock && &v["parameter"] == parameter)
}

/// The ratio; glibc's own row (profiled when the run profiles) is the 1
/// the others are to.
fn ratio(doc: &Value, entry: &Value) -> String {
    let baseline = entry["point"]["lock"] == GLIBC
        && entry["point"]["profiled"].as_bool() == doc["spec"]["profile"].as_bool();
    match vs_glibc(doc, entry).and_then(|v| v["ratio"].as_f64()) {
        Some(r) => format!("{r:.3}"),
        None if baseline => "1".into(),
        None => "-".into(),
    }
}

/// The ratio's 95% interval.
fn interval(doc: &Value, entry: &Value) -> String {
    let ci = vs_glibc(doc, entry).map(|v| &v["ci95"]);
    match ci.and_then(|c| Some((c[0].as_f64()?, c[1].as_f64()?))) {
        Some((lo, hi)) => format!("{lo:.3}..{hi:.3}"),
        None => "-".into(),
    }
}

fn wall_or_rate(spec: &Value) -> Metric {
    if spec.get("metric").is_some_and(|m| !m.is_null()) {
        Metric { name: "the program's rate (--metric)", path: &["metric"], higher_is_better: true }
    } else {
        Metric { name: "wall s", path: &["wall_s"], higher_is_better: false }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_field_of_a_program_point_is_identity_or_setting() {
        let mut p = crate::model::program::ProgramPoint::new("pthread", true);
        p.parameter = Some(crate::model::program::ParameterValue { name: "n".into(), value: "1".into() });
        crate::model::family::check::classifies_every_field(
            &super::FAMILY,
            &serde_json::to_value(&p).unwrap(),
        );
    }
}
