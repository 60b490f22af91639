//! File descriptors used as wake-up channels: an eventfd counter and the
//! two ends of a pipe, with blocking reads and writes that retry on EINTR.
//! The descriptors are close-on-exec but survive fork, which is how worker
//! processes share them.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Reads exactly `buf.len()` bytes, blocking; retries on EINTR.
pub fn read_exact(fd: RawFd, buf: &mut [u8]) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        // SAFETY: the pointer and length describe the unfilled tail of
        // `buf`, which we borrow mutably for the call.
        let r = unsafe { libc::read(fd, buf[done..].as_mut_ptr().cast(), buf.len() - done) };
        match r {
            0 => return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the writer closed")),
            n if n > 0 => done += n as usize,
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
    Ok(())
}

/// Writes all of `buf`, blocking; retries on EINTR.
pub fn write_all(fd: RawFd, buf: &[u8]) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        // SAFETY: the pointer and length describe the unwritten tail of
        // `buf`, which we borrow for the call.
        let r = unsafe { libc::write(fd, buf[done..].as_ptr().cast(), buf.len() - done) };
        if r >= 0 {
            done += r as usize;
        } else {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
    Ok(())
}

fn owned(fd: libc::c_int) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor the kernel just returned to us, owned by no one
    // else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A new eventfd with counter 0 (not in semaphore mode: a read takes the
/// whole count).
pub fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: eventfd takes no pointers.
    owned(unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) })
}

/// A new pipe: (read end, write end).
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [-1 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    let r = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((owned(fds[0])?, owned(fds[1])?))
}

/// The raw number of an owned descriptor (for the hot path, which must not
/// go through `File`'s buffering or its error boxing).
pub fn raw(fd: &OwnedFd) -> RawFd {
    fd.as_raw_fd()
}
