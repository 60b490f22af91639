//! Facts about the C library the process runs on.

use std::ffi::CStr;

/// The glibc version string, e.g. "2.36".
pub fn glibc_version() -> String {
    // SAFETY: gnu_get_libc_version takes no arguments and returns a pointer
    // to a static NUL-terminated string.
    let ptr = unsafe { libc::gnu_get_libc_version() };
    // SAFETY: non-null static C string, see above.
    unsafe { CStr::from_ptr(ptr) }.to_string_lossy().into_owned()
}
