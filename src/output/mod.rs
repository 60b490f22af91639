//! Turning results into text: one file per format. Nothing below here runs
//! anything; everything here only formats.

pub mod args;
pub mod column;
pub mod columns;
pub mod csv;
pub mod document;
pub mod json;
pub mod marker;
pub mod ndjson;
pub mod number;
pub mod percentiles;
pub mod plot;
pub mod provenance;
pub mod results;
pub mod safe_path;
pub mod sink;
pub mod table;
pub mod width;
