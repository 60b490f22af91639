//! Sampling a tracepoint with perf_event_open(2) into ring buffers: every
//! hit's process, thread and raw tracepoint record, on every CPU, for the
//! calling thread and every task it starts afterwards (`inherit`: an
//! inherited event writes into its parent's buffer, so one buffer per CPU
//! holds the samples of a whole process tree). `contend run --profile`
//! uses it to count FUTEX_WAIT calls per address.
//!
//! The buffers are drained by [`TracepointSampler::drain`], which the
//! caller runs often enough that they do not fill; what the kernel had to
//! drop is counted (PERF_RECORD_LOST), never hidden.

use perf_event_open_sys::bindings as pb;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{fence, AtomicU64, Ordering};

/// Data pages per CPU buffer (a power of two): 512 KiB, about 16,000
/// samples of a syscall tracepoint.
const DATA_PAGES: usize = 128;

/// One CPU's event and its mapped buffer.
struct Ring {
    /// The event: it samples until this closes, when the ring drops.
    _event: OwnedFd,
    base: *mut u8,
    len: usize,
    page: usize,
}

// SAFETY: the mapping is owned by the ring and touched only through
// `&mut self` (drain) or at drop.
unsafe impl Send for Ring {}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: `base`/`len` are the mapping made in `open_ring`, unmapped
        // once, here.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// One sample: the process and thread that hit the tracepoint, and its
/// raw record (the tracepoint's fields as its `format` file lays them out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample<'a> {
    /// The process (thread group).
    pub pid: u32,
    /// The thread.
    pub tid: u32,
    /// The tracepoint's record, common fields first.
    pub raw: &'a [u8],
}

/// A tracepoint sampled on every CPU.
pub struct TracepointSampler {
    rings: Vec<Ring>,
    /// Samples the kernel dropped because a buffer was full.
    pub lost: u64,
}

impl TracepointSampler {
    /// Starts sampling tracepoint `id` (tracefs `events/<group>/<name>/id`)
    /// on CPUs `cpus`, on the calling thread and every task it starts from
    /// now on, keeping the hits that pass `filter` (a tracepoint filter
    /// expression).
    pub fn open(id: u64, filter: &str, cpus: impl IntoIterator<Item = i32>) -> io::Result<Self> {
        let filter = CString::new(filter).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let rings =
            cpus.into_iter().map(|cpu| open_ring(id, &filter, cpu)).collect::<io::Result<Vec<_>>>()?;
        Ok(Self { rings, lost: 0 })
    }

    /// Hands every sample written since the last drain to `f`, and frees
    /// their room.
    pub fn drain(&mut self, mut f: impl FnMut(Sample<'_>)) {
        for ring in &mut self.rings {
            self.lost += drain_ring(ring, &mut f);
        }
    }
}

fn open_ring(id: u64, filter: &CString, cpu: i32) -> io::Result<Ring> {
    let mut attr = pb::perf_event_attr {
        type_: pb::PERF_TYPE_TRACEPOINT,
        size: std::mem::size_of::<pb::perf_event_attr>() as u32,
        config: id,
        sample_type: (pb::PERF_SAMPLE_TID | pb::PERF_SAMPLE_RAW) as u64,
        ..Default::default()
    };
    attr.__bindgen_anon_1.sample_period = 1;
    attr.set_inherit(1);
    // SAFETY: `attr` is a fully initialised perf_event_attr of the size we
    // declare; pid 0 is the calling thread; one CPU; no group.
    let fd =
        unsafe { perf_event_open_sys::perf_event_open(&mut attr, 0, cpu, -1, pb::PERF_FLAG_FD_CLOEXEC as _) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: perf_event_open returned a new descriptor that we own.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: the fd is a perf event; the filter is NUL-terminated and
    // copied by the kernel before the call returns.
    if unsafe { perf_event_open_sys::ioctls::SET_FILTER(fd.as_raw_fd(), filter.as_ptr() as *mut _) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    let len = page * (1 + DATA_PAGES);
    // SAFETY: maps the event's buffer (one control page and a power of
    // two of data pages), shared and writable as perf requires.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd.as_raw_fd(),
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(Ring { _event: fd, base: base.cast(), len, page })
}

/// Reads `ring`'s new records; returns the samples the kernel lost.
fn drain_ring(ring: &mut Ring, f: &mut impl FnMut(Sample<'_>)) -> u64 {
    let meta = ring.base as *mut pb::perf_event_mmap_page;
    // SAFETY: the first page of the mapping is the control page; data_head
    // and data_tail are 8-aligned u64s the kernel and this reader share.
    let (head, tail) = unsafe {
        (
            &*(std::ptr::addr_of_mut!((*meta).data_head) as *const AtomicU64),
            &*(std::ptr::addr_of_mut!((*meta).data_tail) as *const AtomicU64),
        )
    };
    // The kernel writes the records, then data_head (perf's documented
    // protocol: read head with acquire, records, then tail with release).
    let end = head.load(Ordering::Acquire);
    let mut at = tail.load(Ordering::Relaxed);
    let size = (ring.len - ring.page) as u64;
    // SAFETY: the data area follows the control page.
    let data = unsafe { std::slice::from_raw_parts(ring.base.add(ring.page), size as usize) };
    let byte = |i: u64| data[(i % size) as usize];
    let mut record = Vec::new();
    let mut lost = 0;
    while at < end {
        let header: Vec<u8> = (0..8).map(|i| byte(at + i)).collect();
        let kind = u32::from_ne_bytes(header[0..4].try_into().expect("4 bytes"));
        let len = u16::from_ne_bytes(header[6..8].try_into().expect("2 bytes")) as u64;
        if len < 8 {
            break; // a broken record: stop rather than loop
        }
        // A record may wrap around the end of the area: copy it out.
        record.clear();
        record.extend((8..len).map(|i| byte(at + i)));
        match kind {
            pb::PERF_RECORD_SAMPLE if record.len() >= 12 => {
                let word = |o: usize| u32::from_ne_bytes(record[o..o + 4].try_into().expect("4 bytes"));
                let (pid, tid, raw_len) = (word(0), word(4), word(8) as usize);
                let raw = &record[12..(12 + raw_len).min(record.len())];
                f(Sample { pid, tid, raw });
            }
            pb::PERF_RECORD_LOST if record.len() >= 16 => {
                lost += u64::from_ne_bytes(record[8..16].try_into().expect("8 bytes"));
            }
            _ => {}
        }
        at += len;
    }
    fence(Ordering::Release);
    tail.store(at, Ordering::Release);
    lost
}
