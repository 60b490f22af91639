//! What the interposer of each process reported, read from the
//! execution's directory (`scratch.rs`) in the format both sides share
//! (`locks::in_mutex::report`), and turned into contend's model: the
//! processes it entered, the inits summed, every mutex named.

use crate::family::program::scratch::ExecDir;
use crate::family::program::symbols::Symbolizer;
use crate::model::program::{
    HolderProfile, MutexCounts, MutexInits, MutexProfile, ProfileSort, RwKind, RwLockProfile, SideProfile,
    StackProfile, GLIBC,
};
use anyhow::{anyhow, Result};
use locks::in_mutex::report::Frame;
pub use locks::in_mutex::report::ProcessReport as Report;

/// The pid in a `<what>.<pid>.tsv` or `<what>.<pid>.<k>.tsv` name.
fn pid_of(name: &str) -> Option<u32> {
    name.split('.').nth(1)?.parse().ok()
}

/// Every process's report, by pid.
pub fn read(exec: &ExecDir) -> Result<Vec<Report>> {
    let mut out = Vec::new();
    for (name, bytes) in exec.read_files("interpose.")? {
        // Made at load (as root), never written: the process left without
        // its report.
        if bytes.is_empty() {
            continue;
        }
        // Module paths are bytes; a path that is not UTF-8 is shown lossily.
        let r = locks::in_mutex::report::parse(&String::from_utf8_lossy(&bytes))
            .map_err(|e| anyhow!("the interposer's report {name}: {e}"))?;
        out.push(r);
    }
    out.sort_by_key(|r| r.pid);
    Ok(out)
}

/// What the interposer said in each process, faults first
/// (`locks::in_mutex::said`).
pub fn said(exec: &ExecDir) -> Result<Vec<crate::model::program::Said>> {
    use locks::in_mutex::said::{parse, Gravity, PREFIX};
    let mut out = Vec::new();
    for (name, bytes) in exec.read_files(&format!("{PREFIX}."))? {
        let (gravity, text) = parse(&String::from_utf8_lossy(&bytes))
            .map_err(|e| anyhow!("what the interposer said in {name}: {e}"))?;
        out.push(crate::model::program::Said {
            pid: pid_of(&name).unwrap_or(0),
            fault: gravity == Gravity::Fault,
            text,
        });
    }
    out.sort_by_key(|s| (!s.fault, s.pid));
    Ok(out)
}

/// The processes the interposer was loaded into (its marker at load).
pub fn loaded(exec: &ExecDir) -> Result<Vec<u32>> {
    Ok(exec.read_files("loaded.")?.iter().filter_map(|(name, _)| pid_of(name)).collect())
}

/// The `pthread_mutex_init` calls of every process, by outcome.
pub fn inits(reports: &[Report]) -> MutexInits {
    let mut t = MutexInits::default();
    for r in reports {
        let [recursive, errorcheck, robust, pi_or_pp, pshared] = r.inits.glibc;
        t.swapped += r.inits.swapped;
        t.recursive += recursive;
        t.errorcheck += errorcheck;
        t.robust += robust;
        t.pi_or_pp += pi_or_pp;
        t.pshared += pshared;
    }
    t
}

/// Every mutex of every process, named, most waited-on first, and how to
/// get names for the modules that the first `top` in `sort`'s order (the
/// ones the table shows) could only be named in by offset.
pub fn profiles(
    reports: &[Report],
    symbols: &mut Symbolizer,
    top: usize,
    sort: ProfileSort,
) -> (Vec<MutexProfile>, Vec<String>) {
    let mut out = Vec::new();
    // The names that could only be `module+0xoffset`, and their module.
    let mut by_offset: std::collections::HashMap<String, String> = Default::default();
    for r in reports {
        let first = out.len();
        for m in &r.mutexes {
            let (c, at) = (&m.counts, &m.site);
            let dynamic = at.symbol.as_deref().map(|s| (s, at.symbol_address));
            let site = symbols.name(c.site, &at.module, at.module_base, dynamic);
            // A stack's names, and how many of its first frames are the
            // toolchain's wrappers (std::mutex::lock and its kin), which
            // start folded: the last frame never is.
            let mut name = |frames: &[Frame]| -> (Vec<String>, usize) {
                let (mut leading, mut in_toolchain) = (0, true);
                let named = frames
                    .iter()
                    .map(|f| {
                        let dynamic = f.site.symbol.as_deref().map(|s| (s, f.site.symbol_address));
                        let named = symbols.name(f.address, &f.site.module, f.site.module_base, dynamic);
                        if named.by_offset {
                            by_offset.insert(named.text.clone(), f.site.module.clone());
                        }
                        in_toolchain &= named.toolchain;
                        leading += usize::from(in_toolchain);
                        named.text
                    })
                    .collect::<Vec<_>>();
                let wrappers = leading.min(named.len().saturating_sub(1));
                (named, wrappers)
            };
            let mut holders: Vec<HolderProfile> = m
                .holders
                .iter()
                .map(|h| {
                    let (frames, wrappers) = name(&h.frames);
                    let (releases, held_ns, caused_wait_ns) = (h.releases, h.held_ns, h.caused_ns);
                    HolderProfile { releases, held_ns, caused_wait_ns, frames, wrappers }
                })
                .collect();
            holders.sort_by_key(|h| (h.frames.is_empty(), std::cmp::Reverse(h.caused_wait_ns)));
            let mut uncounted = |frames: &[Frame]| {
                let (frames, wrappers) = name(frames);
                StackProfile { contended: 0, wait_ns: 0, frames, wrappers }
            };
            let first_stack = (!m.first.is_empty()).then(|| uncounted(&m.first));
            let other_sites = m.sites.iter().filter(|s| !s.is_empty()).map(|s| uncounted(s)).collect();
            let mut stacks: Vec<StackProfile> = m
                .stacks
                .iter()
                .map(|st| {
                    let (frames, wrappers) = name(&st.frames);
                    StackProfile { contended: st.count, wait_ns: st.wait_ns, frames, wrappers }
                })
                .collect();
            // Most waited first; the stacks beyond those kept last.
            stacks.sort_by_key(|st| (st.frames.is_empty(), std::cmp::Reverse(st.wait_ns)));
            if site.by_offset {
                by_offset.insert(site.text.clone(), at.module.clone());
            }
            out.push(MutexProfile {
                pid: r.pid,
                comm: r.comm.clone(),
                address: c.address,
                waits_at: site.text.clone(),
                site: site.text,
                module: at.module.clone(),
                offset: site.offset,
                kind: c.kind,
                swapped: locks::in_mutex::swappable_kind(c.kind)
                    && match crate::family::program::choice::chosen_in(&r.lock) {
                        Some(chosen) => chosen.contains(&c.address),
                        None => r.lock != GLIBC,
                    },
                counts: MutexCounts::from(c),
                mean_hold_ns: if c.holds > 0 { c.hold_ns as f64 / c.holds as f64 } else { 0.0 },
                kernel_waits: None,
                stacks,
                first_stack,
                other_sites,
                holders,
                unattributed_wait_ns: m.unattributed_ns,
                parked_waits: m.parked,
                parked_wait_ns: m.parked_wait_ns,
                wait_histogram: m
                    .waits
                    .iter()
                    .map(|&(value_ns, count)| crate::measure::latency::Bucket { value_ns, count })
                    .collect(),
            });
        }
        fold_wrappers(&mut out[first..]);
    }
    // The order the tables show: most waited-on first.
    out.sort_by_key(|m| std::cmp::Reverse((m.counts.wait_ns, m.counts.acquisitions)));
    // The hints are for the mutexes the table shows, in --sort's order.
    let mut modules: Vec<&String> =
        sort.order(&out).into_iter().take(top).filter_map(|m| by_offset.get(&m.waits_at)).collect();
    modules.sort();
    modules.dedup();
    let hints = modules.into_iter().filter(|m| m.as_str() != "-").map(|m| symbols.hint(m)).collect();
    (out, hints)
}

/// Every rwlock and spinlock of every process, named, most waited-on
/// first.
pub fn rwlocks(reports: &[Report], symbols: &mut Symbolizer) -> Vec<RwLockProfile> {
    let mut out: Vec<RwLockProfile> = reports
        .iter()
        .flat_map(|r| r.rwlocks.iter().map(move |l| (r.pid, l)))
        .map(|(pid, l)| {
            let (c, at) = (&l.counts, &l.site);
            let dynamic = at.symbol.as_deref().map(|s| (s, at.symbol_address));
            let first_stack = l
                .first
                .iter()
                .map(|f| {
                    let dynamic = f.site.symbol.as_deref().map(|s| (s, f.site.symbol_address));
                    symbols.name(f.address, &f.site.module, f.site.module_base, dynamic).text
                })
                .collect();
            RwLockProfile {
                pid,
                address: c.address,
                kind: if c.spin { RwKind::Spinlock } else { RwKind::Rwlock },
                site: symbols.name(c.site, &at.module, at.module_base, dynamic).text,
                first_stack,
                read: SideProfile::from(&c.read),
                write: SideProfile::from(&c.write),
            }
        })
        .collect();
    out.sort_by_key(|l| std::cmp::Reverse((l.wait_ns(), l.read.acquisitions + l.write.acquisitions)));
    out
}

/// Folds away the wrapper frames of one process's stacks (the contended
/// ones, the first acquisitions' and the release sites') and names each
/// mutex by where it waits, or where it was first locked if it never
/// waited. A frame is a wrapper when, at the innermost place not folded
/// yet, it stands in the stacks of more than one mutex with more than one
/// caller: a function that locks whichever mutex it is given for whoever
/// calls it (pigz's `possess`, rocksdb's `port::Mutex::Lock`). A function
/// that locks several mutexes for one caller (the shards of a cache) is
/// where they wait, and stays. Repeated until nothing folds, so wrappers
/// of wrappers go too; the last frame of a stack never folds, nor into a
/// thread's start. The toolchain's wrappers (std::mutex::lock) come
/// folded already (see `profiles`).
pub fn fold_wrappers(mutexes: &mut [MutexProfile]) {
    use std::collections::{BTreeMap, BTreeSet};
    loop {
        // frame -> (mutexes, callers) over every stack's current frame.
        let mut seen: BTreeMap<&str, (BTreeSet<usize>, BTreeSet<&str>)> = BTreeMap::new();
        for (i, m) in mutexes.iter().enumerate() {
            for (frames, w) in stacks_of(m).filter(|(f, w)| foldable(f, *w)) {
                let e = seen.entry(frames[w].as_str()).or_default();
                e.0.insert(i);
                e.1.insert(frames[w + 1].as_str());
            }
        }
        let wrappers: BTreeSet<String> = seen
            .into_iter()
            .filter(|(_, (ms, callers))| ms.len() > 1 && callers.len() > 1)
            .map(|(f, _)| f.to_string())
            .collect();
        if wrappers.is_empty() {
            break;
        }
        for (frames, w) in mutexes.iter_mut().flat_map(stacks_of_mut) {
            if foldable(frames, *w) && wrappers.contains(&frames[*w]) {
                *w += 1;
            }
        }
    }
    for m in mutexes {
        let named = m.stacks.first().filter(|st| !st.frames.is_empty()).or(m.first_stack.as_ref());
        if let Some(st) = named {
            m.waits_at = st.frames[st.wrappers].clone();
        }
    }
}

/// Whether a stack's frame `w` may fold into its caller: the last frame
/// never does, nor a frame whose caller is where a thread or the process
/// starts (`start_thread`, `clone3`, `__libc_start_call_main`): those are
/// every thread's, and name nothing.
fn foldable(frames: &[String], w: usize) -> bool {
    frames.get(w + 1).is_some_and(|caller| !thread_entry(caller))
}

/// Whether a frame's name is the C library's start of a thread or of
/// the program.
fn thread_entry(frame: &str) -> bool {
    let function = frame.split([' ', '+']).next().unwrap_or(frame);
    [
        "start_thread",
        "clone",
        "clone3",
        "__clone",
        "__clone3",
        "__libc_start_call_main",
        "__libc_start_main",
        "_start",
    ]
    .contains(&function)
}

/// Every named stack of a mutex (contended, first, release sites) with
/// its wrapper count.
fn stacks_of(m: &MutexProfile) -> impl Iterator<Item = (&[String], usize)> {
    let locks =
        m.stacks.iter().chain(&m.first_stack).chain(&m.other_sites).map(|s| (&s.frames[..], s.wrappers));
    locks.chain(m.holders.iter().map(|h| (&h.frames[..], h.wrappers)))
}

/// [`stacks_of`], with the wrapper counts to change.
fn stacks_of_mut(m: &mut MutexProfile) -> impl Iterator<Item = (&[String], &mut usize)> {
    let locks = m
        .stacks
        .iter_mut()
        .chain(&mut m.first_stack)
        .chain(&mut m.other_sites)
        .map(|s| (&s.frames[..], &mut s.wrappers));
    locks.chain(m.holders.iter_mut().map(|h| (&h.frames[..], &mut h.wrappers)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mutex(address: u64, stacks: &[&[&str]]) -> MutexProfile {
        MutexProfile {
            pid: 1,
            comm: "m".into(),
            address,
            site: "first".into(),
            waits_at: "first".into(),
            module: "m".into(),
            offset: 0,
            kind: 0,
            swapped: false,
            counts: MutexCounts::default(),
            mean_hold_ns: 0.0,
            kernel_waits: None,
            first_stack: None,
            other_sites: Vec::new(),
            holders: Vec::new(),
            unattributed_wait_ns: 0,
            parked_waits: 0,
            parked_wait_ns: 0,
            wait_histogram: Vec::new(),
            stacks: stacks
                .iter()
                .enumerate()
                .map(|(i, f)| StackProfile {
                    contended: 1,
                    wait_ns: 100 - i as u64,
                    frames: f.iter().map(|s| s.to_string()).collect(),
                    wrappers: 0,
                })
                .collect(),
        }
    }

    #[test]
    fn a_wrapper_of_several_mutexes_and_callers_folds_and_one_of_one_caller_stays() {
        let mut ms = vec![
            // pigz: its queues' mutexes locked through `possess`, called
            // from several places.
            mutex(1, &[&["possess", "compress_thread", "start"], &["possess", "write_thread", "start"]]),
            mutex(2, &[&["possess", "write_thread", "start"]]),
            // Cache shards: one function locks several mutexes for one
            // caller: where they wait.
            mutex(3, &[&["lock", "Shard::Lookup", "Cache::Lookup"]]),
            mutex(4, &[&["lock", "Shard::Lookup", "Cache::Lookup"]]),
            // Never waited: keeps its first-locked site.
            mutex(5, &[]),
            // A one-frame stack cannot fold.
            mutex(6, &[&["possess"]]),
            // Never waited, but its first acquisition's stack is known.
            mutex(7, &[]),
        ];
        ms[6].first_stack = Some(StackProfile {
            contended: 0,
            wait_ns: 0,
            frames: vec!["possess".into(), "main".into()],
            wrappers: 0,
        });
        fold_wrappers(&mut ms);
        let names: Vec<&str> = ms.iter().map(|m| m.waits_at.as_str()).collect();
        assert_eq!(names, ["compress_thread", "write_thread", "lock", "lock", "first", "possess", "main"]);
        assert_eq!(ms[0].stacks[0].wrappers, 1);
        assert_eq!(ms[2].stacks[0].wrappers, 0, "`lock` has one caller: not a wrapper");
    }

    #[test]
    fn nothing_folds_into_a_threads_start() {
        // `lock` is a wrapper (two mutexes, callers `run` and `other`);
        // `run` locks both mutexes for two callers too, but one of them is
        // the C library's start of a thread: `run` is where they wait, not
        // `start_thread`, which every thread's stack ends in.
        let s = "start_thread (pthread_create.c:442)";
        let stacks: &[&[&str]] = &[&["lock", "run", s], &["lock", "run", "main"], &["lock", "other", "main"]];
        let mut ms = vec![mutex(0x10, stacks), mutex(0x20, stacks)];
        fold_wrappers(&mut ms);
        assert_eq!((ms[0].waits_at.as_str(), ms[1].waits_at.as_str()), ("run", "run"));
    }

    #[test]
    fn wrappers_of_wrappers_fold_too() {
        let mut ms = vec![
            mutex(1, &[&["Mutex::Lock", "MutexLock::new", "DB::Write", "main"]]),
            mutex(2, &[&["Mutex::Lock", "MutexLock::new", "Cache::Insert", "main"]]),
            mutex(3, &[&["Mutex::Lock", "DB::Get", "main"]]),
        ];
        fold_wrappers(&mut ms);
        let names: Vec<&str> = ms.iter().map(|m| m.waits_at.as_str()).collect();
        assert_eq!(names, ["DB::Write", "Cache::Insert", "DB::Get"]);
    }
}
