//! One-way wake-up channels for `contend wakeup`: a thread posts, the
//! other thread (or process) sleeping in `wait` wakes. A ping-pong pair
//! uses two, one per direction, and posts and waits strictly alternate on
//! each, so a channel never holds more than one pending post.
//!
//! One file per primitive. Each says whether it can work between processes
//! ([`Channel::PROCESS_SHARED`]); the binary refuses `--procs` for the
//! others instead of running something that cannot wake across processes.

mod condvar;
mod fd;
mod futex;
mod handoff;
mod sem;

pub use condvar::CondChannel;
pub use fd::{EventFdChannel, PipeChannel};
pub use futex::FutexChannel;
pub use handoff::HandoffChannel;
pub use sem::{PosixSemChannel, SysvSemChannel};

use std::io;

/// What building a channel needs beyond its type.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChannelConfig {
    /// Build the process-shared form (pshared semaphores and pthread
    /// objects; the memory must then be a shared mapping).
    pub shared: bool,
    /// For SysV semaphores: the set's id and this channel's index in it.
    pub sysv: Option<(i32, u16)>,
}

/// A one-way wake-up channel.
pub trait Channel: Send + Sync + Sized + 'static {
    /// Whether the shared form works between processes that fork after it
    /// was built in shared memory (or inherit its descriptors).
    const PROCESS_SHARED: bool;

    /// Builds the channel with no post pending.
    fn new(config: &ChannelConfig) -> io::Result<Self>;

    /// Wakes the waiter (or lets its next `wait` return at once).
    fn post(&self);

    /// Sleeps until a post arrives, then consumes it.
    fn wait(&self);
}
