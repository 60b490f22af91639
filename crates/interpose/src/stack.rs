//! The short stack of a contended acquisition, for `--profile`: the call
//! site and up to [`DEPTH`]` - 1` of its callers, innermost first, walked
//! with libgcc's unwinder (`_Unwind_Backtrace`, DWARF call frame
//! information, so it works in programs built without frame pointers, as
//! Debian's are). Only the contended path walks (a thread that is about
//! to wait anyway); the uncontended path is unchanged.
//!
//! Eight frames: the site, the wrapper a program locks through (pigz's
//! `possess`, rocksdb's `port::Mutex::Lock` and `MutexLock`), and enough
//! callers above them to tell the paths apart; each frame costs an FDE
//! lookup, so deeper stacks would lengthen the waits they annotate.

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Frames kept per stack.
pub const DEPTH: usize = 8;
/// Frames walked at most looking for the call site (the interposer's own
/// frames come first).
const SEARCH: usize = 24;

#[repr(C)]
struct UnwindContext {
    _opaque: [u8; 0],
}

/// `_Unwind_Reason_Code`: go on, and stop.
const URC_NO_REASON: i32 = 0;
const URC_END_OF_STACK: i32 = 5;

type Trace = extern "C" fn(*mut UnwindContext, *mut c_void) -> i32;

// libgcc_s is linked already (Rust's standard library unwinds with it).
extern "C" {
    fn _Unwind_Backtrace(trace: Trace, arg: *mut c_void) -> i32;
    fn _Unwind_GetIP(ctx: *mut UnwindContext) -> usize;
}

/// A walk in progress.
struct Walk {
    site: usize,
    found: bool,
    seen: usize,
    frames: [usize; DEPTH],
    n: usize,
}

extern "C" fn step(ctx: *mut UnwindContext, arg: *mut c_void) -> i32 {
    // SAFETY: `arg` is the `Walk` that `capture` passed, alive for the
    // whole walk, and only this callback touches it meanwhile.
    let walk = unsafe { &mut *(arg as *mut Walk) };
    // SAFETY: `ctx` is the live context the unwinder passes its callback.
    let ip = unsafe { _Unwind_GetIP(ctx) };
    walk.seen += 1;
    if !walk.found {
        // The interposer's frames come before the program's call site,
        // whose return address the entry point recorded.
        walk.found = ip == walk.site;
        if !walk.found {
            return if walk.seen >= SEARCH { URC_END_OF_STACK } else { URC_NO_REASON };
        }
    }
    walk.frames[walk.n] = ip;
    walk.n += 1;
    if walk.n == DEPTH || ip == 0 {
        URC_END_OF_STACK
    } else {
        URC_NO_REASON
    }
}

/// The stack above the call at `site` (a return address into the
/// program), innermost first, zero-padded; just `[site]` if the walk does
/// not reach it, or if this thread is already walking (the unwinder may
/// lock a mutex of its own, which would come back here).
pub fn capture(site: usize) -> [usize; DEPTH] {
    let mut walk = Walk { site, found: false, seen: 0, frames: [0; DEPTH], n: 0 };
    if let Some(_walking) = crate::tally::walking() {
        // SAFETY: `step` matches the callback type the unwinder calls, and
        // `walk` outlives the call.
        unsafe { _Unwind_Backtrace(step, &mut walk as *mut Walk as *mut c_void) };
    }
    if walk.n == 0 {
        walk.frames[0] = site;
    }
    walk.frames
}

/// A stack kept in the profile's static tables: [`DEPTH`] return
/// addresses, innermost first, zero-padded; all zero while the slot is
/// free. Written by one thread at a time (the mutex's holder, or the
/// thread that claimed the record).
pub struct Frames([AtomicUsize; DEPTH]);

impl Frames {
    // Only the initializer of the static tables' elements.
    #[allow(clippy::declare_interior_mutable_const)]
    pub const EMPTY: Frames = Frames([const { AtomicUsize::new(0) }; DEPTH]);

    /// Its innermost frame (0: free).
    pub fn first(&self) -> usize {
        self.0[0].load(Relaxed)
    }

    /// Whether it holds `frames`.
    pub fn is(&self, frames: &[usize; DEPTH]) -> bool {
        self.0.iter().zip(frames).all(|(a, &b)| a.load(Relaxed) == b)
    }

    /// Keeps `frames`.
    pub fn store(&self, frames: &[usize; DEPTH]) {
        for (a, &b) in self.0.iter().zip(frames) {
            a.store(b, Relaxed);
        }
    }

    /// The frames kept, without the padding.
    pub fn load(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().map(|f| f.load(Relaxed)).take_while(|&f| f != 0)
    }
}
