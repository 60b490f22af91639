//! The terminal table: one row per point. Axes with a single value move to
//! the heading line, so the columns show only what varies.

use crate::family::lock::sweep::PointResult;
use crate::measure::env::Environment;
use crate::model::value::WorkMode;
use crate::output::column::{Column, Columns};
use crate::output::columns::{Group, Shown, CORE};
use crate::output::number::{ratio, si};
use comfy_table::presets;

/// The lock table's optional column groups.
pub const GROUPS: &[Group] = &[
    Group { name: "fairness", default: true, legend: "Jain: fairness index over the workers' counts (1 = even).\n" },
    Group {
        name: "shares",
        default: false,
        legend: "min% max%: smallest and largest worker's share of the critical sections.\n",
    },
    Group {
        name: "kernel",
        default: true,
        legend: "ctxsw/cs: the workers' context switches; futex/cs: futex syscalls, counted with the syscall \
                 tracepoints in a separate run of the point (--count-futex; the rates come from untraced runs).\n",
    },
    Group { name: "errors", default: false, legend: "fail/cs: futex syscalls that returned an error.\n" },
    Group {
        name: "cpu",
        default: false,
        legend: "%usr %sys %idle %steal: whole system (/proc/stat).\n",
    },
    Group {
        name: "hold",
        default: false,
        legend: "hold µs: achieved mean hold; max cs/s = 1/hold, lockscale's theoretical maximum.\n",
    },
    Group {
        name: "lock",
        default: false,
        legend: "spins/cs waits/cs wakes/cs: the lock's own counters (- where the lock is opaque).\n",
    },
    Group {
        name: "wait",
        default: true,
        legend: "p99µs: the 99th percentile of the wait to acquire, from the call to lock() to the start of \
                 the critical section, over the timed acquisitions (one in N per worker, --latency-every), \
                 pooled over the runs; `-` where fewer than 10 timed waits lie above it.\n",
    },
    Group {
        name: "rw",
        default: true,
        legend: "reads/s writes/s: a reader-writer lock's shared and exclusive acquisitions per second (the \
                 median run); rd p99µs wr p99µs: the 99th percentile wait of reads and of writes, wr maxµs: \
                 the longest timed write wait (a starved writer's), as for p99µs. eff% is left out where \
                 readers share the lock.\n",
    },
    Group {
        name: "latency",
        default: false,
        legend: "p50µs p99.9µs p99.99µs maxµs: more of the wait's distribution, as for p99µs.\n",
    },
];

const CORE_LEGEND: &str = "cs/s: critical sections per second of measured window, mean over the runs; ±%: \
     half-width of its 95% confidence interval (Student's t); eff% = cs/s x hold / locks (lock utilization). Other \
     columns: the median run, per critical section.\n";

const WAKE_LEGEND: &str =
    "wake (heading): what waking a thread asleep on another CPU cost the waker (FUTEX_WAKE, median of 40, measured at start-up).\n";

/// Renders the results for the terminal, with a heading and a legend.
pub fn render(results: &[PointResult], env: &Environment, shown: &Shown) -> String {
    render_with(results, env, shown, presets::NOTHING)
}

pub(crate) fn render_with(results: &[PointResult], env: &Environment, shown: &Shown, preset: &str) -> String {
    let Some(first) = results.first() else {
        return "no points were run\n".into();
    };
    let varies = |f: &dyn Fn(&PointResult) -> String| results.iter().any(|r| f(r) != f(first));
    type Axis = (&'static str, fn(&PointResult) -> String);
    let axes: [Axis; 11] = [
        ("lock", |r| r.point.lock.to_string()),
        (first.point.mode.label(), |r| r.point.workers.to_string()),
        ("locks", |r| r.point.locks.to_string()),
        ("affinity", |r| r.point.affinity.to_string()),
        ("futex-hash", |r| r.point.futex_hash.map_or("-".into(), |h| h.to_string())),
        ("spinners", |r| r.point.spinners.map_or("-".into(), |s| s.to_string())),
        ("spin", |r| r.point.spin.map_or("-".into(), |s| s.to_string())),
        ("glibc-spin", |r| r.point.glibc_spin.map_or("-".into(), |s| s.to_string())),
        ("read", |r| r.point.read_pct.map_or("-".into(), |p| format!("{p}%"))),
        ("hold", |r| r.point.hold.to_string()),
        ("idle", |r| r.point.idle.to_string()),
    ];
    let (varying, fixed): (Vec<&Axis>, Vec<&Axis>) = axes.iter().partition(|(_, f)| varies(f));

    let mut heading: Vec<String> = fixed
        .iter()
        // Unset knobs, the one lock every run has unless --locks, and
        // unpinned workers unless --affinity.
        .filter(|(name, f)| {
            f(first) != "-"
                && !(*name == "locks" && f(first) == "1")
                && !(*name == "affinity" && f(first) == "none")
        })
        .map(|(name, f)| format!("{name} {}", f(first)))
        .collect();
    heading.push(format!("{} CPUs", env.cpus_online));
    heading.push(match env.wake_cost_ns {
        Some(ns) => format!("wake {:.1} µs", ns as f64 / 1e3),
        None => "wake not measured".into(),
    });
    heading.push(format!(
        "{} window after {} warm-up",
        crate::model::value::format_nanos(first.point.duration_ns),
        crate::model::value::format_nanos(first.point.warmup_ns)
    ));

    // With a hold, the lock can do at most one critical section per hold:
    // lockscale's theoretical maximum, and the share of it achieved.
    let holds = results.iter().any(|r| r.point.hold.ns > 0);
    let repeated = crate::output::table::shows_intervals(results.iter().map(|r| (&r.stats, r.stopped)));
    let timed = results.iter().any(|r| r.point.latency_every > 0);
    let rw = results.iter().any(|r| r.point.read_pct.is_some());
    let mut all: Vec<Column<PointResult>> =
        varying.iter().map(|&&(name, f)| Column::text(CORE, name, f)).collect();
    all.extend(metric_columns(repeated, holds, timed, rw));
    let columns = Columns::shown(all, shown);
    let mut rows: Vec<Vec<String>> = results.iter().map(|r| columns.cells(r)).collect();
    crate::output::number::one_notation_per_column(&mut rows);
    let t = columns.render(&rows, preset);
    let precision =
        crate::output::table::precision_note(results.iter().map(|r| (r.stopped, &r.stats, &r.runs[..])))
            + &results
                .iter()
                .map(|r| crate::output::table::cut_short_note(&r.point.label(), &r.runs))
                .collect::<String>();
    let others: String = results
        .iter()
        .filter_map(fault_note)
        .chain(results.iter().filter_map(hold_note))
        .map(|n| format!("note: {n}\n"))
        .collect();
    let notes = precision + &others;
    let legend =
        String::from(CORE_LEGEND) + &columns.legend(GROUPS) + WAKE_LEGEND + &shown.hidden_note(GROUPS);
    let heading = crate::output::table::fit(&heading.join(" · "));
    format!("{heading}{t}\n\n{}", crate::output::table::fit(&(legend + &notes)))
}

/// Every metric column with its group and its cell; columns that do not
/// apply to these results (no repeats, no hold) are left out whatever
/// the group. Rates and latencies are the point's over its runs, the
/// other cells the median run's (futex counts: the counting run's, when
/// there is one).
fn metric_columns(repeated: bool, holds: bool, timed: bool, rw: bool) -> Vec<Column<'static, PointResult>> {
    type C = Column<'static, PointResult>;
    let per_cs = |r: &PointResult, n: Option<u64>| ratio(n.and_then(|n| r.sample.per_cs(n)));
    let counter = move |r: &PointResult, f: fn(&crate::model::lock::LockCounters) -> u64| {
        per_cs(r, r.sample.lock_counters.map(|c| f(&c)))
    };
    vec![
        C::number(CORE, "cs/s", |r| {
            let cut = crate::model::run::from_cut_short(&r.runs);
            si(r.stats.mean) + if cut { crate::output::table::CUT_MARK } else { "" }
        }),
        C::number(CORE, "±%", |r| crate::output::table::interval_cell(&r.stats, r.stopped)).only_if(repeated),
        C::number(CORE, "runs", |r| r.stats.n.to_string()).only_if(repeated),
        C::number(CORE, "eff%", |r| match hold_per_lock_s(r) {
            h if h > 0.0 => format!("{:.1}", 100.0 * r.stats.mean * h),
            _ => "-".into(),
        })
        .only_if(holds),
        C::number("hold", "max cs/s", |r| match hold_per_lock_s(r) {
            h if h > 0.0 => si(1.0 / h),
            _ => "-".into(),
        })
        .only_if(holds),
        C::number("hold", "hold µs", |r| {
            r.sample.mean_hold_ns.map_or("-".into(), |ns| format!("{:.3}", ns / 1e3))
        }),
        C::number("cpu", "%usr", |r| format!("{:.2}", r.sample.cpu.usr_pct)),
        C::number("cpu", "%sys", |r| format!("{:.2}", r.sample.cpu.sys_pct)),
        C::number("cpu", "%idle", |r| format!("{:.2}", r.sample.cpu.idle_pct)),
        C::number("cpu", "%steal", |r| format!("{:.2}", r.sample.cpu.steal_pct)),
        C::number("shares", "min%", |r| format!("{:.1}", r.sample.fairness.min_share_pct)),
        C::number("shares", "max%", |r| format!("{:.1}", r.sample.fairness.max_share_pct)),
        C::number("fairness", "Jain", |r| format!("{:.4}", r.sample.fairness.jain)),
        C::number("latency", "p50µs", |r| wait_cell(r, 0.5)).only_if(timed),
        C::number("wait", "p99µs", |r| wait_cell(r, 0.99)).only_if(timed),
        C::number("latency", "p99.9µs", |r| wait_cell(r, 0.999)).only_if(timed),
        C::number("latency", "p99.99µs", |r| wait_cell(r, 0.9999)).only_if(timed),
        C::number("latency", "maxµs", |r| wait_cell(r, 1.0)).only_if(timed),
        C::number("rw", "reads/s", |r| rw_rate(r, |rw| (rw.reads, rw.reads_per_s))).only_if(rw),
        C::number("rw", "writes/s", |r| rw_rate(r, |rw| (rw.writes, rw.writes_per_s))).only_if(rw),
        C::number("rw", "rd p99µs", |r| rw_wait_cell(r, |(read, _)| percentile_cell(read, 0.99)))
            .only_if(rw && timed),
        C::number("rw", "wr p99µs", |r| rw_wait_cell(r, |(_, write)| percentile_cell(write, 0.99)))
            .only_if(rw && timed),
        C::number("rw", "wr maxµs", |r| rw_wait_cell(r, |(_, write)| percentile_cell(write, 1.0)))
            .only_if(rw && timed),
        C::number("kernel", "ctxsw/cs", move |r| per_cs(r, Some(r.sample.process.context_switches()))),
        C::number("kernel", "futex/cs", |r| futex_per_cs(r, |f| f.calls)),
        C::number("errors", "fail/cs", |r| futex_per_cs(r, |f| f.errors)),
        C::number("lock", "spins/cs", move |r| counter(r, |c| c.spins)),
        C::number("lock", "waits/cs", move |r| counter(r, |c| c.waits)),
        C::number("lock", "wakes/cs", move |r| counter(r, |c| c.wakes)),
    ]
}

/// A futex count per critical section, from the counting run when there
/// is one.
fn futex_per_cs(r: &PointResult, of: fn(&crate::measure::futex::FutexCounts) -> u64) -> String {
    let k = r.kernel_run();
    ratio(k.futex.and_then(|f| k.per_cs(of(&f))))
}

/// The hold each lock does per critical section, s: with --locks N, N
/// critical sections can run at once; readers hold it together, so a
/// hold is no longer the lock's time (0 then).
fn hold_per_lock_s(r: &PointResult) -> f64 {
    let shared = r.point.read_pct.is_some_and(|p| p > 0);
    if shared {
        0.0
    } else {
        r.point.hold.ns as f64 / 1e9 / f64::from(r.point.locks.max(1))
    }
}

/// Percentile `q` of the pooled acquisition waits, µs (`q` 1: the
/// maximum); `-` for a point that timed none.
fn wait_cell(r: &PointResult, q: f64) -> String {
    r.acquire_latency().map_or("-".into(), |(_, h)| percentile_cell(&h, q))
}

/// Reads or writes per second of the median run; none at all is 0, not a
/// rate rounded down; `-` for a mutex's point.
fn rw_rate(r: &PointResult, of: fn(&crate::model::lock::RwSample) -> (u64, f64)) -> String {
    match r.sample.rw.as_ref().map(of) {
        None => "-".into(),
        Some((0, _)) => "0".into(),
        Some((_, per_s)) => si(per_s),
    }
}

/// A cell from the pooled read and write waits; `-` without them.
fn rw_wait_cell(
    r: &PointResult,
    of: fn((&crate::measure::latency::Latencies, &crate::measure::latency::Latencies)) -> String,
) -> String {
    match (&r.sample.rw, r.rw_waits()) {
        (Some(_), Some((read, write))) => of((&read, &write)),
        _ => "-".into(),
    }
}

/// Percentile `q` of the waits `h`, µs; `-` where fewer than 10 timed
/// waits lie above it, and for the maximum (`q` 1) of none.
fn percentile_cell(h: &crate::measure::latency::Latencies, q: f64) -> String {
    let drawn = if q < 1.0 { crate::output::plot::enough_for(q, h.len()) } else { !h.is_empty() };
    if drawn {
        ratio(Some(h.quantile(q) as f64 / 1e3))
    } else {
        "-".into()
    }
}

/// Says what --kill-holder-after did.
fn fault_note(r: &PointResult) -> Option<String> {
    let f = r.sample.fault?;
    let recovery = match (f.recovered_by, f.recovery_us) {
        (Some(by), Some(us)) => format!(
            "worker {by} acquired it {us:.1} µs later ({})",
            match f.recovered_how {
                "eownerdead" => "told EOWNERDEAD, it recovered the mutex",
                "kernel_release" => "the kernel released the dead holder's file lock",
                _ => "recovered",
            }
        ),
        _ => "nobody recovered it before the window ended".to_string(),
    };
    Some(format!(
        "{}: worker {} (pid {}) was killed holding the lock {:.2} s into the window; {recovery}",
        r.point.label(),
        f.victim,
        f.victim_pid,
        f.killed_after_s
    ))
}

/// Explains an achieved hold more than 5% above the request, so a reader
/// does not mistake preemption or sleep overshoot for a timing bug.
fn hold_note(r: &PointResult) -> Option<String> {
    let p = &r.point;
    let s = &r.sample;
    let requested = p.hold.ns as f64;
    let mean = s.mean_hold_ns?;
    if requested == 0.0 || mean <= requested * 1.05 {
        return None;
    }
    let above = 100.0 * (mean / requested - 1.0);
    let cause = match p.hold.mode {
        WorkMode::Sleep => "nanosleep returns late (timer slack and wake-up latency)".to_string(),
        // Preemption is named only when holds were seen stretched by it.
        WorkMode::Busy => match s.per_cs(s.stretched_holds).filter(|&share| share > 0.0) {
            Some(share) => format!(
                "{:.3}% of holds lasted over {}: the holder was preempted inside the lock",
                share * 100.0,
                crate::model::value::format_nanos(p.hold.stretched_above())
            ),
            None => format!(
                "no hold lasted over {}, so not preemption: a uniform overshoot (the clock reads \
                 that time a busy hold weigh on short ones)",
                crate::model::value::format_nanos(p.hold.stretched_above())
            ),
        },
    };
    Some(format!("{}: mean hold {above:.1}% above {}: {cause}", p.label(), p.hold))
}
