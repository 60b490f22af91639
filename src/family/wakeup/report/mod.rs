//! The wakeup family's formats: table, CSV, gnuplot columns, SVG plot.

pub mod csv;
pub mod gnuplot;
pub mod plot;
pub mod table;
