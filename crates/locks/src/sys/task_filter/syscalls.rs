//! The kernel calls of the task filter: bpf(2) for its maps and
//! programs, and the counting perf event a program is attached through.
//! Kept apart from the filter so that the filter reads as what it follows
//! and routes, not as attribute layouts.

use super::asm::Insn;
use perf_event_open_sys::bindings as pb;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// bpf(2) commands and types used here (linux/bpf.h).
const BPF_MAP_CREATE: i64 = 0;
pub(super) const BPF_MAP_LOOKUP_ELEM: i64 = 1;
const BPF_MAP_UPDATE_ELEM: i64 = 2;
pub(super) const BPF_MAP_DELETE_ELEM: i64 = 3;
const BPF_PROG_LOAD: i64 = 5;
pub(super) const BPF_MAP_TYPE_HASH: u32 = 1;
pub(super) const BPF_MAP_TYPE_PERF_EVENT_ARRAY: u32 = 4;
pub(super) const BPF_MAP_TYPE_PERCPU_ARRAY: u32 = 6;
const BPF_PROG_TYPE_TRACEPOINT: u32 = 5;

#[repr(C)]
struct Elem {
    map_fd: u32,
    _pad: u32,
    key: u64,
    value: u64,
    flags: u64,
}

/// A command on `map`'s element `key`, with a value at `value` (0: none).
pub(super) fn elem(map: &OwnedFd, cmd: i64, key: &u32, value: u64) -> io::Result<i64> {
    let attr =
        Elem { map_fd: map.as_raw_fd() as u32, _pad: 0, key: key as *const u32 as u64, value, flags: 0 };
    bpf(cmd, &attr)
}

/// Sets `map`'s element `key` to the u32 at `value`.
pub(super) fn update(map: &OwnedFd, key: &u32, value: u64) -> io::Result<()> {
    elem(map, BPF_MAP_UPDATE_ELEM, key, value).map(|_| ())
}

/// `program` run at each hit of tracepoint `id`, through a counting
/// event on `cpu` (closing it detaches the program).
pub(super) fn attached(id: u64, cpu: i32, program: &OwnedFd) -> io::Result<OwnedFd> {
    let event = counting(id, cpu)?;
    // SAFETY: a plain ioctl on a perf event fd we own, with a BPF program
    // fd; the kernel takes its own reference to the program.
    if unsafe { perf_event_open_sys::ioctls::SET_BPF(event.as_raw_fd(), program.as_raw_fd() as u32) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(event)
}

/// Opens a counting event of tracepoint `id` for every task on `cpu`:
/// what a program is attached through (it samples nothing).
pub(super) fn counting(id: u64, cpu: i32) -> io::Result<OwnedFd> {
    let mut attr = pb::perf_event_attr {
        type_: pb::PERF_TYPE_TRACEPOINT,
        size: std::mem::size_of::<pb::perf_event_attr>() as u32,
        config: id,
        ..Default::default()
    };
    // SAFETY: `attr` is a fully initialised perf_event_attr of the size we
    // declare; pid -1 with one CPU is every task on that CPU; no group.
    let fd = unsafe {
        perf_event_open_sys::perf_event_open(&mut attr, -1, cpu, -1, pb::PERF_FLAG_FD_CLOEXEC as _)
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: perf_event_open returned a new descriptor that we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A map of `kind`, keys and values of these sizes.
pub(super) fn create_map(kind: u32, key_size: u32, value_size: u32, max_entries: u32) -> io::Result<OwnedFd> {
    #[repr(C)]
    struct MapCreate {
        map_type: u32,
        key_size: u32,
        value_size: u32,
        max_entries: u32,
        map_flags: u32,
    }
    let attr = MapCreate { map_type: kind, key_size, value_size, max_entries, map_flags: 0 };
    owned(bpf(BPF_MAP_CREATE, &attr)?)
}

/// Loads `insns` as a tracepoint program named `name`; the verifier's
/// log is in the error when it refuses.
pub(super) fn load(insns: &[Insn], name: &str) -> io::Result<OwnedFd> {
    #[repr(C)]
    struct ProgLoad {
        prog_type: u32,
        insn_cnt: u32,
        insns: u64,
        license: u64,
        log_level: u32,
        log_size: u32,
        log_buf: u64,
        kern_version: u32,
        prog_flags: u32,
        prog_name: [u8; 16],
    }
    // The string is contend's own license; the kernel counts it as
    // GPL-compatible ("Dual MIT/GPL"), which the user-memory reader of
    // the futex_waitv router (a GPL-only helper) needs.
    let license = b"Dual MIT/GPL\0";
    let mut log = vec![0u8; 1 << 14];
    let mut prog_name = [0u8; 16];
    prog_name[..name.len().min(15)].copy_from_slice(&name.as_bytes()[..name.len().min(15)]);
    let attr = ProgLoad {
        prog_type: BPF_PROG_TYPE_TRACEPOINT,
        insn_cnt: insns.len() as u32,
        insns: insns.as_ptr() as u64,
        license: license.as_ptr() as u64,
        log_level: 1,
        log_size: log.len() as u32,
        log_buf: log.as_mut_ptr() as u64,
        kern_version: 0,
        prog_flags: 0,
        prog_name,
    };
    match bpf(BPF_PROG_LOAD, &attr) {
        Ok(fd) => owned(fd),
        Err(e) => {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let said = String::from_utf8_lossy(&log[..end]);
            let last = said.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
            Err(io::Error::new(e.kind(), format!("loading BPF program {name}: {e} {last}")))
        }
    }
}

/// bpf(2) with `attr`.
fn bpf<T>(cmd: i64, attr: &T) -> io::Result<i64> {
    // SAFETY: `attr` is a repr(C) prefix of union bpf_attr for `cmd`, of
    // the size passed; the kernel zero-extends what it is not given, and
    // any pointers in it point to live memory of this call's caller.
    let r = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr as *const T, std::mem::size_of::<T>()) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r)
}

/// Owns the descriptor bpf(2) returned.
fn owned(fd: i64) -> io::Result<OwnedFd> {
    // SAFETY: a new descriptor the call returned, owned from here.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}
