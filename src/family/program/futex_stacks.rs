//! The futex view's user stacks as the report shows them: each frame
//! named by the symbolizer (`symbols`: DWARF's `function (file:line)`,
//! else a symbol, else `module+0xoffset`), and the *site*: the first
//! frame, from the innermost out, that is the program's own code rather
//! than the lock's. A waiter's innermost frames are the C library's
//! syscall wrapper and the lock's slow path (glibc's, Rust's std,
//! parking_lot, GLib's); the site is where the program took the lock,
//! which names a lock in the heap that no symbol can.

use crate::family::program::symbols::{short_name, Symbolizer};
use crate::measure::futex_view::unwind::Stacks;
use crate::model::futex_word::{FutexStack, STACKS};
use std::collections::HashMap;

/// Modules whose code is a lock's or a syscall's, never the program's
/// own site: the C library and its loader, C++'s runtime, GLib, and
/// contend's own interposer (under `contend run` every pthread mutex call
/// passes through it).
const LIBRARY_MODULES: [&str; 7] =
    ["libc.so", "libpthread", "ld-linux", "libstdc++", "libglib-2.0", "libc.musl", "libcontend_interpose"];

/// Functions that are a lock's own code wherever they are linked (Rust
/// links std and its crates into the program): their names' beginnings,
/// as demangled. A crate is named with its path separator, so that a
/// program's own crate called `parking_lot_demo` is not taken for one.
/// MariaDB's InnoDB is here because it is the largest futex user that is
/// not a library: its latches (srw_lock.h, sux_lock.h: the mutex, the
/// shared/update/exclusive lock, the page latch) and the log's group
/// commit lock (log0sync.h, on a futex semaphore per waiter) call the
/// futex themselves, so the site of a wait on one of them is the InnoDB
/// function that took the latch (`buf_page_get_low`, `log_write_up_to`).
const LOCK_CODE: [&str; 31] = [
    "std::",
    "<std::",
    "core::",
    "<core::",
    "alloc::",
    "<alloc::",
    "parking_lot::",
    "<parking_lot::",
    "parking_lot_core::",
    "<parking_lot_core::",
    "lock_api::",
    "<lock_api::",
    "syscall",
    "__lll_",
    "__pthread",
    "pthread_",
    "__GI_",
    "___pthread",
    "futex_",
    "__futex",
    "__libc_",
    "sem_",
    "g_mutex_",
    "srw_mutex_impl<",
    "ssux_lock_impl<",
    "srw_lock_",
    "ssux_lock::",
    "sux_lock<",
    "pthread_mutex_wrapper<",
    "binary_semaphore::",
    "group_commit_lock::",
];

/// Names the stacks a word's calls were sampled with.
pub struct StackNames<'a> {
    stacks: &'a Stacks,
    symbols: &'a mut Symbolizer,
    /// Each stack's frames named, and its site (index), once.
    named: HashMap<u32, (Vec<String>, Option<usize>)>,
}

impl<'a> StackNames<'a> {
    /// Names from `stacks`, with `symbols` (the sweep's: each module is
    /// read once for the profile's call sites and these frames alike).
    pub fn new(stacks: &'a Stacks, symbols: &'a mut Symbolizer) -> Self {
        Self { stacks, symbols, named: HashMap::new() }
    }

    /// Stack `n`'s frames and site, named once.
    fn name(&mut self, n: u32) -> &(Vec<String>, Option<usize>) {
        let Self { stacks, symbols, named } = self;
        named.entry(n).or_insert_with(|| {
            let frames = stacks.frames.get(n as usize).map_or(&[][..], |f| f.as_slice());
            let mut site = None;
            let mut names = Vec::with_capacity(frames.len());
            for (i, f) in frames.iter().enumerate() {
                let module = stacks.modules.get(f.module as usize).map_or("-", |m| m.as_str());
                // The innermost frame is where the thread was (the
                // syscall): the symbolizer's one byte back from a return
                // address stays inside that instruction too.
                let named = symbols.name(f.address, module, 0, None);
                if site.is_none() && is_site(module, &named.text, named.toolchain) {
                    site = Some(i);
                }
                names.push(named.text);
            }
            (names, site)
        })
    }

    /// Stack `n`'s site, named (None: no frame of it is the program's).
    pub fn site_of(&mut self, n: u32) -> Option<String> {
        let (names, site) = self.name(n);
        site.map(|i| names[i].clone())
    }

    /// The top [`STACKS`] of `by_stack` (stack → (calls, blocked ns)),
    /// the most blocked (then the most calls) first, named.
    pub fn top(&mut self, by_stack: impl Iterator<Item = (u32, u64, u64)>) -> Vec<FutexStack> {
        let mut ranked: Vec<(u32, u64, u64)> = by_stack.collect();
        ranked.sort_by_key(|&(n, calls, ns)| (std::cmp::Reverse((ns, calls)), n));
        ranked
            .into_iter()
            .take(STACKS)
            .map(|(n, calls, blocked_ns)| {
                let (frames, site) = self.name(n).clone();
                FutexStack { calls, blocked_ns, frames, site }
            })
            .collect()
    }
}

/// Whether a frame named `text` in `module` is the program's own code:
/// not the C library's or a lock's, not a toolchain header's
/// (`toolchain`, from its source file).
fn is_site(module: &str, text: &str, toolchain: bool) -> bool {
    let library = LIBRARY_MODULES.iter().any(|l| short_name(module).starts_with(l));
    let lock_code = LOCK_CODE.iter().any(|p| text.starts_with(p));
    !library && !lock_code && !toolchain
}

#[cfg(test)]
mod tests {
    use super::is_site;

    #[test]
    fn a_site_is_the_programs_own_code_not_a_locks() {
        let prog = "/tmp/parking_lot_demo";
        assert!(!is_site(
            prog,
            "parking_lot_core::thread_parker::imp::ThreadParker::futex_wait (linux.rs:112)",
            false
        ));
        assert!(!is_site(
            prog,
            "<parking_lot::raw_mutex::RawMutex as lock_api::mutex::RawMutex>::lock",
            false
        ));
        assert!(!is_site(prog, "syscall (syscall.S:37)", false));
        let interposer = "/tmp/contend-1/libcontend_interpose-5461a68f27bb5871.so";
        assert!(!is_site(interposer, "contend_interpose::profile::lock", false));
        assert!(!is_site("/usr/lib/x86_64-linux-gnu/libglib-2.0.so.0", "worker (gmutex.c:18)", false));
        assert!(!is_site(prog, "std::sys::sync::mutex::futex::Mutex::lock_contended (futex.rs:34)", false));
        assert!(!is_site(prog, "worker (mutex.h:120)", true));
        // A program's crate whose name begins like a lock crate's.
        assert!(is_site(prog, "parking_lot_demo::main::{{closure}} (main.rs:24)", false));
        assert!(is_site(prog, "worker (raw_futex.c:64)", false));
        // InnoDB's latches: the site is the function that took one.
        let mariadbd = "/usr/sbin/mariadbd";
        assert!(!is_site(mariadbd, "ssux_lock_impl<true>::rd_wait() (srw_lock.cc:401)", false));
        assert!(!is_site(mariadbd, "sux_lock<ssux_lock_impl<true> >::x_lock(bool) (sux_lock.h:400)", false));
        assert!(!is_site(mariadbd, "group_commit_lock::acquire (log0sync.cc:247)", false));
        assert!(is_site(mariadbd, "buf_page_get_low (buf0buf.cc:2702)", false));
    }
}
