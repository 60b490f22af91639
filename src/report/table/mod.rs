//! The terminal tables, one file per family. Axes with a single value move
//! to the heading line, so the columns show only what varies. The same
//! tables, in Markdown, are the `--export-markdown` files.

pub mod alloc;
pub mod compare;
pub mod lock;
pub mod tune;
pub mod wakeup;
