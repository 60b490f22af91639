//! Counting tracepoint events with perf_event_open(2).
//!
//! contend counts futex syscalls the way `strace -c` reports them (calls and
//! errors) without tracing overhead: one counting perf event per tracepoint,
//! opened on the calling thread with `inherit` so threads it spawns
//! afterwards are counted too, and read at the edges of the measured window.
//! An event filter (`ret < 0` on `sys_exit_*`) counts failed calls.

use perf_event_open_sys::bindings as pb;
use perf_event_open_sys::ioctls;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// A counting perf event on one tracepoint, disabled until [`enable`].
///
/// [`enable`]: TracepointCounter::enable
#[derive(Debug)]
pub struct TracepointCounter {
    fd: OwnedFd,
}

impl TracepointCounter {
    /// Opens a counter for tracepoint `id` (from tracefs
    /// `events/<group>/<name>/id`) on the calling thread and every thread it
    /// creates from now on, optionally with a tracepoint filter expression.
    pub fn open(id: u64, filter: Option<&str>) -> io::Result<Self> {
        let mut attr = pb::perf_event_attr {
            type_: pb::PERF_TYPE_TRACEPOINT,
            size: std::mem::size_of::<pb::perf_event_attr>() as u32,
            config: id,
            ..Default::default()
        };
        attr.set_disabled(1);
        attr.set_inherit(1);
        // SAFETY: `attr` is a fully initialised perf_event_attr of the size
        // we declare; pid 0 / cpu -1 means "this thread, any CPU"; no group.
        let fd = unsafe {
            perf_event_open_sys::perf_event_open(&mut attr, 0, -1, -1, pb::PERF_FLAG_FD_CLOEXEC as _)
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: perf_event_open returned a new descriptor that we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let counter = Self { fd };
        if let Some(expr) = filter {
            let c = CString::new(expr).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
            // SAFETY: the fd is a perf event; the filter is a NUL-terminated
            // string the kernel copies before returning.
            let r = unsafe { ioctls::SET_FILTER(counter.fd.as_raw_fd(), c.as_ptr() as *mut _) };
            if r < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(counter)
    }

    /// Starts counting (this event and its inherited children).
    pub fn enable(&self) -> io::Result<()> {
        // SAFETY: plain ioctl on a perf event fd we own.
        let r = unsafe { ioctls::ENABLE(self.fd.as_raw_fd(), 0) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// The count so far, summed over the inherited threads, live and exited.
    /// Monotonic: callers take differences.
    pub fn read(&self) -> io::Result<u64> {
        let mut value = 0u64;
        // SAFETY: reading 8 bytes into a u64 we own; with no read_format
        // flags the kernel returns exactly one u64.
        let n = unsafe {
            libc::read(self.fd.as_raw_fd(), (&mut value as *mut u64).cast(), std::mem::size_of::<u64>())
        };
        if n != std::mem::size_of::<u64>() as isize {
            return Err(io::Error::last_os_error());
        }
        Ok(value)
    }
}
