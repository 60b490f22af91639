//! File locks on a lock file: flock(2), open-file-description locks
//! (F_OFD_SETLKW) and classic POSIX record locks (lockf / F_SETLKW). Each
//! worker opens its own file description, lazily, in the thread or process
//! that uses it, so the locks conflict as they would between programs.

use std::cell::Cell;
use std::ffi::CStr;
use std::io;

/// Longest lock-file path contend accepts (stored inline so the lock can
/// live in shared memory without pointers).
pub const MAX_PATH: usize = 255;

/// A NUL-terminated path stored inline.
#[derive(Clone, Copy)]
pub struct InlinePath {
    bytes: [u8; MAX_PATH + 1],
}

impl std::fmt::Debug for InlinePath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.as_c_str())
    }
}

impl InlinePath {
    /// Copies `path`, refusing paths too long or with NUL bytes.
    pub fn new(path: &std::path::Path) -> Result<Self, String> {
        use std::os::unix::ffi::OsStrExt;
        let raw = path.as_os_str().as_bytes();
        if raw.len() > MAX_PATH || raw.contains(&0) {
            return Err(format!(
                "lock file path {} is longer than {MAX_PATH} bytes or contains NUL",
                path.display()
            ));
        }
        let mut bytes = [0u8; MAX_PATH + 1];
        bytes[..raw.len()].copy_from_slice(raw);
        Ok(Self { bytes })
    }

    fn as_c_str(&self) -> &CStr {
        CStr::from_bytes_until_nul(&self.bytes).expect("NUL-terminated by construction")
    }

    /// The file name's bytes (after the last '/').
    pub fn file_name(&self) -> &[u8] {
        let all = self.as_c_str().to_bytes();
        all.rsplit(|&b| b == b'/').next().unwrap_or(all)
    }
}

/// A worker's own open file description of the lock file, opened on first
/// use and closed on drop.
#[derive(Debug)]
pub struct FileNode {
    fd: Cell<libc::c_int>,
}

impl Default for FileNode {
    fn default() -> Self {
        Self { fd: Cell::new(-1) }
    }
}

impl Drop for FileNode {
    fn drop(&mut self) {
        if self.fd.get() >= 0 {
            // SAFETY: closing the descriptor this node opened.
            unsafe { libc::close(self.fd.get()) };
        }
    }
}

impl FileNode {
    /// Closes the descriptor, if open: the next [`Self::fd`] opens the
    /// file again (lockscale's open-lock-unlock-close cycle).
    pub fn close(&self) {
        let fd = self.fd.replace(-1);
        if fd >= 0 {
            // SAFETY: closing the descriptor this node opened, once.
            unsafe { libc::close(fd) };
        }
    }

    /// The descriptor, opening `path` read-write on first use.
    pub fn fd(&self, path: &InlinePath) -> libc::c_int {
        if self.fd.get() < 0 {
            // SAFETY: a NUL-terminated path; O_CLOEXEC keeps it out of
            // anything exec'd.
            let fd = unsafe { libc::open(path.as_c_str().as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
            assert!(fd >= 0, "opening the lock file {path:?} failed: {}", io::Error::last_os_error());
            self.fd.set(fd);
        }
        self.fd.get()
    }
}

/// Calls until it does not fail with EINTR; the error keeps its errno so
/// callers can tell "would block" from real failures.
fn retry(mut call: impl FnMut() -> libc::c_int) -> io::Result<()> {
    loop {
        if call() == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

fn would_block(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EWOULDBLOCK) | Some(libc::EACCES))
}

/// flock(fd, op).
pub fn flock(fd: libc::c_int, op: libc::c_int) -> io::Result<()> {
    // SAFETY: flock on a descriptor this worker opened.
    retry(|| unsafe { libc::flock(fd, op) })
}

/// flock(LOCK_EX | LOCK_NB): true if taken.
pub fn try_flock(fd: libc::c_int) -> bool {
    match flock(fd, libc::LOCK_EX | libc::LOCK_NB) {
        Ok(()) => true,
        Err(e) if would_block(&e) => false,
        Err(e) => panic!("flock(LOCK_EX | LOCK_NB) failed: {e}"),
    }
}

/// An open-file-description lock on the whole file: F_OFD_SETLKW (wait) or
/// F_OFD_SETLK, of type F_WRLCK or F_UNLCK.
pub fn ofd(fd: libc::c_int, cmd: libc::c_int, kind: libc::c_int) -> io::Result<()> {
    // SAFETY: struct flock is plain data; zero means "from offset 0 to the
    // end of the file" for l_start/l_len, and l_pid must be 0 for OFD locks.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = kind as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    // SAFETY: fcntl with a lock command and a valid struct flock.
    retry(|| unsafe { libc::fcntl(fd, cmd, &mut fl) })
}

/// F_OFD_SETLK with F_WRLCK: true if taken.
pub fn try_ofd(fd: libc::c_int) -> bool {
    match ofd(fd, libc::F_OFD_SETLK, libc::F_WRLCK) {
        Ok(()) => true,
        Err(e) if would_block(&e) => false,
        Err(e) => panic!("fcntl(F_OFD_SETLK) failed: {e}"),
    }
}

/// lockf(fd, cmd, 0): a classic POSIX record lock on the whole file, owned
/// by the process.
pub fn lockf(fd: libc::c_int, cmd: libc::c_int) -> io::Result<()> {
    // SAFETY: lockf on a descriptor this worker opened.
    retry(|| unsafe { libc::lockf(fd, cmd, 0) })
}
