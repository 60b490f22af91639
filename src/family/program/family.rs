//! `contend run` as exports describe it to their readers (`contend
//! compare`, `report`, `plot`): a point is a lock, its metric the
//! program's wall time or the rate it printed, and `contend report`'s
//! table and profile details (details.rs).

use crate::family::program::report::details::profile_details;
use crate::model::family::{Cell, Column, Family, Key, KeyIn, Metric};

/// `contend run` in exports (see [`crate::model::family`]).
pub const FAMILY: Family = Family {
    name: "run",
    key_in: KeyIn::Point,
    identity: &[Key::Field("lock"), Key::Field("profiled")],
    settings: &[],
    metric: wall_or_rate,
    columns: &[
        Column { header: "lock", path: &["point", "lock"], cell: Cell::Text },
        Column { header: "wall s or rate", path: &["stats", "mean"], cell: Cell::Fixed(3) },
        Column { header: "±%", path: &["stats", "ci95_pct"], cell: Cell::Pct },
        Column { header: "swapped", path: &["sample", "swapped"], cell: Cell::Text },
        Column { header: "glibc", path: &["sample", "to_glibc"], cell: Cell::Text },
        Column { header: "processes", path: &["sample", "processes"], cell: Cell::Text },
    ],
    figure: Some(crate::model::family::Figure::Program),
    details: profile_details,
};

fn wall_or_rate(spec: &serde_json::Value) -> Metric {
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
        let p = crate::model::program::ProgramPoint::new("pthread", true);
        crate::model::family::check::classifies_every_field(
            &super::FAMILY,
            &serde_json::to_value(&p).unwrap(),
        );
    }
}
