//! `contend run`'s tables: one row per lock (its wall time or metric over
//! the runs, the ratio to glibc's mutex with its interval), and with
//! `--profile` the top mutexes of each lock's median run.

use crate::family::program::spec::ProgramSpec;
use crate::family::program::sweep::ProgramOutcome;
use crate::model::program::{FailedPoint, MutexProfile, ProgramResult, ProgramSample, VsGlibc, GLIBC};
use crate::output::column::{Column, Columns};
use crate::output::columns::{Group, Shown, CORE};
use crate::output::number::si;

/// The run table's optional column groups.
pub const GROUPS: &[Group] = &[
    Group {
        name: "time",
        default: true,
        legend: "user/sys s: the program's CPU time and its reaped children's (wait4).\n",
    },
    Group {
        name: "kernel",
        default: true,
        legend: "futex: the program's futex syscalls (tracepoints, in a separate counting run: \
                 --count-futex); vcsw: its voluntary context switches.\n",
    },
    Group {
        name: "mutexes",
        default: true,
        legend: "swapped: acquisitions made by the swapped lock (\"not used\" in vs pthread: it made \
                 none, so it has no ratio; \"no report\": the program left without its report, so its \
                 counts are unknown); glibc: acquisitions of glibc's mutex through the interposer \
                 (every one under pthread; under a swapped lock, the recursive, error-checking, robust, \
                 PI, PP and shared mutexes it leaves to glibc); procs: processes that reported.\n",
    },
];

/// A count: exact below a thousand, then with an SI suffix.
fn count(n: u64) -> String {
    if n < 1000 {
        n.to_string()
    } else {
        si(n as f64)
    }
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// A row of the lock table: a lock's results with its ratio to glibc's,
/// or a lock that failed.
enum Line<'a> {
    Done(&'a ProgramResult, Option<&'a VsGlibc>),
    Failed(&'a FailedPoint),
}

impl Line<'_> {
    /// The run the secondary columns come from: the median run, or the
    /// failing execution.
    fn sample(&self) -> &ProgramSample {
        match self {
            Line::Done(r, _) => &r.sample,
            Line::Failed(f) => f.runs.last().expect("a failed point has its failing run"),
        }
    }

    /// A core cell of a lock that ran, or `failed` for one that did not.
    fn done(&self, failed: &str, of: impl Fn(&ProgramResult, Option<&VsGlibc>) -> String) -> String {
        match self {
            Line::Done(r, vs) => of(r, *vs),
            Line::Failed(_) => failed.into(),
        }
    }
}

type C<'b> = Column<'static, Line<'b>>;

/// Every column with its group and its cell: `rate` when the metric is a
/// rate the program printed, `procs` when some lock ran several
/// processes, `profiled` with --profile.
fn columns<'b>(metric: &'static str, rate: bool, procs: bool, profiled: bool) -> Vec<C<'b>> {
    vec![
        C::text(CORE, "lock", move |l| match l {
            Line::Done(r, _) => r.point.label(profiled),
            Line::Failed(f) => f.point.label(profiled),
        }),
        C::number(CORE, metric, move |l| {
            l.done("failed", |r, _| if rate { si(r.stats.mean) } else { format!("{:.3}", r.stats.mean) })
        }),
        C::number(CORE, "±%", |l| {
            l.done("-", |r, _| crate::output::table::interval_cell(&r.stats, r.stopped))
        }),
        C::number(CORE, "runs", |l| match l {
            Line::Done(r, _) => r.stats.n.to_string(),
            Line::Failed(f) => f.runs.len().to_string(),
        }),
        C::number(CORE, "vs pthread", move |l| {
            l.done("failed", |r, vs| {
                let s = &r.sample;
                match vs {
                    Some(v) => format!("{:.3}", v.ratio),
                    None if s.lock == GLIBC && r.point.profiled == profiled => "1".into(),
                    // The unprofiled pthread of --profile: the profile's cost, below.
                    None if s.lock == GLIBC => "-".into(),
                    None if s.swapped == 0 && !s.program_reported => "no report".into(),
                    None if s.swapped == 0 => "not used".into(),
                    None => "-".into(),
                }
            })
        }),
        C::number(CORE, "95% interval", |l| {
            l.done("-", |_, vs| {
                vs.and_then(|v| v.ci95).map_or("-".into(), |(lo, hi)| format!("{lo:.3}..{hi:.3}"))
            })
        }),
        C::number("time", "user s", |l| format!("{:.3}", l.sample().user_s)),
        C::number("time", "sys s", |l| format!("{:.3}", l.sample().sys_s)),
        // A lock's futex count comes from its counting run, when there is
        // one; a failed lock's from the failing execution.
        C::number("kernel", "futex", |l| match l {
            Line::Done(r, _) => opt(r.kernel_run().futex.map(|f| f.calls)),
            Line::Failed(_) => opt(l.sample().futex.map(|f| f.calls)),
        }),
        C::number("kernel", "vcsw", |l| l.sample().voluntary_context_switches.to_string()),
        C::number("mutexes", "swapped", |l| count(l.sample().swapped)),
        C::number("mutexes", "glibc", move |l| {
            let s = l.sample();
            if procs {
                format!("{} ({} procs)", count(s.to_glibc), s.processes)
            } else {
                count(s.to_glibc)
            }
        }),
    ]
}

/// The lock table and the profile.
pub fn table(spec: &ProgramSpec, o: &ProgramOutcome, shown: &Shown, preset: &str) -> String {
    if let crate::family::program::run_mode::RunMode::Attach { .. } = spec.mode {
        return super::futex::attached(spec, o, preset);
    }
    let rate = spec.metric.is_some();
    let metric = if rate { "metric/s" } else { "wall s" };
    let procs = o.results.iter().any(|r| r.sample.processes > 1);
    let columns = Columns::shown(columns(metric, rate, procs, spec.profile), shown);
    let done = o.results.iter().zip(&o.vs_glibc).map(|(r, vs)| columns.cells(&Line::Done(r, vs.as_ref())));
    let failed = o.failed.iter().map(|f| columns.cells(&Line::Failed(f)));
    let rows: Vec<Vec<String>> = done.chain(failed).collect();
    let t = columns.render(&rows, preset);
    let notes =
        crate::output::table::precision_note(o.results.iter().map(|r| (r.stopped, &r.stats, &r.runs[..])));
    let core = format!(
        "{metric}: {}, mean over the runs; ±%: its 95% confidence interval; vs pthread: the geometric mean of \
         each round's lock/pthread ratio ({}), with its 95% interval (Student's t over the rounds' log \
         ratios). Other columns: the median run.\n",
        if rate { "the rate --metric took from the program's output" } else { "the program's wall time" },
        if rate { "above 1: faster" } else { "below 1: faster" },
    );
    let profiled = match (spec.profile, &o.profile_cost) {
        (false, _) => String::new(),
        (true, cost) => format!(
            "Profiled: every acquisition also paid for the profile (a try-lock, a lookup and two clock reads: \
             tens of ns, docs/results/interposer-cost.md), so these times are the profiled program's; \
             pthread (unprofiled) ran in the same rounds without it: {}.\n",
            match cost {
                Some(c) => {
                    // As a slowdown factor: above 1, the profile costs.
                    let (factor, ci) = match rate {
                        true => (1.0 / c.ratio, c.ci95.map(|(lo, hi)| (1.0 / hi, 1.0 / lo))),
                        false => (c.ratio, c.ci95),
                    };
                    format!(
                        "{} ({}; {}{} rounds)",
                        profile_cost_verdict(factor, ci),
                        if rate { "unprofiled / profiled rate" } else { "profiled / unprofiled wall time" },
                        ci.map_or(String::new(), |(lo, hi)| format!("95% interval {lo:.3}..{hi:.3}, ")),
                        c.rounds
                    )
                }
                None => "no rounds to pair, so no cost is given".into(),
            }
        ),
    };
    let chosen: String = o
        .results
        .iter()
        .filter_map(|r| r.point.chosen.as_ref().map(|c| (&r.point.lock, c)))
        .filter(|(lock, c)| lock.as_str() != c.replace(';', "+"))
        .map(|(lock, c)| {
            format!("{lock}: swapped the mutexes {}; every other one stayed glibc's.\n", c.replace(';', ", "))
        })
        .collect();
    let aslr = if spec.fixed_addresses {
        "The program ran with address randomization off (as under setarch -R), so that a mutex chosen by \
         address is the same one in every execution; --aslr on keeps it on.\n"
    } else {
        ""
    };
    let text = format!(
        "{}{notes}{chosen}{aslr}{core}{profiled}{}{}{}",
        failed_note(o, spec.profile),
        interposer_rate(o, spec.profile),
        columns.legend(GROUPS),
        shown.hidden_note(GROUPS)
    );
    let mut out = format!("{t}\n\n{}", crate::output::table::fit(&text));
    if spec.profile {
        for r in o.results.iter().filter(|r| r.point.profiled) {
            out += &profile(r, spec, preset);
        }
    }
    if let Some(rec) = &o.recommendation {
        out += &super::advice::table(rec, preset);
    }
    if let Some(w) = &o.what_if {
        out += &super::whatif::text(w);
    }
    if let Some(w) = &o.speedup {
        out += &super::speedup::text(w);
    }
    out
}

/// Why each failed lock failed, first under the table: the one thing a
/// reader must not miss.
fn failed_note(o: &ProgramOutcome, profiled: bool) -> String {
    o.failed
        .iter()
        .map(|f| {
            format!(
                "FAILED: {} in execution {} (round {}): {}. It gets no ratio: the program does not run \
                 under it as it does under glibc's mutex.\n",
                f.point.label(profiled),
                f.runs.len(),
                f.round + 1,
                f.reason
            )
        })
        .collect()
}

/// What every ratio carries: the acquisitions each point made through the
/// interposer per ms of wall time (the median run), each of which paid
/// the interposer's own cost on top of the lock's; said when some lock
/// was swapped, so that a reader can weigh a small ratio against it.
fn interposer_rate(o: &ProgramOutcome, profiled: bool) -> String {
    if o.results.iter().all(|r| r.sample.swapped == 0) {
        return String::new();
    }
    let rates: Vec<String> = o
        .results
        .iter()
        .filter(|r| r.sample.wall_s > 0.0)
        .map(|r| {
            let per_ms = (r.sample.swapped + r.sample.to_glibc) as f64 / (r.sample.wall_s * 1e3);
            format!("{} {}", r.point.label(profiled), si(per_ms))
        })
        .collect();
    format!(
        "The swap's own cost, in every ratio: acquisitions through the interposer per ms of wall time: {}. \
         Each paid the interposer's checks and, swapped, its node cache, beyond the lock itself: a few ns, \
         measured by scripts/experiments/interposer-cost.py (docs/results/interposer-cost.md, on the host it \
         names).\n",
        rates.join(", ")
    )
}

/// glibc's kind in words; under a swapped lock, the mutexes left to
/// glibc say so.
fn kind(k: i32, swapped: bool, glibc_anyway: bool) -> String {
    let base = match k & 3 {
        1 => "recursive",
        2 => "errorcheck",
        3 => "adaptive",
        _ => "normal",
    };
    let mut s = base.to_string();
    for (bit, name) in [(16, "+robust"), (32, "+pi"), (64, "+pp"), (128, "+shared")] {
        if k & bit != 0 {
            s += name;
        }
    }
    if !swapped && !glibc_anyway {
        s += " (glibc)";
    }
    s
}

/// One lock's profile: the top mutexes by `sort`'s key (total wait unless
/// `--sort` says otherwise) of its futex-counting run (which has the
/// kernel waits), else of its median run.
fn profile(r: &ProgramResult, spec: &ProgramSpec, preset: &str) -> String {
    let (top, sort, fixed_addresses) = (spec.top, spec.sort, spec.fixed_addresses);
    let s = r.kernel_run();
    let which = if std::ptr::eq(s, &r.sample) {
        "median run"
    } else {
        "the futex-counting run, whose syscalls the tracepoint slowed"
    };
    if s.mutexes.is_empty() {
        let none = if s.loaded == 0 && s.processes == 0 {
            "the interposer was not loaded (a statically linked or set-uid program ignores LD_PRELOAD): no \
             pthread profile; the futex view below is the kernel's side of its locks"
        } else {
            "no pthread mutex was locked"
        };
        let head = format!(
            "profile under {} ({which}, round {}): {none}\n",
            r.point.label(spec.profile),
            s.run.round
        );
        return format!(
            "\n{}{}",
            crate::output::table::fit(&head),
            super::rwlocks::table(s, top, preset) + &super::futex::table(s, preset)
        );
    }
    let total: u64 = s.mutexes.iter().map(|m| m.counts.acquisitions).sum();
    let contended: u64 = s.mutexes.iter().map(|m| m.counts.contended).sum();
    let label = super::holders::mutex_label(&s.mutexes);
    let order = sort.order(&s.mutexes);
    let shown: Vec<&MutexProfile> = order.iter().copied().take(top).collect();
    // Condition waits get a column only when a shown mutex has some; the
    // kind only when a shown mutex is not a plain one (the legend says
    // so otherwise): the room goes to the call sites.
    let conds = shown.iter().any(|m| m.counts.cond_waits > 0);
    let kind_of = |m: &MutexProfile| kind(m.kind, m.swapped, s.lock == GLIBC);
    let kinds = shown.iter().any(|m| kind_of(m) != "normal");
    let parks = shown.iter().any(|m| m.parked_waits > 0);
    type M<'b> = Column<'b, MutexProfile>;
    let columns = Columns::applying(vec![
        M::text(CORE, "mutex", label),
        M::wrapping("waits at", |m| m.waits_at.clone()),
        M::number(CORE, "acquired", |m| m.counts.acquisitions.to_string()),
        M::number(CORE, "had to wait", |m| {
            let share = 100.0 * m.counts.contended as f64 / m.counts.acquisitions.max(1) as f64;
            format!("{} ({share:.0}%)", m.counts.contended)
        }),
        M::number(CORE, "kernel waits", |m| m.kernel_waits.map_or("-".into(), |n| n.to_string())),
        M::number(CORE, "cond waits", |m| m.counts.cond_waits.to_string()).only_if(conds),
        M::number(CORE, "parked", |m| m.parked_waits.to_string()).only_if(parks),
        M::number(CORE, "wait ms", |m| format!("{:.3}", m.counts.wait_ns as f64 / 1e6)),
        M::number(CORE, "p99 wait µs", |m| format!("{:.1}", m.counts.p99_wait_ns as f64 / 1e3)),
        M::number(CORE, "max wait µs", |m| format!("{:.1}", m.counts.max_wait_ns as f64 / 1e3)),
        M::number(CORE, "mean hold µs", |m| format!("{:.2}", m.mean_hold_ns / 1e3)),
        M::text(CORE, "kind", kind_of).only_if(kinds),
    ]);
    let rows: Vec<Vec<String>> = shown.iter().map(|m| columns.cells(m)).collect();
    let t = columns.render(&rows, preset);
    let kernel = s
        .kernel_waits
        .map_or(String::new(), |k| format!(", {} kernel waits on them ({} in all)", k.on_mutexes, k.all));
    let processes = match &spec.process {
        None => format!("{} process(es)", s.processes),
        Some(name) => {
            let mut pids: Vec<u32> = s.mutexes.iter().map(|m| m.pid).collect();
            pids.sort_unstable();
            pids.dedup();
            format!("{} process(es) named {name} (--process; {} reported)", pids.len(), s.processes)
        }
    };
    let head = format!(
        "\nprofile under {} ({which}, round {}): {} mutexes in {processes}, {} acquisitions, {} had to \
         wait{kernel}; top {} by {}:\n",
        r.point.label(spec.profile),
        s.run.round,
        s.mutexes.len(),
        total,
        contended,
        top.min(s.mutexes.len()),
        sort.words()
    );
    let legend =
        "mutex: its address (process/pid:address with several processes); waits at: the call site of its \
                  most-waited stack, past the wrapper functions it shares with other mutexes (of its \
                  first acquisition's stack if it never waited; module+0xoffset when the module has no \
                  symbols); had to wait: acquisitions whose first try-lock failed (the profile's \
                  \"contended\"); kernel waits: times a thread blocked in the kernel on it (FUTEX_WAIT \
                  calls on its address, from the futex tracepoint; including the re-acquisitions inside \
                  glibc's condition wait, whose wait the profile cannot time); cond waits: condition \
                  waits that released and re-took it; parked (shown when a mutex has some): waits \
                  followed by an empty section, the thread letting the mutex go (or going into a \
                  condition wait on it) with only the call's arguments in between; wait: from the failed \
                  try-lock to the acquisition; p99 to 12.5%; hold: from acquisition to unlock; kind: shown \
                  when a mutex is not a plain (normal) one.\n";
    // With randomization on, another execution puts a PIE's mutexes
    // elsewhere: the address is no name for them.
    let legend = if fixed_addresses {
        legend.to_string()
    } else {
        format!(
            "{legend}The addresses are this execution's (address randomization was on): to choose a mutex \
             in another run, name it by its function or file:line (--lock tas@FUNCTION), or profile with \
             --aslr off.\n"
        )
    };
    let parking: Vec<String> =
        shown.iter().filter(|m| m.parking()).map(|m| format!("{:#x} {}", m.address, m.waits_at)).collect();
    let legend = if parking.is_empty() {
        legend
    } else {
        format!(
            "{legend}parking, not contention (half of its wait or more was parked: its waiters had nothing \
             to do once they got it, so shorter sections elsewhere would not give them more; left out of \
             --what-if top:N and --recommend): {}.\n",
            parking.join(", ")
        )
    };
    let mut stacks = String::new();
    for (m, st) in shown.iter().flat_map(|m| m.stacks.iter().take(2).map(move |st| (*m, st))) {
        if st.frames.is_empty() {
            continue;
        }
        let mut frames: Vec<String> = st.frames[st.wrappers..].to_vec();
        if st.wrappers > 0 {
            frames.insert(0, format!("[{}]", st.frames[..st.wrappers].join(" <- ")));
        }
        let head = format!(
            "  {:#x}: {} walked, {:.3} ms waited: ",
            m.address,
            st.contended,
            st.wait_ns as f64 / 1e6
        );
        stacks += &crate::output::table::fit_items(&head, &frames, " <- ");
    }
    if !stacks.is_empty() {
        stacks = crate::output::table::fit(
            "stacks of the top mutexes' contended acquisitions (two each at most; innermost first, \
             wrappers in brackets; walked: every one of a mutex's first 64, then one in 16):",
        ) + &stacks;
    }
    let hints: String = s.symbol_hints.iter().map(|h| format!("{h}\n")).collect();
    format!(
        "{}{t}\n{}{}{}{}{}{}",
        crate::output::table::fit(&head),
        crate::output::table::fit(&legend),
        stacks,
        super::holders::table(s, top, preset),
        super::rwlocks::table(s, top, preset),
        super::futex::table(s, preset),
        crate::output::table::fit(&hints)
    )
}

/// What the profile cost, said by its interval (a slowdown factor: above
/// 1, the profiled executions were slower): slower only when the whole
/// interval is above 1, "no measurable cost" when it holds 1, and no
/// verdict from one round.
fn profile_cost_verdict(factor: f64, ci: Option<(f64, f64)>) -> String {
    match ci {
        None => format!("x{factor:.3} in one round: no interval, so no verdict (raise --runs)"),
        Some((lo, _)) if lo > 1.0 => format!("the profile made this program {factor:.3}x slower"),
        Some((_, hi)) if hi < 1.0 => format!(
            "the profiled executions were faster (x{factor:.3}): the rounds' own differences outweighed \
             the profile's cost"
        ),
        Some(_) => format!("no measurable cost (x{factor:.3}, its interval holds 1)"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_profile_cost_is_said_by_its_interval() {
        assert!(super::profile_cost_verdict(1.2, Some((1.1, 1.3))).contains("1.200x slower"));
        assert!(super::profile_cost_verdict(1.046, Some((0.922, 1.187))).starts_with("no measurable cost"));
        assert!(super::profile_cost_verdict(0.76, Some((0.6, 0.9))).contains("were faster"));
        assert!(super::profile_cost_verdict(14.4, None).contains("no verdict"));
    }
}
