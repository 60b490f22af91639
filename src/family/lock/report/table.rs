//! The terminal table: one row per point. Axes with a single value move to
//! the heading line, so the columns show only what varies.

use crate::family::lock::sweep::PointResult;
use crate::measure::env::Environment;
use crate::model::value::WorkMode;
use crate::output::columns::{Group, Shown, CORE};
use crate::output::number::{ratio, si};
use comfy_table::{presets, Table};

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
    let axes: [Axis; 10] = [
        ("lock", |r| r.point.lock.to_string()),
        (first.point.mode.label(), |r| r.point.workers.to_string()),
        ("locks", |r| r.point.locks.to_string()),
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
        // Unset knobs, and the one lock every run has unless --locks.
        .filter(|(name, f)| f(first) != "-" && !(*name == "locks" && f(first) == "1"))
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

    let mut t = Table::new();
    t.load_preset(preset);
    // With a hold, the lock can do at most one critical section per hold:
    // lockscale's theoretical maximum, and the share of it achieved.
    let holds = results.iter().any(|r| r.point.hold.ns > 0);
    let repeated = crate::output::table::shows_intervals(results.iter().map(|r| (&r.stats, r.stopped)));
    let timed = results.iter().any(|r| r.point.latency_every > 0);
    let rw = results.iter().any(|r| r.point.read_pct.is_some());
    // Each metric column with its group; columns that do not apply to
    // these results (no repeats, no hold) are left out whatever the group.
    let columns: Vec<(&str, &str)> = [
        (CORE, "cs/s", true),
        (CORE, "±%", repeated),
        (CORE, "runs", repeated),
        (CORE, "eff%", holds),
        ("hold", "max cs/s", holds),
        ("hold", "hold µs", true),
        ("cpu", "%usr", true),
        ("cpu", "%sys", true),
        ("cpu", "%idle", true),
        ("cpu", "%steal", true),
        ("shares", "min%", true),
        ("shares", "max%", true),
        ("fairness", "Jain", true),
        ("latency", "p50µs", timed),
        ("wait", "p99µs", timed),
        ("latency", "p99.9µs", timed),
        ("latency", "p99.99µs", timed),
        ("latency", "maxµs", timed),
        ("rw", "reads/s", rw),
        ("rw", "writes/s", rw),
        ("rw", "rd p99µs", rw && timed),
        ("rw", "wr p99µs", rw && timed),
        ("rw", "wr maxµs", rw && timed),
        ("kernel", "ctxsw/cs", true),
        ("kernel", "futex/cs", true),
        ("errors", "fail/cs", true),
        ("lock", "spins/cs", true),
        ("lock", "waits/cs", true),
        ("lock", "wakes/cs", true),
    ]
    .into_iter()
    .filter(|&(_, _, applies)| applies)
    .map(|(g, h, _)| (g, h))
    .collect();
    let groups: Vec<&str> = columns.iter().map(|(g, _)| *g).collect();
    let headers = shown.select(&groups, columns.iter().map(|(_, h)| *h).collect());
    t.set_header(varying.iter().map(|(n, _)| *n).chain(headers.iter().copied()));
    let mut rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            let mut row: Vec<String> = varying.iter().map(|(_, f)| f(r)).collect();
            row.extend(shown.select(&groups, cells(r, repeated, holds, timed, rw)));
            row
        })
        .collect();
    crate::output::number::one_notation_per_column(&mut rows);
    t.add_rows(rows);
    crate::output::table::align_right(&mut t, varying.len()..varying.len() + headers.len());
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
    let legend = String::from(CORE_LEGEND) + &shown.legend(GROUPS) + WAKE_LEGEND + &shown.hidden_note(GROUPS);
    let heading = crate::output::table::fit(&heading.join(" · "));
    format!("{heading}{t}\n\n{}", crate::output::table::fit(&(legend + &notes)))
}

/// Every metric cell of one row, in the order of the columns above (the
/// ones that apply).
fn cells(r: &PointResult, repeated: bool, holds: bool, timed: bool, rw: bool) -> Vec<String> {
    let s = &r.sample;
    // Futex counts come from the counting run, when there is one.
    let k = r.kernel_run();
    let counters = s.lock_counters;
    let cs_per_s = r.stats.mean;
    let cut = crate::model::run::from_cut_short(&r.runs);
    let mut row = vec![si(cs_per_s) + if cut { crate::output::table::CUT_MARK } else { "" }];
    if repeated {
        row.push(crate::output::table::interval_cell(&r.stats, r.stopped));
        row.push(r.stats.n.to_string());
    }
    // Per lock: with --locks N, N critical sections can run at once.
    // Readers hold it together, so a hold is no longer the lock's time.
    let shared = r.point.read_pct.is_some_and(|p| p > 0);
    let hold_s = if shared { 0.0 } else { r.point.hold.ns as f64 / 1e9 / f64::from(r.point.locks.max(1)) };
    if holds {
        row.push(if hold_s > 0.0 { format!("{:.1}", 100.0 * cs_per_s * hold_s) } else { "-".into() });
        row.push(if hold_s > 0.0 { si(1.0 / hold_s) } else { "-".into() });
    }
    row.extend([
        s.mean_hold_ns.map_or("-".into(), |ns| format!("{:.3}", ns / 1e3)),
        format!("{:.2}", s.cpu.usr_pct),
        format!("{:.2}", s.cpu.sys_pct),
        format!("{:.2}", s.cpu.idle_pct),
        format!("{:.2}", s.cpu.steal_pct),
        format!("{:.1}", s.fairness.min_share_pct),
        format!("{:.1}", s.fairness.max_share_pct),
        format!("{:.4}", s.fairness.jain),
    ]);
    if timed {
        row.extend(wait_cells(r));
    }
    if rw {
        row.extend(rw_cells(r, timed));
    }
    row.extend([
        ratio(s.per_cs(s.process.context_switches())),
        ratio(k.futex.and_then(|f| k.per_cs(f.calls))),
        ratio(k.futex.and_then(|f| k.per_cs(f.errors))),
        ratio(counters.and_then(|c| s.per_cs(c.spins))),
        ratio(counters.and_then(|c| s.per_cs(c.waits))),
        ratio(counters.and_then(|c| s.per_cs(c.wakes))),
    ]);
    row
}

/// p50, p99, p99.9, p99.99 and max of the pooled acquisition latency,
/// µs; `-` for a percentile too few timed waits lie above, and for a
/// point that timed none.
fn wait_cells(r: &PointResult) -> [String; 5] {
    let Some((_, h)) = r.acquire_latency() else {
        return std::array::from_fn(|_| "-".into());
    };
    [0.5, 0.99, 0.999, 0.9999, 1.0].map(|q| percentile_cell(&h, q))
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

/// Reads/s and writes/s of the median run, and with timing the pooled
/// p99 of reads' and writes' waits and the longest timed write wait, µs;
/// `-` for a mutex's point.
fn rw_cells(r: &PointResult, timed: bool) -> Vec<String> {
    let Some(rw) = &r.sample.rw else {
        return vec!["-".into(); if timed { 5 } else { 2 }];
    };
    // None at all is 0, not a rate rounded down.
    let rate = |n: u64, per_s: f64| if n == 0 { "0".to_string() } else { si(per_s) };
    let mut cells = vec![rate(rw.reads, rw.reads_per_s), rate(rw.writes, rw.writes_per_s)];
    if timed {
        match r.rw_waits() {
            Some((read, write)) => cells.extend([
                percentile_cell(&read, 0.99),
                percentile_cell(&write, 0.99),
                percentile_cell(&write, 1.0),
            ]),
            None => cells.extend(["-".into(), "-".into(), "-".into()]),
        }
    }
    cells
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
