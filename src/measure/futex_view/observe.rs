//! The followed threads' states as a window of followed switches opens,
//! read from /proc: until its first switch in the window, a thread's
//! state is otherwise not known, and a holder asleep for a whole window
//! (parked in io_uring_enter or epoll_wait) would be split as "not known".
//!
//! Each thread's stat line gives its state letter; a sleeping thread's
//! kernel stack (/proc/PID/task/TID/stack, root only) gives its syscall,
//! named as a switch-out's stack names it (`holders::reason`). Both are
//! stamped with the window's opening: a thread that switched between the
//! opening and its reading (a few microseconds each) is charged its new
//! state a little early.

use super::holders::{reason, Observed};
use super::procfs::{kernel_stack, task_state, threads};
use super::{Event, Seen};

/// At most this many threads are read at one opening (two small reads
/// each, about 10 µs): what bounds contend's own cost at two openings a
/// second.
const MOST: usize = 1024;

/// What each thread of the processes `seen` knows was doing, as events
/// stamped `at` (its reasons numbered in its timeline).
pub(super) fn states(seen: &mut Seen, at: u64) -> Vec<(u64, u32, u32, Event)> {
    let (pids, timeline) = (seen.processes.keys().copied().collect::<Vec<u32>>(), &mut seen.account.timeline);
    let mut said = Vec::new();
    for pid in pids {
        for tid in threads(pid).unwrap_or_default() {
            if said.len() == MOST {
                return said;
            }
            let tid = tid as u32;
            let state = match task_state(pid, tid) {
                Some('R') => Observed::Runnable,
                Some('S' | 'D') => Observed::Asleep(
                    kernel_stack(pid, tid)
                        .map(|frames| timeline.number(&reason(frames.iter().map(String::as_str)))),
                ),
                // Stopped, exiting, or gone: left to its switches.
                _ => continue,
            };
            said.push((at, pid, tid, Event::Observed(state)));
        }
    }
    said
}
