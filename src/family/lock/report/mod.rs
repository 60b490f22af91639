//! The lock family's formats: terminal and Markdown table, CSV, gnuplot
//! columns, SVG plot, and futex-scalability.c's summary lines.

pub mod csv;
pub mod gnuplot;
pub mod plot;
pub mod seed;
pub mod table;
