//! The only place that talks to the kernel directly: one file per facility.

#[cfg(not(loom))]
pub mod clock;
#[cfg(not(loom))]
pub mod fd;
#[cfg(not(loom))]
pub mod futex;
#[cfg(not(loom))]
pub mod futex2;
#[cfg(loom)]
pub mod futex_loom;
#[cfg(not(loom))]
pub mod futex_pi;
#[cfg(not(loom))]
pub mod kernel_knobs;
#[cfg(not(loom))]
pub mod libc_info;
#[cfg(not(loom))]
pub mod lockfile;
#[cfg(not(loom))]
pub mod pages;
#[cfg(not(loom))]
pub mod perf;
pub mod perf_record;
pub mod perf_ring;
#[cfg(not(loom))]
pub mod posix_sem;
#[cfg(not(loom))]
pub mod process;
#[cfg(not(loom))]
pub mod pthread;
#[cfg(not(loom))]
pub mod pthread_cond;
#[cfg(not(loom))]
pub mod pthread_rwlock;
#[cfg(not(loom))]
pub mod sched;
#[cfg(not(loom))]
pub mod shm;
#[cfg(not(loom))]
pub mod spawn;
#[cfg(not(loom))]
pub mod sysv_sem;
#[cfg(not(loom))]
pub mod task_filter;
#[cfg(not(loom))]
pub mod thread;
#[cfg(not(loom))]
pub mod tid;
#[cfg(not(loom))]
pub mod wake_cost;

#[cfg(not(loom))]
pub mod alloc;
pub mod futex_api;

pub use futex_api::{Futex, WaitOutcome, WAKE_ALL};

/// The futex the lock algorithms use unless told otherwise: the real
/// syscalls, or loom's model when model checking.
#[cfg(not(loom))]
pub type DefaultFutex = futex::PrivateFutex;
/// The futex the lock algorithms use unless told otherwise: the real
/// syscalls, or loom's model when model checking.
#[cfg(loom)]
pub type DefaultFutex = futex_loom::LoomFutex;
