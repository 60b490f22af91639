//! Unit tests of lock spec validation: every refusal names its flag.

use super::*;
use clap::Parser;

/// `contend lock`'s flags alone (the command tree depends on the family,
/// not the other way round).
#[derive(Parser)]
struct Lock {
    #[command(flatten)]
    args: LockArgs,
}

fn spec(args: &str) -> Result<LockSpec, SpecError> {
    let parsed = Lock::try_parse_from(format!("lock {args}").split_whitespace()).unwrap();
    LockSpec::from_args(&parsed.args)
}

#[test]
fn sweep_is_the_cartesian_product() {
    let s = spec("--lock pthread,mcs --threads 2,4 --spin 1,10").unwrap_err();
    assert!(s.0.contains("--spin does not apply to pthread, mcs"), "{}", s.0);
    let s = spec("--lock seed,futex --threads 2,4 --spin 1,10 --hold 1us,2us --idle 0,sleep:5us").unwrap();
    let points = s.points();
    assert_eq!(points.len(), 2 * 2 * 2 * 2 * 2);
    assert_eq!(points[0].lock, "seed");
    assert_eq!(points[0].spin, Some(1));
    assert_eq!(points.last().unwrap().lock, "futex");
    assert_eq!(points.last().unwrap().idle.to_string(), "sleep:5µs");
}

#[test]
fn locks_without_spin_get_none_and_with_spin_the_default() {
    let s = spec("--lock pthread,futex --threads 1").unwrap();
    let p = s.points();
    assert_eq!(p.len(), 2);
    assert_eq!(p[0].spin, None);
    assert_eq!(p[0].mode, Mode::Threads);
    assert_eq!(p[0].workers, 1);
    let defaults = spec("--lock futex").unwrap().points();
    assert_eq!((defaults[0].mode, defaults[0].workers), (Mode::Threads, DEFAULT_THREADS));
    let procs = spec("--lock futex --procs 3,5").unwrap().points();
    assert_eq!(
        procs.iter().map(|p| (p.mode, p.workers)).collect::<Vec<_>>(),
        [(Mode::Processes, 3), (Mode::Processes, 5)]
    );
    assert_eq!(p[1].spin, Some(100));
}

#[test]
fn spinners_sweep_only_adaptive() {
    let s = spec("--lock adaptive --spinners none,one,many --threads 2").unwrap();
    let p: Vec<_> = s.points().iter().map(|p| p.spinners).collect();
    assert_eq!(p, [Some(SpinPolicy::None), Some(SpinPolicy::One), Some(SpinPolicy::Many)]);
    let e = spec("--lock futex,pthread --spinners many").unwrap_err().0;
    assert!(e.contains("--spinners does not apply to futex, pthread") && e.contains("adaptive"), "{e}");
    let s = spec("--lock futex,adaptive --threads 1").unwrap();
    assert_eq!(s.points()[0].spinners, None);
    assert_eq!(s.points()[1].spinners, Some(SpinPolicy::One));
}

#[test]
fn a_lock_without_the_swept_knob_runs_once_per_remaining_point() {
    // The FUTEX_LOCK figure: adaptive's three policies, pthread beside them.
    let s = spec("--lock adaptive,pthread --spinners none,one,many --threads 2,4").unwrap();
    let p: Vec<_> = s.points().iter().map(|p| (p.lock, p.workers, p.spinners)).collect();
    use SpinPolicy::{Many, None as Sleep, One};
    assert_eq!(
        p,
        [
            ("adaptive", 2, Some(Sleep)),
            ("adaptive", 2, Some(One)),
            ("adaptive", 2, Some(Many)),
            ("adaptive", 4, Some(Sleep)),
            ("adaptive", 4, Some(One)),
            ("adaptive", 4, Some(Many)),
            ("pthread", 2, None),
            ("pthread", 4, None),
        ]
    );
    assert_eq!(s.point_count(), 8);
    let s = spec("--lock futex,pthread --spin 1,100 --threads 2").unwrap();
    assert_eq!(s.points().iter().map(|p| p.spin).collect::<Vec<_>>(), [Some(1), Some(100), None]);
}

#[test]
fn period_and_duty_split_into_hold_and_idle() {
    let s = spec("--period 1000ns --duty 10%,75%").unwrap();
    assert_eq!(s.work, vec![(Work::busy(100), Work::busy(900)), (Work::busy(750), Work::busy(250))]);
}

#[test]
fn cross_flag_mistakes_are_refused() {
    assert!(spec("--lock noop --threads 2").unwrap_err().0.contains("one worker"));
    assert!(spec("--lock std --procs 2").unwrap_err().0.contains("std cannot"));
    assert!(spec("--lock lockf --threads 2").unwrap_err().0.contains("--procs"));
    assert!(spec("--lock lockf --procs 2").is_ok());
    assert!(spec("--lock flock --lock-dir /nonexistent").unwrap_err().0.contains("--lock-dir"));
    assert!(spec("--duration 0").unwrap_err().0.contains("--duration"));
    assert!(spec("--threads 4000000000").unwrap_err().0.contains("threads-max"));
    let e = spec("--lock pthread --spin 5").unwrap_err().0;
    assert!(e.contains("--spin does not apply to pthread") && e.contains("seed, futex"), "{e}");
}

#[test]
fn an_absurd_sweep_is_refused_before_it_is_built() {
    let e = spec("--replicate 4000000000").unwrap_err();
    assert!(e.0.contains("4000000000 points") && e.0.contains("at most 10000"), "{e}");
    let ok = spec("--lock futex,seed --threads 1,2 --spin 1,10,100 --replicate 3").unwrap();
    assert_eq!(ok.point_count(), ok.points().len() as u128);
    assert_eq!(ok.point_count(), 2 * 2 * 3 * 3);
}
