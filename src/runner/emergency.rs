//! The way out when the run cannot end normally: a second SIGINT/SIGTERM,
//! or worker threads stuck in a lock (threads can be neither killed nor
//! joined). Removes every resource this process entered in its ledger,
//! says so, and exits; forked workers die with the coordinator
//! (PR_SET_PDEATHSIG).

use super::cleanup;

/// Prints `message`, removes this process's recorded resources and exits
/// with `code`. Never returns.
pub fn exit(code: u8, message: &str) -> ! {
    eprintln!("error: {message}");
    for line in cleanup::remove_own() {
        eprintln!("cleanup: {line}");
    }
    std::process::exit(i32::from(code))
}
