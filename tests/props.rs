//! Property tests on every parser and on combinations of CLI arguments of
//! every measuring command (lock, wakeup, alloc, tune): whatever the input,
//! no panic; malformed input gets an error, and what parses round-trips
//! through its printed form. The combinations go through clap, the spec
//! validation and the planning (points, durations, budgets, time
//! estimates, deadlines) in process, without running anything, so
//! thousands of cases take seconds.

use clap::Parser;
use contend::cli::{Cli, Command};
use contend::engine::progress::{estimate, planned_runs};
use contend::family::alloc::spec::AllocSpec;
use contend::family::lock::spec::LockSpec;
use contend::family::wakeup::spec::WakeupSpec;
use contend::model::value::{
    format_nanos, parse_axis, parse_count, parse_cpu_list, parse_list, parse_nanos, parse_percent,
    parse_sizes, parse_spinners, parse_work, LONGEST_NS,
};
use contend::tune::spec::TuneSpec;
use proptest::prelude::*;
use std::time::{Duration, Instant};

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
        let _ = parse_axis(&text, parse_nanos);
        let _ = parse_cpu_list(&text);
        let _ = parse_sizes(&text);
    }

    #[test]
    fn size_ranges_hold_their_draws(text in "[0-9]{1,5}(k)?(-[0-9]{1,5}(k)?(:log)?)?") {
        if let Ok(sizes) = parse_sizes(&text) {
            let mut stream = contend::model::value::SizeStream::new(&sizes, 7);
            for _ in 0..64 {
                let n = stream.next_size();
                prop_assert!(n >= 1 && n <= sizes.largest(), "{} from {}", n, text);
            }
        }
    }

    #[test]
    fn cpu_lists_are_sorted_sets_or_errors(text in "[0-9,-]{0,12}") {
        if let Ok(cpus) = parse_cpu_list(&text) {
            prop_assert!(cpus.windows(2).all(|w| w[0] < w[1]), "{:?} from {}", cpus, text);
        }
    }

    #[test]
    fn nanoseconds_round_trip(ns in 0..=LONGEST_NS) {
        prop_assert_eq!(parse_nanos(&format_nanos(ns)), Ok(ns));
    }

    #[test]
    fn beyond_a_week_is_refused(ns in LONGEST_NS + 1..) {
        prop_assert!(parse_nanos(&format_nanos(ns)).is_err());
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

/// Values, valid and not, extreme ones included, for any flag.
const VALUES: &[&str] = &[
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
    "pipe",
    "eventfd",
    "posix-sem",
    "glibc",
    "tcmalloc",
    "local",
    "pairs",
    "same-cpu",
    "1",
    "2",
    "0",
    "-1",
    "4000000000",
    "4294967295",
    "18446744073709551615",
    "1,2",
    "2,2",
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
    "gnuplot",
    "csv",
    "/dev/shm",
    "/nonexistent",
    "-",
    "",
    "1ms",
    "18446744073s",
    "604800s",
    "604801s",
    "16-4096:log",
    "0-1",
    "interleaved",
    "sequential",
    "fifo",
    "99",
];

/// One flag of `flags`, with or without a value.
fn argument(flags: &'static [&'static str]) -> impl Strategy<Value = Vec<String>> {
    (prop::sample::select(flags), prop::option::of(prop::sample::select(VALUES))).prop_map(|(f, v)| {
        let mut a = vec![f.to_string()];
        a.extend(v.map(str::to_string));
        a
    })
}

const REPEAT: [&str; 7] =
    ["--runs", "--precision", "--max-time", "--order", "--seed", "--max-steal", "--count-futex"];

const LOCK: &[&str] = &[
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
    "--stall-timeout",
    "--replicate",
    "--bogus",
    REPEAT[0],
    REPEAT[1],
    REPEAT[2],
    REPEAT[3],
    REPEAT[4],
    REPEAT[5],
    REPEAT[6],
];
const WAKEUP: &[&str] = &[
    "--primitive",
    "--pairs",
    "--procs",
    "--iterations",
    "--duration",
    "--warmup",
    "--interval",
    "--affinity",
    "--cpus",
    "--exclude-cpus",
    "--policy",
    "--priority",
    "--histogram",
    "--stall-timeout",
    "--trace-threshold",
    REPEAT[0],
    REPEAT[1],
    REPEAT[2],
    REPEAT[3],
];
const ALLOC: &[&str] = &[
    "--pattern",
    "--allocator",
    "--threads",
    "--pairs",
    "--iterations",
    "--batch",
    "--size",
    REPEAT[0],
    REPEAT[1],
    REPEAT[2],
    REPEAT[3],
];
const TUNE: &[&str] =
    &["--lock", "--threads", "--hold", "--idle", "--duration", "--warmup", "--runs", "--max-time"];

/// Every deadline a plan can make must be representable.
fn reachable(d: Duration) -> bool {
    Instant::now().checked_add(d).is_some()
}

/// Parses `argv`; a refusal must be exit status 2 (help and version
/// aside). Returns the command when it parsed.
fn parsed(argv: &[String]) -> Result<Option<Command>, TestCaseError> {
    match Cli::try_parse_from(argv) {
        Ok(cli) => Ok(Some(cli.command)),
        Err(e) => {
            use clap::error::ErrorKind::{DisplayHelp, DisplayVersion};
            if !matches!(e.kind(), DisplayHelp | DisplayVersion) {
                prop_assert_eq!(e.exit_code(), 2, "{}", e);
            }
            Ok(None)
        }
    }
}

fn argv(command: &str, args: Vec<Vec<String>>) -> Vec<String> {
    ["contend", command].iter().map(|s| s.to_string()).chain(args.into_iter().flatten()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// Any combination parses or is refused (a SpecError is exit 2 in
    /// main); what is accepted is planned without a panic, and every
    /// duration the plan derives stays a reachable deadline.
    #[test]
    fn lock_plans_never_panic(args in prop::collection::vec(argument(LOCK), 0..7)) {
        if let Some(Command::Lock(args)) = parsed(&argv("lock", args))? {
            if let Ok(spec) = LockSpec::from_args(&args) {
                let points = spec.points();
                prop_assert_eq!(spec.point_count(), points.len() as u128);
                let runs = planned_runs(points.len(), &spec.repeat, true);
                let per_run = Duration::from_nanos(spec.duration_ns.saturating_add(spec.warmup_ns));
                let _ = estimate(runs, per_run);
                for p in &points {
                    prop_assert!(reachable(p.duration() + p.warmup() + p.stall() + p.drain_grace()));
                }
                prop_assert!(reachable(Duration::from_nanos(spec.repeat.max_time_ns)));
            }
        }
    }

    #[test]
    fn wakeup_plans_never_panic(args in prop::collection::vec(argument(WAKEUP), 0..6)) {
        if let Some(Command::Wakeup(args)) = parsed(&argv("wakeup", args))? {
            if let Ok(spec) = WakeupSpec::from_args(&args) {
                let points = spec.points();
                let _ = estimate(planned_runs(points.len(), &spec.repeat, true), Duration::from_secs(1));
            }
        }
    }

    #[test]
    fn alloc_plans_never_panic(args in prop::collection::vec(argument(ALLOC), 0..6)) {
        if let Some(Command::Alloc(args)) = parsed(&argv("alloc", args))? {
            if let Ok(spec) = AllocSpec::from_args(&args) {
                let points = spec.patterns.len() * spec.allocators.len();
                let _ = estimate(planned_runs(points, &spec.repeat, true), Duration::from_secs(1));
            }
        }
    }

    #[test]
    fn tune_plans_never_panic(args in prop::collection::vec(argument(TUNE), 0..6)) {
        if let Some(Command::Tune(args)) = parsed(&argv("tune", args))? {
            let _ = TuneSpec::from_args(&args);
        }
    }
}
