//! From what the futex view saw (`measure::futex_view`) to the profile's
//! futex table: the program's words (contend's keeper left out), the
//! longest-blocked first, each named (`data_names`) and marked where it is
//! a pthread mutex the interposer also profiled, whose "kernel waits" are
//! the view's waits on its address; with its waiters' and wakers' user
//! stacks (`futex_stacks`) where the view sampled them, and over every
//! word the sites where the sampled waits slept.

use crate::family::program::data_names::DataNames;
use crate::family::program::futex_stacks::StackNames;
use crate::family::program::symbols::Symbolizer;
use crate::measure::futex_view::account::WordAccount;
use crate::measure::futex_view::holders::{Cause, Split, Timeline};
use crate::measure::futex_view::{windows, Seen};
use crate::model::futex_word::{
    first_site, told_apart, BlockedIn, FutexSite, FutexView, FutexWaker, FutexWord, HolderSampling,
    HolderSplit, SITES,
};
use crate::model::program::{KernelWaitTotals, MutexProfile};
use std::collections::HashMap;

/// The view's table (its `top` words) and the totals; sets each mutex's
/// kernel waits. `started`: the view followed contend's own tree (`contend run`), where
/// contend and the keeper (`contend __keeper`) that starts the program
/// are not the program; `contend attach` follows only the process asked
/// for, which may itself be a contend.
pub fn words(
    seen: &Seen,
    mutexes: &mut [MutexProfile],
    top: usize,
    names: &mut DataNames,
    symbols: &mut Symbolizer,
    started: bool,
) -> (FutexView, KernelWaitTotals) {
    let ours = |pid: u32| {
        started && (pid == std::process::id() || seen.processes.get(&pid).is_some_and(|c| c == "contend"))
    };
    let program: Vec<(&(u32, u64), _)> =
        seen.account.words.iter().filter(|((pid, _), _)| !ours(*pid)).collect();
    let mut on_mutexes = 0;
    for m in mutexes.iter_mut() {
        let n = seen.account.words.get(&(m.pid, m.address)).map_or(0, |w| w.counts.waits);
        m.kernel_waits = Some(n);
        on_mutexes += n;
    }
    let all = program.iter().map(|(_, w)| w.counts.waits).sum();
    let mut stacks = StackNames::new(&seen.stacks, symbols);
    let mut ranked: Vec<_> = program.iter().filter(|(_, w)| w.counts.waits > 0).collect();
    ranked.sort_by_key(|((pid, address), w)| {
        (std::cmp::Reverse((w.counts.blocked_ns, w.counts.waits)), *pid, *address)
    });
    let words = ranked
        .into_iter()
        .take(top)
        .map(|((pid, address), w)| {
            // The kernel's records of the mappings as made, then the last
            // map read (which has the heap and the main stack).
            let maps: Vec<_> =
                seen.mapped.get(pid).into_iter().chain(seen.maps.get(pid)).flatten().cloned().collect();
            let mut wakers: Vec<FutexWaker> = w
                .wakers
                .iter()
                .map(|(&tid, &n)| FutexWaker {
                    tid,
                    // A thread named by nobody has its process's name (and
                    // one that exited before it was read has none).
                    comm: [seen.comms.get(&tid), seen.processes.get(pid)]
                        .into_iter()
                        .flatten()
                        .find(|c| !c.is_empty())
                        .cloned()
                        .unwrap_or_default(),
                    waits_ended: n,
                })
                .collect();
            wakers.sort_by_key(|k| (std::cmp::Reverse(k.waits_ended), k.tid));
            wakers.truncate(3);
            let waiter_stacks = stacks.top(w.waiter_stacks.iter().map(|(&n, &(calls, ns))| (n, calls, ns)));
            let waker_stacks = stacks.top(w.waker_stacks.iter().map(|(&n, &calls)| (n, calls, 0)));
            FutexWord {
                pid: *pid,
                address: *address,
                name: names.name(*address, &maps),
                pthread_mutex: mutexes.iter().any(|m| m.pid == *pid && m.address == *address),
                counts: w.counts,
                wakers,
                holder: seen.account.timeline.seen.then(|| {
                    holder_split(&w.holder, &seen.account.timeline, |a| {
                        if a == *address {
                            "this word".to_string()
                        } else {
                            told_apart(&names.name(a, &maps), a)
                        }
                    })
                }),
                waited_at: first_site(&waiter_stacks).map(str::to_string),
                waiter_stacks,
                waker_stacks,
            }
        })
        .collect();
    let sites = sites(program.iter().map(|(_, w)| *w), &mut stacks);
    let view = FutexView {
        calls: seen.account.calls.iter().filter(|(pid, _)| !ours(**pid)).map(|(_, n)| n).sum(),
        words_seen: program.len() as u64,
        words,
        waitv_calls: seen.account.waitv.iter().filter(|(pid, _)| !ours(**pid)).map(|(_, n)| n).sum(),
        waitv_unread: seen.account.waitv_unread.iter().filter(|(pid, _)| !ours(**pid)).map(|(_, n)| n).sum(),
        lost: seen.lost,
        no_split: seen.no_split.clone(),
        holder_sampling: seen.holder_coverage.filter(|_| seen.no_split.is_none()).map(|c| HolderSampling {
            budget_per_s: windows::BUDGET as u64,
            cycle_ms: windows::CYCLE / 1_000_000,
            followed_pct: (100.0 * c.followed).round() as u32,
            switches_per_s: c.rate.round() as u64,
        }),
        // Usable or not, the setting exists only where the kernel has it.
        slice_extension: locks::sys::kernel_knobs::slice_extension().is_ok(),
        stacks: seen.stack_stats,
        no_stacks: seen.no_stacks.clone(),
        per_thread: seen.per_thread.clone(),
        sites,
    };
    (view, KernelWaitTotals { all, on_mutexes, lost: seen.lost })
}

/// The [`SITES`] sites whose sampled waits slept longest, over every
/// word in `words`: each with the words it slept on.
fn sites<'a>(words: impl Iterator<Item = &'a WordAccount>, stacks: &mut StackNames) -> Vec<FutexSite> {
    let mut by_site: HashMap<String, FutexSite> = HashMap::new();
    for w in words {
        let mut counted: Vec<String> = Vec::new();
        for (&n, &(waits, ns)) in &w.waiter_stacks {
            let Some(site) = stacks.site_of(n) else { continue };
            let s = by_site
                .entry(site.clone())
                .or_insert_with(|| FutexSite { site: site.clone(), ..FutexSite::default() });
            s.waits += waits;
            s.blocked_ns += ns;
            if !counted.contains(&site) {
                s.words += 1;
                counted.push(site);
            }
        }
    }
    let mut sites: Vec<FutexSite> = by_site.into_values().collect();
    sites.sort_by(|a, b| (b.blocked_ns, b.waits, &a.site).cmp(&(a.blocked_ns, a.waits, &b.site)));
    sites.truncate(SITES);
    sites
}

/// How many causes of a holder's sleep a word lists.
const CAUSES: usize = 4;

/// A word's split as exported: causes named (a futex word by `name`;
/// the word itself is "this word": the waker was queued on it too, before
/// it held it), the longest first, the rest under "other".
fn holder_split(split: &Split, timeline: &Timeline, mut name: impl FnMut(u64) -> String) -> HolderSplit {
    let mut causes: Vec<(&Cause, &u64)> = split.blocked.iter().collect();
    causes.sort_by_key(|(c, ns)| (std::cmp::Reverse(**ns), **c));
    let mut blocked_in: Vec<BlockedIn> = causes
        .iter()
        .take(CAUSES)
        .map(|(c, &ns)| match **c {
            Cause::Futex(a) => BlockedIn { cause: format!("futex {}", name(a)), futex_word: Some(a), ns },
            Cause::Kernel(n) => BlockedIn { cause: timeline.reason(n).to_string(), futex_word: None, ns },
            Cause::Unknown => BlockedIn { cause: "not known".into(), futex_word: None, ns },
        })
        .collect();
    let rest: u64 = causes.iter().skip(CAUSES).map(|(_, &ns)| ns).sum();
    if rest > 0 {
        blocked_in.push(BlockedIn { cause: "other".into(), futex_word: None, ns: rest });
    }
    HolderSplit {
        running_ns: split.running,
        preempted_ns: split.preempted,
        blocked_ns: split.blocked.values().sum(),
        blocked_in,
        waking_ns: split.waking,
        unknown_ns: split.unknown,
        unsampled_ns: split.unsampled,
    }
}
