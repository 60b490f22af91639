//! The session: everything a run must undo or respect, in one place.
//! Signals (SIGINT/SIGTERM end a run and report what it measured), the
//! resources a run creates (SysV sets, lock files, scratch directories)
//! and the ledger that lets `contend cleanup` remove them after a SIGKILL,
//! the emergency exit for threads that cannot be joined, the system
//! limits that explain a refused thread or process, and the process tree
//! below a process (what `contend run`'s program started).

pub mod cleanup;
pub mod emergency;
pub mod ledger;
pub mod ledger_dir;
pub mod limits;
pub mod resources;
pub mod signals;
pub mod terminal;
pub mod tree;
pub mod visible;
