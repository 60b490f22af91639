//! The JSON Schema of every export, generated from the types that are
//! serialized (schemars), so it cannot drift from what contend writes. It
//! is published as docs/schema/export.schema.json; a test regenerates it
//! and fails when the committed copy differs, and validates real exports
//! of every family against it.

use crate::family::alloc::report::AllocExport;
use crate::family::lock::report::LockExport;
use crate::family::program::report::ProgramExport;
use crate::family::wakeup::report::WakeupExport;
use crate::tune::report::TuneExport;
use schemars::generate::SchemaSettings;
use serde_json::{json, Value};

/// Where the schema is published, relative to the repository.
pub const PUBLISHED: &str = "docs/schema/export.schema.json";

/// The schema: an export is one of the documents of the families
/// (lock, wakeup, alloc, run) or tune's (a lock export with the best
/// budget). Generated for serialization: it describes what contend writes.
pub fn export_schema() -> Value {
    let mut generator = SchemaSettings::draft2020_12().for_serialize().into_generator();
    let one_of = [
        generator.subschema_for::<LockExport<'static>>(),
        generator.subschema_for::<TuneExport<'static>>(),
        generator.subschema_for::<WakeupExport<'static>>(),
        generator.subschema_for::<AllocExport<'static>>(),
        generator.subschema_for::<ProgramExport<'static>>(),
    ];
    let defs = generator.take_definitions(true);
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "contend export",
        "description": format!(
            "A contend --export-json document, schema_version {}. Generated from the Rust types \
             (src/exports/schema.rs); do not edit.",
            crate::output::json::SCHEMA_VERSION
        ),
        "anyOf": one_of,
        "$defs": defs,
    })
}
