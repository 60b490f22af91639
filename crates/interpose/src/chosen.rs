//! Per-mutex lock choice (`CONTEND_RUN_MUTEXES`, `contend run --lock
//! LOCK@MUTEX`): only the mutexes named by address get a swapped lock,
//! each its own; every other mutex, and its condition variables, stay
//! glibc's.
//!
//! The choice is a pure function of the mutex's address, so every thread
//! agrees on it from the first call on, including for a statically
//! initialized mutex that no `pthread_mutex_init` announces (contend runs
//! the program with address randomization off, so an address from a
//! profile names the same mutex in the next execution).
//!
//! A condition variable waited on with a chosen mutex cannot be glibc's
//! (glibc re-takes the mutex through its internals, which know nothing of
//! the swapped lock), so it becomes this library's (`cond.rs`) at its
//! first such wait, and is listed here so that its signals and broadcasts
//! find it. It converts in place: glibc's fields of an idle condition
//! variable hold nothing but its clock and sharing, which are carried
//! over. One condition variable waited on with a chosen and an unchosen
//! mutex is not supported (POSIX allows one mutex per concurrent wait).

use libc::{pthread_cond_t, pthread_mutex_t};
use locks::in_mutex::Swap;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, AtomicUsize, Ordering};

/// Mutexes that can be chosen in one execution.
pub const MAX_MUTEXES: usize = 16;
/// Condition variables listed per page: a page is 4 KiB.
const PER_PAGE: usize = 510;

static ADDRESSES: [AtomicUsize; MAX_MUTEXES] = [const { AtomicUsize::new(0) }; MAX_MUTEXES];
static LOCKS: [AtomicU8; MAX_MUTEXES] = [const { AtomicU8::new(0) }; MAX_MUTEXES];
static COUNT: AtomicUsize = AtomicUsize::new(0);

/// The converted condition variables: a chain of pages, the first
/// static, the rest from mmap as the program needs them (no limit: one
/// chosen mutex may guard a condition variable per connection). All-zero
/// bytes are an empty page.
#[repr(C)]
struct CondPage {
    next: AtomicPtr<CondPage>,
    used: AtomicUsize,
    addresses: [AtomicUsize; PER_PAGE],
}

static CONDS: CondPage = CondPage {
    next: AtomicPtr::new(std::ptr::null_mut()),
    used: AtomicUsize::new(0),
    addresses: [const { AtomicUsize::new(0) }; PER_PAGE],
};

/// The pages of [`CONDS`], in order.
fn pages() -> impl Iterator<Item = &'static CondPage> {
    let mut page: *const CondPage = &CONDS;
    std::iter::from_fn(move || {
        // SAFETY: the static page, or one `list` mapped and published with
        // Release (read here with Acquire); pages are never unmapped.
        let p = unsafe { page.as_ref()? };
        page = p.next.load(Ordering::Acquire);
        Some(p)
    })
}

/// Parses `LOCK@0xADDR[;LOCK@0xADDR...]` into the table (once, from
/// `mode::decide`); the error says what is wrong.
pub fn parse(spec: &str) -> Result<(), String> {
    let mut n = 0;
    for item in locks::in_mutex::input::chosen_items(spec) {
        let (swap, address) = item?;
        if n == MAX_MUTEXES {
            return Err(format!("more than {MAX_MUTEXES} mutexes chosen"));
        }
        ADDRESSES[n].store(address, Ordering::Relaxed);
        LOCKS[n].store(swap as u8, Ordering::Relaxed);
        n += 1;
    }
    if n == 0 {
        return Err("no mutex chosen".into());
    }
    COUNT.store(n, Ordering::Release);
    Ok(())
}

/// The lock chosen for `m`, if any.
#[inline(always)]
pub fn lock_of(m: *mut pthread_mutex_t) -> Option<Swap> {
    let n = COUNT.load(Ordering::Relaxed);
    let m = m as usize;
    (0..n.min(MAX_MUTEXES))
        .find(|&i| ADDRESSES[i].load(Ordering::Relaxed) == m)
        .and_then(|i| Swap::from_repr(LOCKS[i].load(Ordering::Relaxed)))
}

/// Whether `c` is this library's condition variable.
#[inline]
pub fn is_ours(c: *mut pthread_cond_t) -> bool {
    pages().any(|p| {
        let n = p.used.load(Ordering::Acquire).min(PER_PAGE);
        p.addresses[..n].iter().any(|k| k.load(Ordering::Relaxed) == c as usize)
    })
}

/// Lists `c` as this library's condition variable (the caller, cond.rs,
/// has converted it, holding [`CONVERTING`]). A full last page gets a new
/// one; if the kernel refuses it, the thread says so once and waits for
/// memory (a condition variable left unlisted would lose its wake-ups).
pub fn list(c: *mut pthread_cond_t) {
    let mut last = pages().last().expect("the static page");
    let mut said = false;
    while last.used.load(Ordering::Relaxed) == PER_PAGE {
        match locks::sys::pages::zeroed(std::mem::size_of::<CondPage>()) {
            Ok(p) => {
                last.next.store(p.as_ptr().cast(), Ordering::Release);
                last = pages().last().expect("just linked");
            }
            Err(_) => {
                if !std::mem::replace(&mut said, true) {
                    crate::say::say(
                        locks::in_mutex::said::Gravity::Fault,
                        "a thread waits for memory to list a condition variable: the kernel refused a page",
                    );
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
    }
    let used = last.used.load(Ordering::Relaxed);
    last.addresses[used].store(c as usize, Ordering::Relaxed);
    last.used.store(used + 1, Ordering::Release);
}

/// Held while a condition variable converts (one at a time).
pub static CONVERTING: AtomicBool = AtomicBool::new(false);

#[cfg(test)]
mod tests {
    #[test]
    fn a_spec_is_read_and_a_bad_one_refused() {
        assert!(super::parse("tas@0x1000;mcs@0x2000").is_ok());
        assert_eq!(super::lock_of(0x2000 as *mut _).map(|s| s.name()), Some("mcs"));
        assert_eq!(super::lock_of(0x1000 as *mut _).map(|s| s.name()), Some("tas"));
        assert!(super::lock_of(0x3000 as *mut _).is_none());
        assert!(super::parse("pthread@0x1000").is_err());
        assert!(super::parse("tas@4096").is_err());
        assert!(super::parse("tas").is_err());
    }

    #[test]
    fn condition_variables_are_listed_past_a_page_without_limit() {
        let base = 0x7000_0000usize;
        let n = 3 * super::PER_PAGE + 7;
        for i in 0..n {
            super::list((base + 64 * i) as *mut _);
        }
        assert!((0..n).all(|i| super::is_ours((base + 64 * i) as *mut _)));
        assert!(!super::is_ours((base + 64 * n) as *mut _));
        assert!(super::pages().count() >= 4);
    }
}
