//! Unit tests of the rounds engine: order, screening, pooled budgets,
//! counting runs and interrupts, with fake runs instead of workers.

use super::*;
use crate::engine::repeat::CountFutex;
use std::cell::RefCell;

/// A fake run: the point it belongs to, its value and steal.
#[derive(Debug, Clone)]
struct Fake {
    info: RunInfo,
    point: usize,
    value: f64,
    steal: f64,
    signal: Option<Signal>,
    failed: bool,
    /// Too short to judge alone: its window, judged with its round's.
    short: Option<crate::measure::cpu::Window>,
}

impl RunRecord for Fake {
    fn info(&self) -> &RunInfo {
        &self.info
    }
    fn info_mut(&mut self) -> &mut RunInfo {
        &mut self.info
    }
    fn metric(&self) -> f64 {
        self.value
    }
    fn cut_short(&self) -> Option<Signal> {
        self.signal
    }
    fn disturbance_pct(&self) -> Option<f64> {
        self.short.is_none().then_some(self.steal)
    }
    fn window(&self) -> Option<crate::measure::cpu::Window> {
        self.short
    }
    fn failed(&self) -> bool {
        self.failed
    }
}

fn fake(point: usize, value: f64) -> Fake {
    Fake { info: RunInfo::default(), point, value, steal: 0.0, signal: None, failed: false, short: None }
}

/// `run_rounds` with no progress callback.
fn rounds(
    points: usize,
    plan: &Repeat,
    counting: bool,
    run: impl FnMut(usize, Purpose) -> Result<Fake>,
) -> Result<Rounds<Fake>> {
    run_rounds(points, plan, counting, run, |_, _| {})
}

fn plan(runs: u32, order: Order) -> Repeat {
    Repeat { order, seed: 7, count_futex: CountFutex::Off, ..Repeat::new(runs, None, None).unwrap() }
}

#[test]
fn interleaved_rounds_run_every_point_once_each_in_changing_orders() {
    let log = RefCell::new(Vec::new());
    let r = rounds(4, &plan(6, Order::Interleaved), false, |i, _| {
        log.borrow_mut().push(i);
        Ok(fake(i, 1.0))
    })
    .unwrap();
    let log = log.into_inner();
    assert_eq!(log.len(), 24);
    let rounds: Vec<&[usize]> = log.chunks(4).collect();
    for round in &rounds {
        let mut sorted = round.to_vec();
        sorted.sort();
        assert_eq!(sorted, [0, 1, 2, 3], "a round runs each point once: {log:?}");
    }
    assert!(rounds.iter().any(|r| *r != rounds[0]), "the order is reshuffled: {log:?}");
    for (i, p) in r.points.iter().enumerate() {
        let p = p.as_ref().unwrap();
        let rounds: Vec<u32> = p.runs.iter().map(|s| s.info.round).collect();
        assert_eq!(rounds, [0, 1, 2, 3, 4, 5]);
        assert!(p.runs.iter().all(|s| s.point == i && s.info.start_unix_ns > 0));
        assert_eq!(p.stopped, Stopped::Runs);
    }
}

#[test]
fn sequential_order_finishes_a_point_before_the_next() {
    let log = RefCell::new(Vec::new());
    rounds(3, &plan(2, Order::Sequential), false, |i, _| {
        log.borrow_mut().push(i);
        Ok(fake(i, 1.0))
    })
    .unwrap();
    assert_eq!(log.into_inner(), [0, 0, 1, 1, 2, 2]);
}

#[test]
fn the_same_seed_gives_the_same_order() {
    let order = |seed| {
        let log = RefCell::new(Vec::new());
        let p = Repeat { seed, ..plan(5, Order::Interleaved) };
        rounds(5, &p, false, |i, _| {
            log.borrow_mut().push(i);
            Ok(fake(i, 1.0))
        })
        .unwrap();
        log.into_inner()
    };
    assert_eq!(order(3), order(3));
    assert_ne!(order(3), order(4));
}

/// A 0.2 s window of a run that used one CPU, with `other`% of the
/// machine taken by other processes.
fn short_window(other: f64) -> crate::measure::cpu::Window {
    let cpus = crate::measure::env::cpus_online() as f64;
    let own = 100.0 / cpus;
    crate::measure::cpu::Window {
        window_s: 0.2,
        own_cpu_s: 0.2,
        split: crate::measure::cpu::CpuSplit {
            usr_pct: own + other,
            idle_pct: 100.0 - own - other,
            ..Default::default()
        },
    }
}

#[test]
fn runs_too_short_to_judge_alone_are_judged_by_round_on_both_sides_alike() {
    // A CPU burner runs during the first three executions made (round 0,
    // whatever its order), and stops before the rest: each run alone is
    // too short to screen, so the round is judged, and both points get
    // the same verdict.
    let made = RefCell::new(0u32);
    let r = rounds(2, &plan(2, Order::Interleaved), false, |i, _| {
        let n = {
            let mut m = made.borrow_mut();
            *m += 1;
            *m
        };
        let other = if n <= 3 { 60.0 } else { 0.0 };
        Ok(Fake { short: Some(short_window(other)), ..fake(i, f64::from(n)) })
    })
    .unwrap();
    use RunStatus::{Measured as M, Rejected as X};
    for p in 0..2 {
        let runs = &r.points[p].as_ref().unwrap().runs;
        let statuses: Vec<RunStatus> = runs.iter().map(|s| s.info.status).collect();
        // Round 0 twice (burner, then the second try with the burner in
        // its first execution), then quiet; round 1 quiet.
        assert_eq!(statuses, [X, X, M, M], "point {p}");
        assert!(
            runs.iter().filter(|s| s.info.status == M).all(|s| s.value > 3.0),
            "no kept run saw the burner"
        );
    }
}

#[test]
fn disturbed_runs_are_rejected_kept_and_remade_within_a_bound() {
    // Point 0's first two attempts are stolen from; point 1 always is.
    let attempts = RefCell::new([0u32; 2]);
    let r = rounds(2, &plan(1, Order::Interleaved), false, |i, _| {
        let n = {
            let mut a = attempts.borrow_mut();
            a[i] += 1;
            a[i]
        };
        let steal = if i == 1 || n <= 2 { 40.0 } else { 1.0 };
        Ok(Fake { steal, ..fake(i, f64::from(n)) })
    })
    .unwrap();
    let statuses = |p: usize| -> Vec<RunStatus> {
        r.points[p].as_ref().unwrap().runs.iter().map(|s| s.info.status).collect()
    };
    use RunStatus::{Measured as M, Rejected as X};
    assert_eq!(statuses(0), [X, X, M]);
    // Never quiet: the last attempt is kept.
    assert_eq!(statuses(1), [X, X, X, M]);
    let p0 = r.points[0].as_ref().unwrap();
    assert_eq!((p0.stats.n, p0.stats.mean, crate::engine::repeat::rejected(&p0.runs)), (1, 3.0, 2));
    assert_eq!(p0.median_run(), 2);
}

#[test]
fn a_counting_run_per_point_comes_last_and_stays_out_of_the_stats() {
    let purposes = RefCell::new(Vec::new());
    let r = rounds(2, &plan(3, Order::Interleaved), true, |i, purpose| {
        purposes.borrow_mut().push(purpose);
        Ok(fake(i, if purpose == Purpose::Count { 1000.0 } else { 10.0 }))
    })
    .unwrap();
    let purposes = purposes.into_inner();
    assert_eq!(purposes.len(), 8);
    assert!(purposes[..6].iter().all(|p| *p == Purpose::Measure));
    assert!(purposes[6..].iter().all(|p| *p == Purpose::Count));
    for p in r.points.iter().map(|p| p.as_ref().unwrap()) {
        assert_eq!((p.stats.n, p.stats.mean), (3, 10.0));
        let c = crate::engine::repeat::counting_run(&p.runs).unwrap();
        assert_eq!((c.info.status, c.info.round), (RunStatus::Counting, 3));
    }
}

#[test]
fn precision_adds_runs_until_the_interval_is_narrow() {
    let values = [98.0, 102.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0];
    let mut n = 0;
    let p = Repeat { seed: 1, ..Repeat::new(2, Some(2.0), Some(Duration::from_secs(60))).unwrap() };
    let r = rounds(1, &p, false, |i, _| {
        n += 1;
        Ok(fake(i, values[(n - 1) % values.len()]))
    })
    .unwrap();
    let r = r.points[0].as_ref().unwrap();
    assert_eq!(r.stopped, Stopped::Precision);
    assert!(r.stats.ci95_pct.unwrap() <= 2.0);
    assert!(r.runs.len() > 2 && r.runs.len() < values.len());
}

#[test]
fn max_time_ends_a_hopeless_search_per_point() {
    let p = Repeat {
        order: Order::Sequential,
        ..Repeat::new(2, Some(0.001), Some(Duration::from_millis(30))).unwrap()
    };
    let mut flip = false;
    let r = rounds(2, &p, false, |i, _| {
        std::thread::sleep(Duration::from_millis(5));
        flip = !flip;
        Ok(fake(i, if flip { 1.0 } else { 2.0 }))
    })
    .unwrap();
    for p in r.points.iter().map(|p| p.as_ref().unwrap()) {
        assert_eq!(p.stopped, Stopped::MaxTime);
        assert!(p.runs.len() >= 2 && p.runs.len() <= 7, "{}", p.runs.len());
    }
}

#[test]
fn interleaved_precision_pools_the_time_of_points_done_early() {
    // Point 0 is steady (done after 2 runs); point 1 never settles.
    // Pooled, point 1 gets point 0's unused share: about 2 x 60 ms
    // of 5 ms runs, not 60 ms.
    let p = Repeat::new(2, Some(1.0), Some(Duration::from_millis(60))).unwrap();
    let mut flip = false;
    let r = rounds(2, &p, false, |i, _| {
        std::thread::sleep(Duration::from_millis(5));
        // Point 0 always 1.0; point 1 alternates 1.0 and 2.0.
        if i == 1 {
            flip = !flip;
        }
        let value = if i == 1 && flip { 2.0 } else { 1.0 };
        Ok(fake(i, value))
    })
    .unwrap();
    let steady = r.points[0].as_ref().unwrap();
    let noisy = r.points[1].as_ref().unwrap();
    assert_eq!((steady.stopped, steady.runs.len()), (Stopped::Precision, 2));
    assert_eq!(noisy.stopped, Stopped::MaxTime);
    // Its runs span more than its own 60 ms share (by their start
    // stamps, so a slow sleep cannot fool the check).
    let span = noisy.runs.last().unwrap().info.start_unix_ns - noisy.runs[0].info.start_unix_ns;
    assert!(span > 60_000_000, "the noisy point got the pool: {span} ns");
}

#[test]
fn an_interrupt_keeps_what_was_measured() {
    let mut n = 0;
    let r = rounds(3, &plan(5, Order::Sequential), true, |i, _| {
        n += 1;
        Ok(Fake { signal: (n == 7).then_some(Signal::SIGINT), ..fake(i, 1.0) })
    })
    .unwrap();
    assert_eq!(r.interrupted, Some(Signal::SIGINT));
    assert_eq!(r.points[0].as_ref().unwrap().stopped, Stopped::Runs);
    let cut = r.points[1].as_ref().unwrap();
    assert_eq!((cut.runs.len(), cut.stopped), (2, Stopped::Interrupted));
    assert!(r.points[2].is_none());
    assert!(crate::engine::repeat::counting_run(&cut.runs).is_none(), "no counting after an interrupt");
}

#[test]
fn a_failed_run_stops_its_point_and_the_others_go_on() {
    let mut runs = [0; 3];
    let r = rounds(3, &plan(4, Order::Interleaved), true, |i, _| {
        runs[i] += 1;
        // Point 1 fails in its second run.
        Ok(Fake { failed: i == 1 && runs[i] == 2, ..fake(i, 1.0) })
    })
    .unwrap();
    let failed = r.points[1].as_ref().expect("a failed point keeps its runs");
    assert_eq!(failed.stopped, Stopped::Failed);
    let statuses: Vec<RunStatus> = failed.runs.iter().map(|s| s.info.status).collect();
    assert_eq!(statuses, [RunStatus::Measured, RunStatus::Failed], "not run again, not counted");
    for i in [0, 2] {
        let p = r.points[i].as_ref().unwrap();
        assert_eq!(p.stopped, Stopped::Runs);
        assert_eq!(crate::engine::repeat::measured(&p.runs).count(), 4);
        assert!(crate::engine::repeat::counting_run(&p.runs).is_some());
    }
    // A point whose first run fails still comes back, with that run.
    let r = rounds(1, &plan(3, Order::Sequential), false, |i, _| Ok(Fake { failed: true, ..fake(i, 1.0) }))
        .unwrap();
    let only = r.points[0].as_ref().unwrap();
    assert_eq!(
        (only.runs.len(), only.stopped, only.runs[0].info.status),
        (1, Stopped::Failed, RunStatus::Failed)
    );
}

#[test]
fn the_first_point_opens_the_first_round_only() {
    let log = RefCell::new(Vec::new());
    run_rounds_from(
        5,
        &plan(8, Order::Interleaved),
        false,
        Some(3),
        |i, _| {
            log.borrow_mut().push(i);
            Ok(fake(i, 1.0))
        },
        |_, _| {},
    )
    .unwrap();
    let log = log.into_inner();
    assert_eq!(log[0], 3);
    assert!(log.chunks(5).skip(1).any(|r| r[0] != 3), "later rounds are shuffled whole: {log:?}");
}
