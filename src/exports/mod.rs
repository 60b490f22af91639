//! The commands over exports, in one room: `compare` (two exports, or one
//! against its baseline), `plot` (figures), `report` (an HTML page),
//! the published JSON Schema of every export, the one reader of export
//! files (capped, interruptible, slimmed: `slim.rs`), and the list of families a reader may
//! meet ([`families`]). Each family's identity (its key fields, metric,
//! table and figure) is stated by the family itself, next to its point
//! type (`model::family`); these readers ask it rather than restating it.

pub mod compare;
pub mod families;
pub mod html;
pub mod plot;
pub mod reader;
pub mod schema;
pub mod slim;
pub mod summary;
