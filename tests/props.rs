//! Property tests on every parser and on combinations of CLI arguments:
//! whatever the input, no panic; malformed input gets an error, and what
//! parses round-trips through its printed form. The CLI combinations go
//! through clap and the spec validation in process (no runs), so thousands
//! of cases take seconds.

use clap::Parser;
use contend::cli::{Cli, Command};
use contend::parse::{
    format_nanos, parse_count, parse_list, parse_nanos, parse_percent, parse_spinners, parse_work,
};
use contend::spec::LockSpec;
use proptest::prelude::*;

/// Text that looks like what users type: digits, units, separators, signs.
fn user_text() -> impl Strategy<Value = String> {
    prop::string::string_regex("[0-9a-zµμ:.,%+ -]{0,16}").unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn durations_never_panic(text in user_text()) {
        let _ = parse_nanos(&text);
    }

    #[test]
    fn any_string_at_all_is_handled(text in ".{0,24}") {
        let _ = parse_nanos(&text);
        let _ = parse_work(&text);
        let _ = parse_count(&text);
        let _ = parse_percent(&text);
        let _ = parse_spinners(&text);
        let _ = parse_list(&text, parse_count);
        let _ = parse_list(&text, parse_work);
    }

    #[test]
    fn nanoseconds_round_trip(ns in any::<u64>()) {
        prop_assert_eq!(parse_nanos(&format_nanos(ns)), Ok(ns));
    }

    #[test]
    fn work_round_trips(text in user_text()) {
        if let Ok(work) = parse_work(&text) {
            prop_assert_eq!(parse_work(&work.to_string()), Ok(work));
        }
    }

    #[test]
    fn count_lists_round_trip(counts in prop::collection::vec(1u32.., 1..8)) {
        let text = counts.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
        prop_assert_eq!(parse_list(&text, parse_count), Ok(counts));
    }

    #[test]
    fn percents_are_fractions_or_errors(text in user_text()) {
        if let Ok(f) = parse_percent(&text) {
            prop_assert!(f > 0.0 && f < 1.0);
        }
    }
}

/// Flags and values, valid and not, from which argument vectors are drawn.
fn argument() -> impl Strategy<Value = Vec<String>> {
    let flag = prop::sample::select(vec![
        "--lock",
        "--threads",
        "--procs",
        "--spin",
        "--spinners",
        "--hold",
        "--idle",
        "--period",
        "--duty",
        "--duration",
        "--warmup",
        "--format",
        "--lock-dir",
        "--export-json",
        "--bogus",
    ]);
    let value = prop::sample::select(vec![
        "futex",
        "seed",
        "pthread",
        "std",
        "lockf",
        "flock",
        "sysv",
        "noop",
        "nope",
        "adaptive",
        "1",
        "2",
        "0",
        "-1",
        "4000000000",
        "1,2",
        "1,,2",
        "1us",
        "sleep:5us",
        "nap:1us",
        "5",
        "10%",
        "150%",
        "many",
        "none",
        "few",
        "table",
        "seed",
        "gnuplot",
        "csv",
        "/dev/shm",
        "/nonexistent",
        "-",
        "",
        "1ms",
        "0",
    ]);
    (flag, prop::option::of(value)).prop_map(|(f, v)| {
        let mut a = vec![f.to_string()];
        a.extend(v.map(str::to_string));
        a
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// Any combination parses or is refused; refusals are exit status 2
    /// (help and version aside), and the spec never panics.
    #[test]
    fn cli_combinations_are_refused_cleanly(args in prop::collection::vec(argument(), 0..6)) {
        let argv: Vec<String> = ["contend", "lock"].iter().map(|s| s.to_string())
            .chain(args.into_iter().flatten()).collect();
        match Cli::try_parse_from(&argv) {
            Ok(cli) => {
                let Command::Lock(args) = cli.command else { unreachable!() };
                // Ok or a SpecError (exit 2 in main); a panic fails the test.
                let _ = LockSpec::from_args(&args).map(|spec| spec.points());
            }
            Err(e) => {
                use clap::error::ErrorKind::{DisplayHelp, DisplayVersion};
                if !matches!(e.kind(), DisplayHelp | DisplayVersion) {
                    prop_assert_eq!(e.exit_code(), 2, "{}", e);
                }
            }
        }
    }
}
