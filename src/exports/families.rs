//! The families an export may be of, each described by itself next to
//! its point type ([`crate::model::family`]), listed once for the readers
//! of exports. A new family is one line here; the test in
//! tests/exports.rs then walks it through every reader.

use crate::model::family::Family;
use serde_json::Value;

/// Every family, by the name exports write. A static, not a const: each
/// use of a const array is a copy whose `&FAMILY` entries need not share
/// an address (unoptimized builds give each its own), and [`named`]
/// hands out references into this one list.
pub static FAMILIES: [&Family; 4] = [
    &crate::model::lock::FAMILY,
    &crate::family::wakeup::point::FAMILY,
    &crate::model::alloc::FAMILY,
    &crate::family::program::family::FAMILY,
];

/// The family named `name`.
pub fn named(name: &str) -> Result<&'static Family, String> {
    FAMILIES.iter().copied().find(|f| f.name == name).ok_or_else(|| {
        let known: Vec<&str> = FAMILIES.iter().map(|f| f.name).collect();
        format!("a `{name}` export, which this contend does not know (it reads {})", known.join(", "))
    })
}

/// The family of export `doc`.
pub fn of(doc: &Value) -> Result<&'static Family, String> {
    match doc.get("family").and_then(Value::as_str) {
        Some(name) => named(name),
        None => Err("not a contend export (no family)".into()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_family_is_listed_once_and_found_by_name() {
        for f in super::FAMILIES {
            assert!(std::ptr::eq(super::named(f.name).unwrap(), f));
        }
        let names: std::collections::BTreeSet<&str> = super::FAMILIES.iter().map(|f| f.name).collect();
        assert_eq!(names.len(), super::FAMILIES.len());
        assert!(super::named("mutex").unwrap_err().contains("reads lock, wakeup, alloc, run"));
        assert!(super::of(&serde_json::json!({})).unwrap_err().contains("no family"));
    }
}
