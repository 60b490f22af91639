//! The command line, parsed, with contend's one rule beyond clap's: a
//! number may start with a minus sign.

use super::Cli;
use clap::CommandFactory;

/// The command line, parsed. A number, a duration or a percentage may
/// start with a minus sign: `--top -1` or `--precision -5%` then reaches
/// the flag's own parser, whose error names the flag ("invalid value '-1'
/// for '--top <N>'"), instead of clap's "unexpected argument '-1'", which
/// names none. Names and paths do not, so `--export-json --runs` stays an
/// error rather than a file called `--runs`.
pub fn parse() -> Cli {
    use clap::FromArgMatches;
    fn numeric(a: &clap::Arg) -> bool {
        // A switch takes no value (its derived value name, NO_PROGRESS,
        // would pass the test below; clap's debug build then panics).
        if !a.get_action().takes_values() {
            return false;
        }
        let names = a.get_value_names().unwrap_or_default();
        names.iter().any(|n| ["N", "DURATION", "PERCENT", "WORK"].iter().any(|k| n.as_str().starts_with(k)))
    }
    fn negatives(c: clap::Command) -> clap::Command {
        // mut_args keeps the arguments' order (mut_arg moves each to the
        // end, which reorders --help's headings).
        let c = c.allow_negative_numbers(true).mut_subcommands(negatives);
        c.mut_args(|a| if numeric(&a) { a.allow_hyphen_values(true) } else { a })
    }
    let matches = negatives(Cli::command()).get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}
