//! A futex call's user stack, unwound: from the registers and the copy of
//! the stack's top a sample carries (`locks::sys::perf_ring::UserStack`)
//! to the chain of return addresses, each as a module and the address
//! its file has (so it can be named after the process is gone).
//!
//! The unwinding is framehop's (Markus Stange's, the unwinder of samply
//! and of the Firefox profiler): DWARF call frame information from each
//! module's `.eh_frame`/`.eh_frame_hdr`, with instruction analysis for
//! prologues and epilogues, so a program built without frame pointers
//! (Debian's and Rust's default) still unwinds. This module gives it the
//! process's code: each executable mapping of /proc/PID/maps, the ELF
//! file's unwind sections read once per file (with the `object` crate
//! the symbolizer already uses), and the mapping's load bias; a stack
//! whose address no known module covers has the map read again (a
//! library loaded since, or one read while the loader was still mapping
//! them), if the stack was sampled after the map was read, at most
//! every [`REREAD`] at first.

use super::procfs::{read_maps, Mapping};
use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{ExplicitModuleSectionInfo, Module, Unwinder};
use locks::sys::perf_ring::UserStack;
use std::collections::HashMap;
use std::sync::Arc;

/// How many frames a stack keeps, innermost first.
const DEPTH: usize = 32;

/// How soon, at first, a process's map may be read again for an address
/// no module covers (ns); doubled each time a new map did not place it
/// (generated code, which no map will), up to [`REREAD_MAX`].
const REREAD: u64 = 10_000_000;

/// The longest wait between two readings of a process's map (ns).
const REREAD_MAX: u64 = 1_000_000_000;

/// One frame: a module (an index in [`Stacks::modules`]) and the address
/// as the module's file states it (for a return address, the return
/// address itself; the symbolizer looks one byte before it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Frame {
    /// The module.
    pub module: u32,
    /// The address in the module's file.
    pub address: u64,
}

/// Every distinct stack unwound, numbered, and the modules they name.
#[derive(Debug, Default)]
pub struct Stacks {
    /// Module paths.
    pub modules: Vec<String>,
    /// Stacks by number, innermost frame first.
    pub frames: Vec<Vec<Frame>>,
    index: HashMap<Vec<Frame>, u32>,
}

impl Stacks {
    /// The number of `path`, added if new.
    fn module(&mut self, path: &str) -> u32 {
        match self.modules.iter().position(|m| m == path) {
            Some(i) => i as u32,
            None => {
                self.modules.push(path.to_string());
                (self.modules.len() - 1) as u32
            }
        }
    }

    /// The number of `stack`, added if new.
    fn intern(&mut self, stack: Vec<Frame>) -> u32 {
        if let Some(&n) = self.index.get(&stack) {
            return n;
        }
        self.frames.push(stack.clone());
        let n = (self.frames.len() - 1) as u32;
        self.index.insert(stack, n);
        n
    }
}

/// An ELF file's unwind sections and where its code is in the file.
struct Elf {
    sections: ExplicitModuleSectionInfo<Arc<[u8]>>,
    /// Each executable segment: (file offset, file size, address).
    code: Vec<(u64, u64, u64)>,
}

/// Reads `path`'s unwind sections (None: not an ELF file it can read).
fn read_elf(path: &str) -> Option<Elf> {
    use object::{Object, ObjectSection, ObjectSegment, SegmentFlags};
    let data = std::fs::read(path).ok()?;
    let file = object::File::parse(&*data).ok()?;
    let section = |name: &str| {
        let s = file.section_by_name(name)?;
        let data: Arc<[u8]> = s.uncompressed_data().ok()?.into_owned().into();
        Some((s.address()..s.address() + s.size(), data))
    };
    let range = |name: &str| file.section_by_name(name).map(|s| s.address()..s.address() + s.size());
    let (text_svma, text) = section(".text").unzip();
    let (eh_frame_svma, eh_frame) = section(".eh_frame").unzip();
    let (eh_frame_hdr_svma, eh_frame_hdr) = section(".eh_frame_hdr").unzip();
    let sections = ExplicitModuleSectionInfo {
        base_svma: 0,
        text_svma,
        text,
        got_svma: range(".got"),
        eh_frame_svma,
        eh_frame,
        eh_frame_hdr_svma,
        eh_frame_hdr,
        ..Default::default()
    };
    // PF_X: the segment is executable.
    let executable = |f: SegmentFlags| matches!(f, SegmentFlags::Elf { p_flags } if p_flags & 1 != 0);
    let code = file
        .segments()
        .filter(|s| executable(s.flags()))
        .map(|s| {
            let (offset, size) = s.file_range();
            (offset, size, s.address())
        })
        .collect();
    Some(Elf { sections, code })
}

/// The load bias of `m`, an executable mapping of `elf`: what its
/// addresses add to the file's (None: it maps no executable segment).
/// A segment need not start on a page: the mapping then starts before
/// it in the file, and the page before its end may be mapped again,
/// read-only, with the next segment (hence /proc's permissions, not the
/// offsets alone, say which mapping is the code).
fn bias(m: &Mapping, elf: &Elf) -> Option<u64> {
    let len = m.end - m.start;
    let &(offset, _, address) = elf
        .code
        .iter()
        .find(|&&(offset, size, _)| m.executable && m.offset < offset + size && offset < m.offset + len)?;
    // The loader keeps address and offset equal modulo the page, so the
    // segment's address less its offset is the file's own shift.
    Some(m.start.wrapping_sub(address.wrapping_sub(offset).wrapping_add(m.offset)))
}

/// One process's code as the unwinder knows it.
struct Process {
    unwinder: UnwinderX86_64<Arc<[u8]>>,
    /// Its code mappings: (start, end, module, bias), by start.
    code: Vec<(u64, u64, u32, u64)>,
    /// When its map was read (ns).
    read_at: u64,
    /// How long before it may be read again for an unplaced frame.
    reread: u64,
}

/// The unwinder of every followed process, and the stacks unwound.
#[derive(Default)]
pub struct Unwinding {
    files: HashMap<String, Option<Arc<Elf>>>,
    processes: HashMap<u32, Process>,
    cache: CacheX86_64,
    /// What was unwound.
    pub stacks: Stacks,
}

impl Unwinding {
    /// `pid`'s code, from its map at `now` (`recorded` when it is gone),
    /// to be read again no sooner than `reread` after.
    fn load(&mut self, pid: u32, now: u64, reread: u64, recorded: &[Mapping]) -> Process {
        let mut unwinder = UnwinderX86_64::new();
        let mut code = Vec::new();
        for m in read_maps(pid).unwrap_or_else(|| recorded.to_vec()) {
            if !m.executable || !m.path.starts_with('/') || m.path.ends_with(" (deleted)") {
                continue;
            }
            let elf = self.files.entry(m.path.clone()).or_insert_with(|| read_elf(&m.path).map(Arc::new));
            let Some(elf) = elf.clone() else { continue };
            let Some(bias) = bias(&m, &elf) else { continue };
            let module = self.stacks.module(&m.path);
            unwinder.add_module(Module::new(m.path.clone(), m.start..m.end, bias, elf.sections.clone()));
            code.push((m.start, m.end, module, bias));
        }
        code.sort_unstable();
        Process { unwinder, code, read_at: now, reread }
    }

    /// Forgets `pid`'s code: it has exec'd another program (`contend
    /// run`'s keeper execs the program in its own process).
    pub fn forget(&mut self, pid: u32) {
        self.processes.remove(&pid);
    }

    /// Unwinds `user`, sampled from process `pid` at `time`, read at
    /// `now` (both CLOCK_MONOTONIC ns), and returns its stack's number
    /// (None: not even its first frame is in a module known). A process
    /// seen for the first time (or since it was forgotten) has its map
    /// read; one whose stack leaves the modules known, sampled after its
    /// map was read (a library loaded since), has it read again, first
    /// after [`REREAD`], then after twice as long each time a new map did
    /// not help. A process gone has its mappings from `recorded`, the
    /// kernel's records of them (`contend run`: a short program may exit
    /// before its stacks are read).
    pub fn unwind(
        &mut self,
        pid: u32,
        time: u64,
        now: u64,
        user: &UserStack<'_>,
        recorded: &[Mapping],
    ) -> Option<u32> {
        if !self.processes.contains_key(&pid) {
            let p = self.load(pid, now, REREAD, recorded);
            self.processes.insert(pid, p);
        }
        let (mut stack, placed) = self.walk(pid, user);
        let (read_at, reread) = self.processes.get(&pid).map_or((0, REREAD), |p| (p.read_at, p.reread));
        if !placed && time > read_at && now.saturating_sub(read_at) >= reread {
            let p = self.load(pid, now, reread, recorded);
            self.processes.insert(pid, p);
            let (again, placed_now) = self.walk(pid, user);
            if !placed_now {
                if let Some(p) = self.processes.get_mut(&pid) {
                    p.reread = (reread * 2).min(REREAD_MAX);
                }
            }
            stack = again;
        }
        (!stack.is_empty()).then(|| self.stacks.intern(stack))
    }

    /// `user`'s frames in `pid`'s modules, and whether every frame found
    /// was in one (false: the walk stopped at an address no module
    /// covers).
    fn walk(&mut self, pid: u32, user: &UserStack<'_>) -> (Vec<Frame>, bool) {
        let Some(process) = self.processes.get(&pid) else { return (Vec::new(), false) };
        let mut read_stack = |address: u64| {
            let at = address.checked_sub(user.sp).ok_or(())? as usize;
            let bytes = user.stack.get(at..at + 8).ok_or(())?;
            Ok(u64::from_ne_bytes(bytes.try_into().map_err(|_| ())?))
        };
        let regs = UnwindRegsX86_64::new(user.ip, user.sp, user.bp);
        let mut frames = process.unwinder.iter_frames(user.ip, regs, &mut self.cache, &mut read_stack);
        let mut stack = Vec::new();
        // A frame outside every module (the vDSO, generated code, a
        // module not yet known) ends the stack.
        while let Ok(Some(frame)) = frames.next() {
            let Some((module, bias)) = place(&process.code, frame.address()) else { return (stack, false) };
            stack.push(Frame { module, address: frame.address().wrapping_sub(bias) });
            if stack.len() == DEPTH {
                break;
            }
        }
        (stack, true)
    }
}

/// The module and bias of the code mapping holding `address`.
fn place(code: &[(u64, u64, u32, u64)], address: u64) -> Option<(u32, u64)> {
    let i = code.partition_point(|&(start, ..)| start <= address).checked_sub(1)?;
    let (_, end, module, bias) = code[i];
    (address < end).then_some((module, bias))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mappings_bias_is_its_start_less_the_address_its_file_offset_has() {
        let code = |start, end, offset| Mapping { start, end, offset, path: "/x".into(), executable: true };
        // A PIE's text: file offset 0x1000, address 0x1000, mapped at
        // 0x5555_5555_5000 from offset 0x1000.
        let elf = Elf { sections: Default::default(), code: vec![(0x1000, 0x8000, 0x1000)] };
        assert_eq!(bias(&code(0x5555_5555_5000, 0x5555_5555_d000, 0x1000), &elf), Some(0x5555_5555_4000));
        // rustc's layout: the segment at offset 0x15890, address 0x16890,
        // mapped from the page at 0x15000; the page of its end is mapped
        // again read-only with the next segment.
        let elf = Elf { sections: Default::default(), code: vec![(0x15890, 0x41720, 0x16890)] };
        let text = code(0x55d9_4ef1_8000, 0x55d9_4ef5_a000, 0x15000);
        assert_eq!(bias(&text, &elf), Some(0x55d9_4ef0_2000));
        let after = Mapping { executable: false, ..code(0x55d9_4ef5_a000, 0x55d9_4ef5_e000, 0x56000) };
        assert_eq!(bias(&after, &elf), None, "not executable, though its page holds the segment's end");
        // A non-PIE: address 0x401000 at offset 0x1000, mapped where it says.
        let elf = Elf { sections: Default::default(), code: vec![(0x1000, 0x8000, 0x40_1000)] };
        let m = code(0x40_1000, 0x40_9000, 0x1000);
        assert_eq!(bias(&m, &elf), Some(0));
        let data = Mapping { offset: 0x20_0000, ..m };
        assert_eq!(bias(&data, &elf), None, "a mapping of no executable segment");
    }

    #[test]
    fn an_address_is_placed_in_the_mapping_that_holds_it_or_none() {
        let code = [(0x1000, 0x2000, 0, 0x800), (0x5000, 0x6000, 1, 0x4000)];
        assert_eq!(place(&code, 0x1000), Some((0, 0x800)));
        assert_eq!(place(&code, 0x5fff), Some((1, 0x4000)));
        assert_eq!(place(&code, 0x2000), None, "between mappings");
        assert_eq!(place(&code, 0xfff), None, "below every mapping");
    }
}
