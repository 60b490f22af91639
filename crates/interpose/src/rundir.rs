//! The directory `contend run` made for this execution, where this
//! library leaves what contend reads (the report, the loaded marker, what
//! it said): opened only if it is exactly the directory contend recorded,
//! and every file created in it fresh (src/family/program/scratch.rs says
//! why each check is there). Nothing here allocates.

use locks::in_mutex::input;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering::Relaxed};

/// The directory `contend run` made for this execution, opened: only if
/// what `CONTEND_RUN_DIR` names now is the directory of identity
/// `CONTEND_RUN_DIR_ID` (`DEV:INO:UID`), owned by that user and closed to
/// everyone else. A process that outlives the run finds it gone, or
/// finds another directory (another owner or inode) in its place, and
/// writes nothing; a symlink is not followed.
pub fn open() -> Option<libc::c_int> {
    // SAFETY: NUL-terminated names; getenv's results live with the process.
    let (dir, id) =
        unsafe { (libc::getenv(input::DIR.c_name.as_ptr()), libc::getenv(input::DIR_ID.c_name.as_ptr())) };
    if dir.is_null() || id.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated string from the environment.
    let id = unsafe { std::ffi::CStr::from_ptr(id) }.to_str().ok()?;
    let (dev, ino, uid) = input::parse_dir_id(id)?;
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: `dir` is a NUL-terminated path from the environment.
    let fd = unsafe { libc::open(dir, flags) };
    if fd < 0 {
        return None;
    }
    // SAFETY: plain data for fstat to fill.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat on the descriptor just opened, into a valid struct.
    let ok = unsafe { libc::fstat(fd, &mut st) } == 0
        && st.st_mode & libc::S_IFMT == libc::S_IFDIR
        && st.st_mode & 0o077 == 0
        && st.st_dev == dev
        && st.st_ino == ino
        && st.st_uid == uid;
    if !ok {
        // SAFETY: closes the descriptor opened above.
        unsafe { libc::close(fd) };
        return None;
    }
    Some(fd)
}

/// Creates this process's file `<what>.<pid>.tsv` in `dir`, or
/// `<what>.<pid>.<k>.tsv` if a process of the same pid (recycled within
/// the run) made one already. Never follows or reuses a file that is there.
pub fn create(dir: libc::c_int, what: &str, pid: libc::pid_t) -> Option<libc::c_int> {
    for k in 0..64u32 {
        let mut name = [0u8; 64];
        let mut w = std::io::Cursor::new(&mut name[..63]);
        let _ = match k {
            0 => std::io::Write::write_fmt(&mut w, format_args!("{what}.{pid}.tsv")),
            k => std::io::Write::write_fmt(&mut w, format_args!("{what}.{pid}.{k}.tsv")),
        };
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: `name` is NUL-terminated (zero-filled past what was
        // written, which is at most 63 bytes); `dir` is an open directory.
        let fd = unsafe { libc::openat(dir, name.as_ptr().cast(), flags, 0o600) };
        if fd >= 0 {
            return Some(fd);
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST) {
            return None;
        }
    }
    None
}

/// The report file made at load by a process running as root, while it
/// still may write the run's directory: a server that drops root
/// (setuid) could not create one there at exit. Its pid, descriptor, and
/// the file's device and inode (to know it is still that file: a program
/// may close or reuse descriptors it did not open).
static EARLY_PID: AtomicI32 = AtomicI32::new(0);
static EARLY_FD: AtomicI32 = AtomicI32::new(-1);
static EARLY_DEV: AtomicU64 = AtomicU64::new(0);
static EARLY_INO: AtomicU64 = AtomicU64::new(0);

/// The device and inode of `fd`, if it is a regular file.
fn identity(fd: libc::c_int) -> Option<(u64, u64, i64)> {
    // SAFETY: plain data for fstat to fill.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat of a descriptor number into a valid struct; a closed
    // or foreign descriptor only fails or tells another file.
    let ok = unsafe { libc::fstat(fd, &mut st) } == 0 && st.st_mode & libc::S_IFMT == libc::S_IFREG;
    ok.then_some((st.st_dev, st.st_ino, st.st_size))
}

/// At load, as root: makes this process's report file now (see
/// [`EARLY_PID`]).
pub fn prepare_report() {
    // SAFETY: geteuid and getpid cannot fail.
    let (euid, pid) = unsafe { (libc::geteuid(), libc::getpid()) };
    if euid != 0 {
        return;
    }
    let Some(dir) = open() else { return };
    let fd = create(dir, "interpose", pid);
    // SAFETY: closes the directory `open` opened.
    unsafe { libc::close(dir) };
    let Some(fd) = fd else { return };
    let Some((dev, ino, _)) = identity(fd) else { return };
    EARLY_DEV.store(dev, Relaxed);
    EARLY_INO.store(ino, Relaxed);
    EARLY_FD.store(fd, Relaxed);
    EARLY_PID.store(pid, Relaxed);
}

/// This process's report file, to write once: the one made at load if it
/// is still this process's, still that file and still empty (a forked
/// child shares the descriptor, and makes its own), else a new one.
pub fn report_file(pid: libc::pid_t) -> Option<libc::c_int> {
    let fd = EARLY_FD.load(Relaxed);
    if EARLY_PID.load(Relaxed) == pid && fd >= 0 {
        let want = (EARLY_DEV.load(Relaxed), EARLY_INO.load(Relaxed), 0);
        if identity(fd) == Some(want) {
            return Some(fd);
        }
    }
    let dir = open()?;
    let fd = create(dir, "interpose", pid);
    // SAFETY: closes the directory `open` opened.
    unsafe { libc::close(dir) };
    fd
}
