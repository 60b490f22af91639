//! The modules loaded in this process (the program, its libraries, the
//! vDSO), listed once when the report is written, so that each address
//! the report holds is placed in its module (path and load base) by a
//! scan of this short list instead of a `dladdr` call: glibc's dladdr
//! also looks for the nearest dynamic symbol by scanning the module's
//! whole symbol table, which for a large C++ library, thousands of times
//! over, cost db_bench 15% of its CPU at exit. contend names the
//! addresses after the run from the files themselves (symbols.rs).
//!
//! No allocation: the list is a fixed static array (not on the stack: a
//! report may be written from a thread with a small stack, by `_exit`),
//! filled once, by the one thread that writes the report; the names are
//! the loader's strings (alive while the modules stay loaded,
//! as they do while the process exits), and the program's own path,
//! which the loader lists as "", is read from /proc/self/exe into a fixed
//! buffer.

use libc::{c_int, c_void, dl_phdr_info, size_t};

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
    /// address `at`.
    pub fn find(&self, at: usize) -> Option<(&[u8], u64)> {
        let call = at.checked_sub(1)?;
        let m =
            self.list[..self.n].iter().find(|m| m.segments.iter().any(|&(s, e)| s <= call && call < e))?;
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
    let mut k = 0;
    for i in 0..info.dlpi_phnum as usize {
        // SAFETY: dlpi_phdr points at dlpi_phnum program headers.
        let ph = unsafe { &*info.dlpi_phdr.add(i) };
        if ph.p_type == libc::PT_LOAD && k < SEGMENTS {
            let start = info.dlpi_addr as usize + ph.p_vaddr as usize;
            module.segments[k] = (start, start + ph.p_memsz as usize);
            k += 1;
        }
    }
    m.list[m.n] = module;
    m.n += 1;
    0
}
