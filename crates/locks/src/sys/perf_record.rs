//! The records a perf ring buffer holds, read from their bytes: a
//! tracepoint's sample (process, thread, time, kernel stack, raw record),
//! a mapping, a thread's name, a context switch. The layouts are
//! perf_event_open(2)'s, for the sample types `perf_ring` asks for.

use perf_event_open_sys::bindings as pb;

/// Whether samples carry their time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stamped {
    /// No time (the smallest sample).
    No,
    /// CLOCK_MONOTONIC, the clock `locks::sys::clock::monotonic_ns` reads.
    Yes,
}

/// One sample: the process and thread that hit the tracepoint, when, and
/// its raw record (the tracepoint's fields as its `format` file lays them
/// out; the first two bytes, `common_type`, are the tracepoint's id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample<'a> {
    /// The process (thread group).
    pub pid: u32,
    /// The thread.
    pub tid: u32,
    /// CLOCK_MONOTONIC, ns, with [`Stamped::Yes`]; else 0.
    pub time: u64,
    /// The tracepoint's record, common fields first.
    pub raw: &'a [u8],
    /// With `Watch::kernel_stacks` (in perf_ring), the kernel's stack when it fired,
    /// innermost first (return addresses, context markers left out).
    pub stack: Vec<u64>,
    /// With `Watch::user_stacks`, the user's registers and the top of its
    /// stack when it fired (None: the thread was not in user space, a
    /// kernel thread).
    pub user: Option<UserStack<'a>>,
}

/// A thread's user registers at a sample, and a copy of the top of its
/// stack (from the stack pointer up): what an unwinder needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserStack<'a> {
    /// The instruction pointer.
    pub ip: u64,
    /// The stack pointer: `stack[0]` is the byte at this address.
    pub sp: u64,
    /// The frame pointer (rbp).
    pub bp: u64,
    /// The bytes copied, as many as the stack had up to the size asked.
    pub stack: &'a [u8],
}

/// The user registers asked for, as perf_event_open(2)'s x86 bit numbers
/// (PERF_REG_X86_BP, _SP, _IP): the record lists them in this order.
pub const USER_REGS: u64 = (1 << 6) | (1 << 7) | (1 << 8);

/// What a buffer holds besides samples: with `tasks`, the kernel's
/// records of the sampled tasks' memory mappings (every mmap, code and
/// data, from exec on) and of their names (exec, PR_SET_NAME), so a
/// sample's address can be placed after its process has exited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record<'a> {
    /// A tracepoint's hit.
    Sample(Sample<'a>),
    /// A mapping was made.
    Map {
        /// The process.
        pid: u32,
        /// Its first address.
        start: u64,
        /// Its length.
        len: u64,
        /// Its offset in the file.
        offset: u64,
        /// The file, `//anon` for anonymous memory, `[heap]`, ...
        path: &'a str,
        /// Mapped executable (PROT_EXEC): code.
        executable: bool,
    },
    /// With `Watch::switches` (in perf_ring), a sampled thread left a CPU or came to
    /// one (PERF_RECORD_SWITCH).
    Switch {
        /// The process.
        pid: u32,
        /// The thread.
        tid: u32,
        /// When, as a sample's time.
        time: u64,
        /// Whether it left the CPU (else it came to it).
        out: bool,
        /// Leaving, whether it was still runnable (preempted), rather than
        /// going to sleep.
        preempted: bool,
    },
    /// A thread was named.
    Comm {
        /// The process.
        pid: u32,
        /// The thread.
        tid: u32,
        /// Its name.
        comm: &'a str,
        /// Named by an exec (else by PR_SET_NAME): the process's image,
        /// code and map are new.
        exec: bool,
    },
}

/// A NUL-terminated name (the rest of the record is padding).
pub(super) fn text(bytes: &[u8]) -> &str {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    std::str::from_utf8(&bytes[..end]).unwrap_or("")
}

/// A PERF_RECORD_MMAP2's fields: pid, tid, addr, len, pgoff, then 24
/// bytes of device and inode (or build id), prot (at 56), flags, the
/// file name (at 64).
pub(super) fn parse_map(record: &[u8]) -> Option<Record<'_>> {
    let u64_at = |o: usize| Some(u64::from_ne_bytes(record.get(o..o + 8)?.try_into().ok()?));
    let pid = u32::from_ne_bytes(record.get(0..4)?.try_into().ok()?);
    let (start, len, offset) = (u64_at(8)?, u64_at(16)?, u64_at(24)?);
    let prot = u32::from_ne_bytes(record.get(56..60)?.try_into().ok()?);
    let executable = prot & libc::PROT_EXEC as u32 != 0;
    Some(Record::Map { pid, start, len, offset, path: text(record.get(64..)?), executable })
}

/// A PERF_RECORD_SWITCH of a per-task event: no body, only the sample id
/// (pid, tid, time); its header's misc bits say out and preempted.
pub(super) fn parse_switch(record: &[u8], misc: u32) -> Option<Record<'_>> {
    let word = |o: usize| Some(u32::from_ne_bytes(record.get(o..o + 4)?.try_into().ok()?));
    Some(Record::Switch {
        pid: word(0)?,
        tid: word(4)?,
        time: u64::from_ne_bytes(record.get(8..16)?.try_into().ok()?),
        out: misc & pb::PERF_RECORD_MISC_SWITCH_OUT != 0,
        preempted: misc & pb::PERF_RECORD_MISC_SWITCH_OUT_PREEMPT != 0,
    })
}

/// Callchain entries at or above this are context markers
/// (PERF_CONTEXT_KERNEL and the like), not addresses.
const CONTEXT_MARKERS: u64 = -4095i64 as u64;

/// A sample record's fields, in the order perf writes them for
/// TID | [TIME] | [CALLCHAIN] | RAW | [REGS_USER | STACK_USER]: pid, tid,
/// time, the stack's length and addresses, the raw record's size and
/// bytes, then with `user` the registers' ABI and values ([`USER_REGS`])
/// and the user stack's size, bytes and dynamic size.
pub(super) fn parse_sample(record: &[u8], stamped: Stamped, stacks: bool, user: bool) -> Option<Sample<'_>> {
    let word = |o: usize| Some(u32::from_ne_bytes(record.get(o..o + 4)?.try_into().ok()?));
    let long = |o: usize| Some(u64::from_ne_bytes(record.get(o..o + 8)?.try_into().ok()?));
    let (pid, tid) = (word(0)?, word(4)?);
    let (time, mut at) = match stamped {
        Stamped::Yes => (long(8)?, 16),
        Stamped::No => (0, 8),
    };
    let mut stack = Vec::new();
    if stacks {
        let n = long(at)? as usize;
        for i in 0..n {
            let ip = long(at + 8 + 8 * i)?;
            if ip < CONTEXT_MARKERS {
                stack.push(ip);
            }
        }
        at += 8 + 8 * n;
    }
    let raw_len = word(at)? as usize;
    let raw = record.get(at + 4..(at + 4 + raw_len).min(record.len()))?;
    let user = if user { parse_user(record, at + 4 + raw_len)? } else { None };
    Some(Sample { pid, tid, time, raw, stack, user })
}

/// The user registers and stack at `at`: None inside when the sample
/// has none (ABI 0: a kernel thread), None outside when the record is cut.
fn parse_user(record: &[u8], mut at: usize) -> Option<Option<UserStack<'_>>> {
    let long = |o: usize| Some(u64::from_ne_bytes(record.get(o..o + 8)?.try_into().ok()?));
    let abi = long(at)?;
    at += 8;
    let regs = if abi == 0 {
        None
    } else {
        let r = (long(at)?, long(at + 8)?, long(at + 16)?);
        at += 24;
        Some(r)
    };
    let size = long(at)? as usize;
    let bytes = record.get(at + 8..at + 8 + size)?;
    let dynamic = if size == 0 { 0 } else { long(at + 8 + size)? as usize };
    Some(regs.map(|(bp, sp, ip)| UserStack { ip, sp, bp, stack: &bytes[..dynamic.min(size)] }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_reads_with_and_without_its_time() {
        let mut rec: Vec<u8> = [7u32, 9].iter().flat_map(|w| w.to_ne_bytes()).collect();
        let plain = [rec.clone(), 3u32.to_ne_bytes().to_vec(), vec![1, 2, 3, 0]].concat();
        assert_eq!(
            parse_sample(&plain, Stamped::No, false, false),
            Some(Sample { pid: 7, tid: 9, time: 0, raw: &[1, 2, 3], stack: vec![], user: None })
        );
        rec.extend(42u64.to_ne_bytes());
        let timed = [rec.clone(), 2u32.to_ne_bytes().to_vec(), vec![5, 6, 0, 0]].concat();
        assert_eq!(
            parse_sample(&timed, Stamped::Yes, false, false),
            Some(Sample { pid: 7, tid: 9, time: 42, raw: &[5, 6], stack: vec![], user: None })
        );
        assert_eq!(
            parse_sample(&timed[..10], Stamped::Yes, false, false),
            None,
            "a short record is no sample"
        );
        // A kernel stack: the PERF_CONTEXT_KERNEL marker, then two addresses.
        let chain: Vec<u8> = [3u64, -128i64 as u64, 0xffff_8000_0000_1000, 0xffff_8000_0000_2000]
            .iter()
            .flat_map(|w| w.to_ne_bytes())
            .collect();
        let stacked = [rec, chain, 1u32.to_ne_bytes().to_vec(), vec![9, 0, 0, 0]].concat();
        assert_eq!(
            parse_sample(&stacked, Stamped::Yes, true, false),
            Some(Sample {
                pid: 7,
                tid: 9,
                time: 42,
                raw: &[9],
                stack: vec![0xffff_8000_0000_1000, 0xffff_8000_0000_2000],
                user: None
            })
        );
    }

    #[test]
    fn a_user_stack_reads_its_registers_and_only_the_bytes_the_stack_had() {
        let longs = |ws: &[u64]| -> Vec<u8> { ws.iter().flat_map(|w| w.to_ne_bytes()).collect() };
        let head: Vec<u8> = [7u32, 9].iter().flat_map(|w| w.to_ne_bytes()).collect();
        // raw: 4 bytes of size, 4 of record (8-aligned together).
        let raw = [4u32.to_ne_bytes().to_vec(), vec![1, 2, 3, 4]].concat();
        // ABI 2 (64-bit), bp, sp, ip; 16 bytes of stack asked, 8 there.
        let user = [longs(&[2, 0xb0, 0x7ff0, 0x40_1000, 16]), longs(&[0xaa, 0]), longs(&[8])].concat();
        let rec = [head.clone(), raw.clone(), user].concat();
        let s = parse_sample(&rec, Stamped::No, false, true).expect("a sample");
        let u = s.user.expect("user registers");
        assert_eq!((u.ip, u.sp, u.bp), (0x40_1000, 0x7ff0, 0xb0));
        assert_eq!(u.stack, &0xaau64.to_ne_bytes()[..], "only the dynamic size counts");
        // A kernel thread: ABI 0, no registers, no stack.
        let none = [head, raw, longs(&[0, 0])].concat();
        assert_eq!(parse_sample(&none, Stamped::No, false, true).expect("a sample").user, None);
        assert_eq!(parse_sample(&rec[..rec.len() - 4], Stamped::No, false, true), None, "a cut record");
    }

    #[test]
    fn a_switch_record_says_out_and_preempted_from_its_misc_bits() {
        let rec: Vec<u8> =
            [7u32.to_ne_bytes().to_vec(), 9u32.to_ne_bytes().to_vec(), 42u64.to_ne_bytes().to_vec()].concat();
        let out = pb::PERF_RECORD_MISC_SWITCH_OUT | pb::PERF_RECORD_MISC_SWITCH_OUT_PREEMPT;
        assert_eq!(
            parse_switch(&rec, out),
            Some(Record::Switch { pid: 7, tid: 9, time: 42, out: true, preempted: true })
        );
        assert_eq!(
            parse_switch(&rec, 0),
            Some(Record::Switch { pid: 7, tid: 9, time: 42, out: false, preempted: false })
        );
        assert_eq!(parse_switch(&rec[..12], 0), None);
    }

    #[test]
    fn a_mapping_record_gives_its_range_and_file() {
        let mut rec = vec![0u8; 64];
        rec[0..4].copy_from_slice(&5u32.to_ne_bytes());
        rec[8..16].copy_from_slice(&0x40_0000u64.to_ne_bytes());
        rec[16..24].copy_from_slice(&0x2000u64.to_ne_bytes());
        rec[24..32].copy_from_slice(&0x1000u64.to_ne_bytes());
        rec[56..60].copy_from_slice(&((libc::PROT_READ | libc::PROT_EXEC) as u32).to_ne_bytes());
        rec.extend(b"/usr/bin/prog\0\0\0");
        assert_eq!(
            parse_map(&rec),
            Some(Record::Map {
                pid: 5,
                start: 0x40_0000,
                len: 0x2000,
                offset: 0x1000,
                path: "/usr/bin/prog",
                executable: true
            })
        );
        assert_eq!(parse_map(&rec[..40]), None);
    }
}
