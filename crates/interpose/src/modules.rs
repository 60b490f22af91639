//! The modules loaded in this process (the program, its libraries, the
//! vDSO), listed once when the report is written, so that each address
//! the report holds is placed in its module (path and load base) by a
//! scan of this short list instead of a `dladdr` call: glibc's dladdr
//! also looks for the nearest dynamic symbol by scanning the module's
//! whole symbol table, which for a large C++ library, thousands of times
//! over, cost db_bench 15% of its CPU at exit. contend names the
//! addresses after the run from the files themselves (symbols.rs).
//!
//! A library the program unloads (`dlclose`, as 7z does with its codecs
//! before it exits) is gone from the loader's list by then: [`closing`]
//! copies its name and segments first, into a second fixed list that
//! [`Modules::find`] reads after the live one.
//!
//! No allocation: the list is a fixed static array (not on the stack: a
//! report may be written from a thread with a small stack, by `_exit`),
//! filled once, by the one thread that writes the report; the names are
//! the loader's strings (alive while the modules stay loaded,
//! as they do while the process exits), and the program's own path,
//! which the loader lists as "", is read from /proc/self/exe into a fixed
//! buffer.

use libc::{c_int, c_void, dl_phdr_info, size_t};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Modules kept: beyond that, an address is left unplaced (named "-").
const MAX: usize = 512;
/// Load segments kept per module.
const SEGMENTS: usize = 8;

#[derive(Clone, Copy)]
struct Module {
    base: usize,
    /// Its PT_LOAD segments, [start, end) in memory.
    segments: [(usize, usize); SEGMENTS],
    /// NUL-terminated, from the loader; null for the program itself.
    name: *const libc::c_char,
}

/// The process's modules.
pub struct Modules {
    list: [Module; MAX],
    n: usize,
    exe: [u8; 4096],
    exe_len: usize,
}

/// The one list, filled by [`Modules::list`].
struct Static(std::cell::UnsafeCell<Modules>);

// SAFETY: written only by `Modules::list`, whose caller (the report,
// guarded by its once-only flag) is a single thread; read by it after.
unsafe impl Sync for Static {}

const EMPTY: Module = Module { base: 0, segments: [(0, 0); SEGMENTS], name: std::ptr::null() };
static LIST: Static =
    Static(std::cell::UnsafeCell::new(Modules { list: [EMPTY; MAX], n: 0, exe: [0; 4096], exe_len: 0 }));

impl Modules {
    /// Lists the loaded modules now, into the one static list.
    ///
    /// # Safety
    /// Called once per process, by one thread (the report's).
    pub unsafe fn list() -> &'static Modules {
        // SAFETY: the caller's contract: no other reference to the list
        // exists while it is filled.
        let m = unsafe { &mut *LIST.0.get() };
        m.n = 0;
        // SAFETY: the buffer is writable for its length; readlink does not
        // NUL-terminate, and its result is the length written.
        let len = unsafe {
            libc::readlink(c"/proc/self/exe".as_ptr(), m.exe.as_mut_ptr() as *mut libc::c_char, m.exe.len())
        };
        m.exe_len = if len > 0 { len as usize } else { 0 };
        // SAFETY: the callback gets `m` back as `data`, alive for the call.
        unsafe { libc::dl_iterate_phdr(Some(each), m as *mut Modules as *mut c_void) };
        m
    }

    /// The module (path, load base) holding the call before return
    /// address `at`: a loaded one, else one the program unloaded.
    pub fn find(&self, at: usize) -> Option<(&[u8], u64)> {
        let call = at.checked_sub(1)?;
        let holds = |m: &&Module| m.segments.iter().any(|&(s, e)| s <= call && call < e);
        let Some(m) = self.list[..self.n].iter().find(holds) else {
            return closed_find(call);
        };
        let name = if m.name.is_null() {
            &self.exe[..self.exe_len]
        } else {
            // SAFETY: the loader's NUL-terminated name, alive while the
            // module is loaded.
            unsafe { std::ffi::CStr::from_ptr(m.name) }.to_bytes()
        };
        Some((name, m.base as u64))
    }
}

/// Modules unloaded before the report kept: beyond that, their
/// addresses are left unplaced.
const CLOSED: usize = 64;
/// Longest path kept of an unloaded module.
const PATH: usize = 512;

/// An unloaded module: its segments and a copy of its path.
struct Closed {
    base: usize,
    segments: [(usize, usize); SEGMENTS],
    path: [u8; PATH],
    path_len: usize,
}

/// The unloaded modules: entries below `n` are complete (written before
/// `n` is raised, under `writing`); readers take `n` and read below it.
struct ClosedList {
    entries: std::cell::UnsafeCell<[Closed; CLOSED]>,
    n: AtomicUsize,
    writing: AtomicBool,
}

// SAFETY: an entry is written only by the holder of `writing`, at index
// `n`, before `n` is raised (Release); readers read only below the `n`
// they loaded (Acquire), entries that are never written again.
unsafe impl Sync for ClosedList {}

const NO_CLOSED: Closed = Closed { base: 0, segments: [(0, 0); SEGMENTS], path: [0; PATH], path_len: 0 };
static CLOSED_LIST: ClosedList = ClosedList {
    entries: std::cell::UnsafeCell::new([NO_CLOSED; CLOSED]),
    n: AtomicUsize::new(0),
    writing: AtomicBool::new(false),
};

/// glibc's `struct link_map`, the fields this file reads (the head of
/// the struct, stable ABI: <link.h>).
#[repr(C)]
struct LinkMap {
    l_addr: usize,
    l_name: *const libc::c_char,
}

/// Notes the module `handle` (from dlopen) before the program unloads
/// it, so that the report can still place the addresses it held.
///
/// # Safety
/// `handle` is what the program passes to dlclose: a dlopen handle.
pub unsafe fn closing(handle: *mut c_void) {
    let mut map: *const LinkMap = std::ptr::null();
    // SAFETY: RTLD_DI_LINKMAP writes a `struct link_map *` to `map`; an
    // invalid handle makes dlinfo fail, and dlclose will say so.
    if unsafe { libc::dlinfo(handle, libc::RTLD_DI_LINKMAP, (&raw mut map).cast()) } != 0 || map.is_null() {
        return;
    }
    // SAFETY: the loader's link map of a loaded module.
    let (base, name) = unsafe { ((*map).l_addr, (*map).l_name) };
    if name.is_null() || base == 0 {
        return;
    }
    let list = &CLOSED_LIST;
    while list.writing.swap(true, Ordering::Acquire) {
        std::hint::spin_loop();
    }
    let n = list.n.load(Ordering::Relaxed);
    // SAFETY: below `n`.
    let known = (0..n).any(|i| unsafe { closed_entry(i) }.base == base);
    if n < CLOSED && !known {
        // SAFETY: index `n` is written only by the holder of `writing`,
        // and no reader reads it before `n` is raised; the reference is
        // to that one entry, not to the list readers look at.
        let e = unsafe { &mut *(list.entries.get() as *mut Closed).add(n) };
        // SAFETY: a loaded module's NUL-terminated name.
        let path = unsafe { std::ffi::CStr::from_ptr(name) }.to_bytes();
        e.path_len = path.len().min(PATH);
        e.path[..e.path_len].copy_from_slice(&path[..e.path_len]);
        e.base = base;
        e.segments = [(0, 0); SEGMENTS];
        let mut found = (base, &raw mut e.segments);
        // SAFETY: the callback gets `found` back as `data`, alive for the call.
        unsafe { libc::dl_iterate_phdr(Some(segments_of), (&raw mut found).cast()) };
        list.n.store(n + 1, Ordering::Release);
    }
    list.writing.store(false, Ordering::Release);
}

/// dl_iterate_phdr's callback for [`closing`]: the PT_LOAD segments of
/// the module loaded at the base `data` names.
unsafe extern "C" fn segments_of(info: *mut dl_phdr_info, _size: size_t, data: *mut c_void) -> c_int {
    // SAFETY: `data` is `closing`'s (base, segments) pair; `info` is the
    // loader's, valid during the callback.
    let ((base, out), info) =
        unsafe { (&mut *(data as *mut (usize, *mut [(usize, usize); SEGMENTS])), &*info) };
    if info.dlpi_addr as usize != *base {
        return 0;
    }
    // SAFETY: `out` points at the entry `closing` is filling.
    let out = unsafe { &mut **out };
    out.iter_mut().zip(load_segments(info)).for_each(|(o, s)| *o = s);
    1
}

/// The PT_LOAD segments of one module, [start, end) in memory.
fn load_segments(info: &dl_phdr_info) -> impl Iterator<Item = (usize, usize)> + '_ {
    (0..info.dlpi_phnum as usize).filter_map(move |i| {
        // SAFETY: dlpi_phdr points at dlpi_phnum program headers.
        let ph = unsafe { &*info.dlpi_phdr.add(i) };
        let start = info.dlpi_addr as usize + ph.p_vaddr as usize;
        (ph.p_type == libc::PT_LOAD).then_some((start, start + ph.p_memsz as usize))
    })
}

/// Entry `i` of the unloaded modules.
///
/// # Safety
/// `i` is below the `n` the caller loaded: a complete entry, never
/// written again.
unsafe fn closed_entry(i: usize) -> &'static Closed {
    debug_assert!(i < CLOSED);
    // SAFETY: the caller's contract; the reference is to that one entry,
    // not to the array the writer fills.
    unsafe { &*(CLOSED_LIST.entries.get() as *const Closed).add(i) }
}

/// [`Modules::find`] among the unloaded modules.
fn closed_find(call: usize) -> Option<(&'static [u8], u64)> {
    let n = CLOSED_LIST.n.load(Ordering::Acquire);
    // SAFETY: below `n`, loaded with Acquire after the entries' writes.
    let mut entries = (0..n).map(|i| unsafe { closed_entry(i) });
    let e = entries.find(|e| e.segments.iter().any(|&(s, end)| s <= call && call < end))?;
    Some((&e.path[..e.path_len], e.base as u64))
}

unsafe extern "C" fn each(info: *mut dl_phdr_info, _size: size_t, data: *mut c_void) -> c_int {
    // SAFETY: `data` is the `Modules` that `list` passed; `info` is the
    // loader's description of one module, valid during the callback.
    let (m, info) = unsafe { (&mut *(data as *mut Modules), &*info) };
    if m.n == MAX {
        return 1; // stop: the list is full
    }
    let mut module =
        Module { base: info.dlpi_addr as usize, segments: [(0, 0); SEGMENTS], name: info.dlpi_name };
    // SAFETY: a non-null name is the loader's NUL-terminated string.
    if module.name.is_null() || unsafe { *module.name } == 0 {
        module.name = std::ptr::null(); // the program itself
    }
    module.segments.iter_mut().zip(load_segments(info)).for_each(|(o, s)| *o = s);
    m.list[m.n] = module;
    m.n += 1;
    0
}
