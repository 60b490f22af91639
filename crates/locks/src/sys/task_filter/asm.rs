//! Assembling BPF instructions (linux/bpf.h's encoding): the few the
//! programs of `programs` use, each a function named by what it does.

/// Helpers the programs call, by number (linux/bpf.h `__BPF_FUNC_MAPPER`).
pub(super) const MAP_LOOKUP_ELEM: i32 = 1;
pub(super) const MAP_UPDATE_ELEM: i32 = 2;
pub(super) const MAP_DELETE_ELEM: i32 = 3;
pub(super) const GET_CURRENT_PID_TGID: i32 = 14;
pub(super) const PERF_EVENT_OUTPUT: i32 = 25;
pub(super) const PROBE_READ_USER: i32 = 112;

/// One BPF instruction.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Insn {
    pub(super) code: u8,
    /// dst in the low four bits, src in the high four.
    pub(super) regs: u8,
    pub(super) off: i16,
    pub(super) imm: i32,
}

/// The registers: r0 return value, r1-r5 arguments, r6-r8 callee-saved, r10
/// the frame pointer.
pub(super) const R0: u8 = 0;
pub(super) const R1: u8 = 1;
pub(super) const R2: u8 = 2;
pub(super) const R3: u8 = 3;
pub(super) const R4: u8 = 4;
pub(super) const R5: u8 = 5;
pub(super) const R6: u8 = 6;
pub(super) const R7: u8 = 7;
pub(super) const R8: u8 = 8;
pub(super) const R10: u8 = 10;

pub(super) fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn { code, regs: dst | (src << 4), off, imm }
}
/// dst = imm (64-bit).
pub(super) fn mov_imm(dst: u8, imm: i32) -> Insn {
    insn(0xb7, dst, 0, 0, imm)
}
/// dst = imm (32-bit, the upper half zero).
pub(super) fn mov32_imm(dst: u8, imm: i32) -> Insn {
    insn(0xb4, dst, 0, 0, imm)
}
/// dst |= imm (64-bit).
pub(super) fn or_imm(dst: u8, imm: i32) -> Insn {
    insn(0x47, dst, 0, 0, imm)
}
/// dst &= imm (64-bit).
pub(super) fn and_imm(dst: u8, imm: i32) -> Insn {
    insn(0x57, dst, 0, 0, imm)
}
/// dst *= imm (64-bit).
pub(super) fn mul_imm(dst: u8, imm: i32) -> Insn {
    insn(0x27, dst, 0, 0, imm)
}
/// dst <<= imm (64-bit).
pub(super) fn shift_left(dst: u8, imm: i32) -> Insn {
    insn(0x67, dst, 0, 0, imm)
}
/// dst |= src (64-bit).
pub(super) fn or(dst: u8, src: u8) -> Insn {
    insn(0x4f, dst, src, 0, 0)
}
/// dst = src (64-bit).
pub(super) fn mov(dst: u8, src: u8) -> Insn {
    insn(0xbf, dst, src, 0, 0)
}
/// dst += imm (64-bit).
pub(super) fn add_imm(dst: u8, imm: i32) -> Insn {
    insn(0x07, dst, 0, 0, imm)
}
/// *(u32 *)(dst + off) = src.
pub(super) fn store32(dst: u8, off: i16, src: u8) -> Insn {
    insn(0x63, dst, src, off, 0)
}
/// *(u32 *)(dst + off) = imm.
pub(super) fn store32_imm(dst: u8, off: i16, imm: i32) -> Insn {
    insn(0x62, dst, 0, off, imm)
}
/// *(u64 *)(dst + off) = src.
pub(super) fn store64(dst: u8, off: i16, src: u8) -> Insn {
    insn(0x7b, dst, src, off, 0)
}
/// dst = *(u64 *)(src + off).
pub(super) fn load64(dst: u8, src: u8, off: i16) -> Insn {
    insn(0x79, dst, src, off, 0)
}
/// dst = *(u32 *)(src + off).
pub(super) fn load32(dst: u8, src: u8, off: i16) -> Insn {
    insn(0x61, dst, src, off, 0)
}
/// if dst == imm, skip `off` instructions.
pub(super) fn jump_if_eq(dst: u8, imm: i32, off: i16) -> Insn {
    insn(0x15, dst, 0, off, imm)
}
/// if dst > imm (unsigned), skip `off` instructions.
pub(super) fn jump_if_above(dst: u8, imm: i32, off: i16) -> Insn {
    insn(0x25, dst, 0, off, imm)
}
pub(super) fn call(helper: i32) -> Insn {
    insn(0x85, 0, 0, 0, helper)
}
pub(super) fn exit() -> Insn {
    insn(0x95, 0, 0, 0, 0)
}
/// dst = the map of descriptor `fd` (a two-slot instruction).
pub(super) fn load_map(dst: u8, fd: i32) -> [Insn; 2] {
    // src 1: BPF_PSEUDO_MAP_FD, the kernel turns the fd into the map.
    [insn(0x18, dst, 1, 0, fd), insn(0, 0, 0, 0, 0)]
}
