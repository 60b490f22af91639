//! The alloc family's formats: table, CSV, gnuplot columns.

pub mod csv;
pub mod gnuplot;
pub mod table;
