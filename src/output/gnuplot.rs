//! `--export-gnuplot` (and `contend lock --format gnuplot`): whitespace
//! columns with `#` headers, blocks separated by two blank lines so that
//! gnuplot's `index` selects one. One file per family.
