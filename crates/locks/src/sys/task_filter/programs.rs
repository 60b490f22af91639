//! The BPF programs of the task filter: the routers, which send a
//! followed thread's tracepoint record to output events, and the hooks
//! on fork and exit that keep the map of followed threads. Each returns
//! 1 (`task_filter` says why).

use super::asm::*;

/// The current thread's id at fp-4, and r1, r2 set for a map call on it
/// (r1 the map, r2 the key).
pub(super) fn current_tid_as_key(map: i32) -> Vec<Insn> {
    let mut p = vec![call(GET_CURRENT_PID_TGID), store32(R10, -4, R0)];
    p.extend(load_map(R1, map));
    p.extend([mov(R2, R10), add_imm(R2, -4)]);
    p
}

/// The record the context (r6) points to, `len` bytes (a multiple of 8,
/// at most 64), copied to the top of the stack but for its first 8 bytes
/// (where the kernel keeps the registers for the program), which get the
/// tracepoint's id as a record has it, with `flags` (a register, or
/// None) in the byte after it.
pub(super) fn copy_record(id: i32, len: i16, flags: Option<u8>) -> Vec<Insn> {
    copy_record_to(R10, -len, id, len, flags)
}

/// [`copy_record`] to the memory at register `to` plus `at`.
fn copy_record_to(to: u8, at: i16, id: i32, len: i16, flags: Option<u8>) -> Vec<Insn> {
    let mut p = Vec::new();
    for off in (8..len).step_by(8) {
        p.extend([load64(R1, R6, off), store64(to, at + off, R1)]);
    }
    p.push(mov_imm(R1, id));
    if let Some(flags) = flags {
        p.extend([mov(R2, flags), shift_left(R2, 16), or(R1, R2)]);
    }
    p.push(store64(to, at, R1));
    p
}

/// Sends the copied record (`len` bytes at the top of the stack) to the
/// output event of the CPU it runs on, in `map`.
pub(super) fn output(map: i32, len: i16) -> Vec<Insn> {
    output_from(map, R10, -len, len, None)
}

/// Sends `len` bytes at register `from` plus `at`, and as many more as
/// register `extra` says (when given), to the output event of the CPU it
/// runs on, in `map`.
fn output_from(map: i32, from: u8, at: i16, len: i16, extra: Option<u8>) -> Vec<Insn> {
    let mut p = vec![mov(R1, R6)];
    p.extend(load_map(R2, map));
    // BPF_F_CURRENT_CPU: the output event of the CPU it runs on.
    p.extend([mov32_imm(R3, -1), mov(R4, from)]);
    if at != 0 {
        p.push(add_imm(R4, at as i32));
    }
    match extra {
        Some(r) => p.extend([mov(R5, r), add_imm(R5, len as i32)]),
        None => p.push(mov_imm(R5, len as i32)),
    }
    p.push(call(PERF_EVENT_OUTPUT));
    p
}

/// Runs `then` only when r0 is not null (a map lookup found its key).
pub(super) fn if_found(then: Vec<Insn>) -> Vec<Insn> {
    let mut p = vec![jump_if_eq(R0, 0, then.len() as i16)];
    p.extend(then);
    p
}

/// A program that runs `then` (with the context in r6) when the current
/// thread is in the map `followed`, and returns 1.
fn when_followed(followed: i32, then: Vec<Insn>) -> Vec<Insn> {
    let mut p = vec![mov(R6, R1)];
    p.extend(current_tid_as_key(followed));
    p.push(call(MAP_LOOKUP_ELEM));
    p.extend(if_found(then));
    p.extend([mov_imm(R0, 1), exit()]);
    p
}

/// What a router sends: a tracepoint's record of `len` bytes, headed by
/// its id, to the outputs in `maps`, when the current thread is followed.
pub(super) fn route(followed: i32, id: i32, len: i16, maps: &[i32]) -> Vec<Insn> {
    let mut send = copy_record(id, len, None);
    for &map in maps {
        send.extend(output(map, len));
    }
    when_followed(followed, send)
}

/// futex_waitv's limit on its array (linux/futex.h FUTEX_WAITV_MAX):
/// the kernel refuses a call with more.
pub const WAITV_MAX: i32 = 128;

/// The size of one entry of that array (struct futex_waitv: the value,
/// the word's address, flags and a reserved u32).
pub const WAITV_ENTRY: i32 = 24;

/// The scratch a futex_waitv router builds its record in (a per-CPU
/// array's one value): the call's record, at most 64 bytes, then up to
/// [`WAITV_MAX`] entries of its array. The stack (512 bytes) is too
/// small for them.
pub const WAITV_SCRATCH: u32 = 64 + (WAITV_MAX * WAITV_ENTRY) as u32;

/// Where sys_enter_futex_waitv keeps what its router reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitvFields {
    /// Offset of `waiters` (the array's address in the caller's memory).
    pub waiters: i16,
    /// Offset of `nr_futexes`.
    pub nr: i16,
}

/// The router of sys_enter_futex_waitv: like [`route`], but what goes to
/// `first` is the record followed by the caller's array of entries,
/// copied from its memory (`nr_futexes` of them, [`WAITV_ENTRY`] bytes
/// each), built in `scratch` (a per-CPU array, key 0, of
/// [`WAITV_SCRATCH`] bytes). When the array cannot be read (more than
/// [`WAITV_MAX`], or its memory not there) the record goes alone. The
/// stacks' sampler (`second`) gets the record alone: it needs only the
/// thread.
///
/// Why a copy here: the words are in the caller's memory, which changes
/// as soon as the call returns, and the kernel's record has only the
/// array's address. The copy does not fault pages in (the helper gives
/// up instead), which is harmless: the caller has just written the
/// array.
pub(super) fn route_waitv(
    followed: i32,
    scratch: i32,
    id: i32,
    len: i16,
    at: WaitvFields,
    first: i32,
    second: Option<i32>,
) -> Vec<Insn> {
    let mut send = copy_record_to(R7, 0, id, len, None);
    // r8: the bytes of the array copied after the record (0 when none).
    let read = [
        mul_imm(R2, WAITV_ENTRY),
        mov(R8, R2),
        mov(R1, R7),
        add_imm(R1, len as i32),
        load64(R3, R6, at.waiters),
        call(PROBE_READ_USER),
        jump_if_eq(R0, 0, 1),
        mov_imm(R8, 0),
    ];
    send.extend([mov_imm(R8, 0), load32(R2, R6, at.nr), jump_if_above(R2, WAITV_MAX, read.len() as i16)]);
    send.extend(read);
    send.extend(output_from(first, R7, 0, len, Some(R8)));
    if let Some(second) = second {
        send.extend(output_from(second, R7, 0, len, None));
    }
    let mut found = vec![store32_imm(R10, -4, 0)];
    found.extend(load_map(R1, scratch));
    found.extend([mov(R2, R10), add_imm(R2, -4), call(MAP_LOOKUP_ELEM), mov(R7, R0)]);
    found.extend(if_found(send));
    when_followed(followed, found)
}

/// On sched_switch (in the thread leaving): when the thread leaving or
/// the one coming (its id at `next_pid`) is followed, the record (`len`
/// bytes) goes to `switches`, its flags byte saying which (1 leaving, 2
/// coming); when the leaving one is followed and goes to sleep (the low
/// byte of the long at `prev_state` is not 0: not preempted), to
/// `sleeps` too, first.
pub(super) fn route_switch(
    followed: i32,
    id: i32,
    len: i16,
    at: SwitchFields,
    switches: i32,
    sleeps: i32,
) -> Vec<Insn> {
    let mut p = vec![mov(R6, R1), mov_imm(R7, 0)];
    p.extend(current_tid_as_key(followed));
    p.push(call(MAP_LOOKUP_ELEM));
    p.extend(if_found(vec![mov_imm(R7, 1)]));
    p.extend([load32(R1, R6, at.next_pid), store32(R10, -4, R1)]);
    p.extend(load_map(R1, followed));
    p.extend([mov(R2, R10), add_imm(R2, -4), call(MAP_LOOKUP_ELEM)]);
    p.extend(if_found(vec![or_imm(R7, 2)]));
    // The sleep first, so that it is stamped before the switch (the
    // reader applies a switch-out with the reason noted before it).
    let mut send = copy_record(id, len, Some(R7));
    let sleep = output(sleeps, len);
    let asleep = [load64(R1, R6, at.prev_state), and_imm(R1, 255), jump_if_eq(R1, 0, sleep.len() as i16)];
    let leaving = [mov(R1, R7), and_imm(R1, 1), jump_if_eq(R1, 0, (asleep.len() + sleep.len()) as i16)];
    send.extend(leaving);
    send.extend(asleep);
    send.extend(sleep);
    send.extend(output(switches, len));
    p.push(jump_if_eq(R7, 0, send.len() as i16));
    p.extend(send);
    p.extend([mov_imm(R0, 1), exit()]);
    p
}

/// Where sched_switch keeps what its router reads.
#[derive(Debug, Clone, Copy)]
pub struct SwitchFields {
    /// Offset of prev_state (a long).
    pub prev_state: i16,
    /// Offset of next_pid.
    pub next_pid: i16,
}

/// On sched_process_fork (in the parent): when the parent is followed,
/// the child (its thread id at `child_pid` in the record) is too.
pub(super) fn on_fork(map: i32, child_pid: i16) -> Vec<Insn> {
    // Key fp-8 (the child), value fp-12; flags 0 (BPF_ANY).
    let mut add = vec![load32(R1, R6, child_pid), store32(R10, -8, R1), store32_imm(R10, -12, 1)];
    add.extend(load_map(R1, map));
    add.extend([mov(R2, R10), add_imm(R2, -8), mov(R3, R10), add_imm(R3, -12), mov_imm(R4, 0)]);
    add.push(call(MAP_UPDATE_ELEM));
    when_followed(map, add)
}

/// On sched_process_exit (in the exiting thread): it is forgotten.
pub(super) fn on_exit(map: i32) -> Vec<Insn> {
    let mut p = current_tid_as_key(map);
    p.extend([call(MAP_DELETE_ELEM), mov_imm(R0, 1), exit()]);
    p
}

#[cfg(test)]
mod tests {
    use super::super::asm::*;
    use super::*;

    #[test]
    fn the_fork_hook_jumps_to_its_return() {
        // The jump after the lookup must land on `r0 = 0; exit`.
        let p = on_fork(3, 20);
        let at = p.iter().position(|i| i.code == 0x15).expect("a jump");
        let lands = at + 1 + p[at].off as usize;
        assert_eq!(p[lands], mov_imm(R0, 1));
        assert_eq!(p[lands + 1], exit());
    }

    #[test]
    fn every_program_returns_1_so_that_other_users_keep_their_hits() {
        for p in [route(3, 7, 64, &[4, 5]), on_fork(3, 20), on_exit(3)] {
            assert_eq!(p[p.len() - 2..], [mov_imm(R0, 1), exit()]);
        }
    }

    #[test]
    fn a_switch_router_lands_every_jump_inside_and_returns_1() {
        let at = SwitchFields { prev_state: 32, next_pid: 56 };
        let p = route_switch(3, 7, 64, at, 4, 5);
        assert_eq!(p[..2], [mov(R6, R1), mov_imm(R7, 0)]);
        assert_eq!(p[p.len() - 2..], [mov_imm(R0, 1), exit()]);
        for (i, j) in p.iter().enumerate().filter(|(_, j)| j.code == 0x15) {
            let to = i + 1 + j.off as usize;
            assert!(to < p.len() - 1, "jump at {i} lands at {to}, past the return");
        }
        // Nobody followed: straight to the return.
        let skip = p.iter().rposition(|j| j.code == 0x15 && j.regs == R7).unwrap();
        assert_eq!(p[skip + 1 + p[skip].off as usize], mov_imm(R0, 1));
    }

    #[test]
    fn a_waitv_router_lands_every_jump_inside_and_returns_1() {
        let at = WaitvFields { waiters: 16, nr: 24 };
        for second in [None, Some(5)] {
            let p = route_waitv(3, 6, 7, 56, at, 4, second);
            assert_eq!(p[p.len() - 2..], [mov_imm(R0, 1), exit()]);
            for (i, j) in p.iter().enumerate().filter(|(_, j)| matches!(j.code, 0x15 | 0x25)) {
                let to = i + 1 + j.off as usize;
                assert!(to < p.len() - 1, "jump at {i} lands at {to}, past the return");
            }
            // Too many entries: past the copy, to the output, with r8 0.
            let cap = p.iter().position(|j| j.code == 0x25).unwrap();
            assert_eq!(p[cap - 2], mov_imm(R8, 0));
            assert_eq!(p[cap + 1 + p[cap].off as usize], mov(R1, R6));
            assert_eq!(
                p.iter().filter(|j| **j == call(PERF_EVENT_OUTPUT)).count(),
                1 + second.iter().count()
            );
        }
    }

    #[test]
    fn a_router_skips_to_its_return_for_a_thread_not_followed() {
        let p = route(3, 7, 24, &[4]);
        let at = p.iter().position(|i| i.code == 0x15).expect("a jump");
        assert_eq!(p[at + 1 + p[at].off as usize], mov_imm(R0, 1));
    }
}
