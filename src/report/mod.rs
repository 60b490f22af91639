//! Turning results into text: one file per format. Nothing below here runs
//! anything; everything here only formats.

pub mod alloc;
pub mod csv;
pub mod gnuplot;
pub mod histogram;
pub mod json;
pub mod list;
pub mod lock_csv;
pub mod number;
pub mod seed;
pub mod table;
pub mod wakeup;
