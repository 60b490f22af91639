//! The way out when the run cannot end normally: a second ending signal,
//! or worker threads stuck in a lock (threads can be neither killed nor
//! joined). Removes every resource this process entered in its ledger,
//! says so, and exits; forked workers die with the coordinator
//! (PR_SET_PDEATHSIG).

use crate::session::cleanup;
use std::sync::atomic::{AtomicBool, Ordering};

static EXITING: AtomicBool = AtomicBool::new(false);

/// Whether the emergency exit has begun. Worker threads may still be
/// running then, and panic when their semaphore set is removed under
/// them; that is expected, and the panic hook stays quiet about it.
pub fn exiting() -> bool {
    EXITING.load(Ordering::Relaxed)
}

/// Prints `message`, removes this process's recorded resources and exits
/// with `code`. Never returns.
pub fn exit(code: u8, message: &str) -> ! {
    EXITING.store(true, Ordering::Relaxed);
    eprintln!("error: {}", crate::session::visible::text(message));
    for line in cleanup::remove_own() {
        eprintln!("cleanup: {line}");
    }
    std::process::exit(i32::from(code))
}
