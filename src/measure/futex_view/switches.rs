//! The holders' context switches as the in-kernel router hands them
//! over: what a routed sched_switch record says, and when the router is
//! on (the sampling windows, `windows`), with the threads' states read
//! as each window opens (`observe`).

use super::{observe, Event, State};
use locks::sys::clock::monotonic_ns;

/// What a routed sched_switch record says: the followed thread leaving
/// (preempted when its state's low byte is 0), the followed thread
/// coming, or both (its flags byte, after the id: 1 and 2).
pub(super) fn routed_switch(
    s: &locks::sys::perf_ring::Sample<'_>,
    id: [u8; 2],
    prev_state: usize,
    next_pid: usize,
) -> Vec<(u64, u32, u32, Event)> {
    let mut said = Vec::new();
    let (Some(head), Some(state), Some(next)) =
        (s.raw.get(0..3), s.raw.get(prev_state..prev_state + 8), s.raw.get(next_pid..next_pid + 4))
    else {
        return said;
    };
    if head[0..2] != id {
        return said;
    }
    if head[2] & 1 != 0 {
        said.push((s.time, s.pid, s.tid, Event::Switch { out: true, preempted: state[0] == 0 }));
    }
    if head[2] & 2 != 0 {
        let tid = u32::from_ne_bytes(next.try_into().expect("4 bytes"));
        // Its process is not in the record; the timeline needs only the
        // thread.
        said.push((s.time, 0, tid, Event::Switch { out: false, preempted: false }));
    }
    said
}

/// Turns the switch router on or off as the windows say, `switched`
/// records read since the last pass, and notes when the switches were
/// not followed: from before the router is turned off, to after it is on.
pub(super) fn follow_switches(state: &mut State, switched: u64) {
    let (Some(windows), Some(filter)) = (&mut state.windows, &mut state.filter) else { return };
    let timeline = &mut state.seen.account.timeline;
    let before = monotonic_ns();
    let Some(on) = windows.tick(before, switched) else { return };
    if !on {
        timeline.unfollowed_from(before);
    }
    if filter.route_switches_now(on).is_err() {
        // Followed in full from now on, if the map takes it at all (else
        // the gap stays open: its time is not split).
        state.windows = None;
        if filter.route_switches_now(true).is_err() {
            timeline.unfollowed_from(before);
            return;
        }
    }
    if on || state.windows.is_none() {
        let at = monotonic_ns();
        timeline.followed_from(at);
        let observed = observe::states(&mut state.seen, at);
        state.pending.extend(observed);
    }
}
