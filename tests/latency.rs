//! Acquisition latency (`--latency-every`): the timed acquisitions are the
//! ones asked for, in threads and in processes, and what they record is a
//! wait for the lock, not the hold or a constant.

use contend::family::lock::spec::{Mode, Point};
use contend::family::lock::workload::{run, run_procs, RunContext};
use contend::model::lock::LockSample;
use contend::model::value::Work;
use locks::raw::{FutexMutex, Ticket};

fn point(mode: Mode, workers: u32, hold: Work, every: u32) -> Point {
    Point {
        hold,
        latency_every: every,
        duration_ns: 100_000_000,
        warmup_ns: 10_000_000,
        ..Point::new("futex", mode, workers)
    }
}

fn timed(s: &LockSample) -> u64 {
    s.acquire_latency.as_ref().and_then(|a| a.distribution.summary).map_or(0, |s| s.samples)
}

/// The window's timed acquisitions against its acquisitions. Each worker
/// times 1 in N of its own, so the pooled count is off by up to one per
/// worker; and the histograms are read a moment after the counters at
/// each edge (longer if the reader is preempted), so the acquisitions they
/// span are known only between the two counts the sample records.
fn assert_one_in(s: &LockSample, every: u64, workers: u64) {
    let latency = s.acquire_latency.as_ref().unwrap();
    let (least, most) = (latency.spans_at_least, latency.spans_at_most);
    assert!(least <= s.acquisitions && s.acquisitions <= most, "{least} <= {} <= {most}", s.acquisitions);
    assert!(least > 100 * every, "too few acquisitions to judge: {least}");
    let got = timed(s);
    assert!(
        (least / every).saturating_sub(workers) <= got && got <= most / every + workers,
        "1 in {every} of {least} to {most} acquisitions should be timed: {got} were"
    );
}

#[test]
fn every_nth_acquisition_is_timed() {
    let ctx = RunContext::default();
    for (workers, every) in [(1, 1), (1, 4), (2, 16)] {
        let s = run::<FutexMutex>(&point(Mode::Threads, workers, Work::NONE, every), &ctx).unwrap();
        assert_one_in(&s, u64::from(every), u64::from(workers));
        assert_eq!(s.acquire_latency.as_ref().unwrap().every, every);
    }
}

#[test]
fn off_times_nothing() {
    let s = run::<FutexMutex>(&point(Mode::Threads, 2, Work::NONE, 0), &RunContext::default()).unwrap();
    assert!(s.acquire_latency.is_none());
}

#[test]
fn worker_processes_time_their_waits_too() {
    // Two processes, a FIFO lock and a 200 µs hold: each acquisition but
    // the first waits for the other's hold, so some timed wait covers at
    // least half of one (preemption on a busy machine only makes waits
    // longer). An unfair lock would not do: the releaser re-takes it and
    // the other may never acquire, so never record its wait.
    let hold = Work::busy(200_000);
    let p = Point { lock: "ticket", duration_ns: 300_000_000, ..point(Mode::Processes, 2, hold, 1) };
    let s = run_procs::<Ticket>(&p, &RunContext::default()).unwrap();
    assert!(s.acquisitions > 10, "too few acquisitions to judge: {}", s.acquisitions);
    assert!(timed(&s).abs_diff(s.acquisitions) <= 4, "{} timed of {}", timed(&s), s.acquisitions);
    let summary = s.acquire_latency.unwrap().distribution.summary.unwrap();
    assert!(summary.max_ns >= 100_000, "the longest wait was {} ns, under half a hold", summary.max_ns);
}
