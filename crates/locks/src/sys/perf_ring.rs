//! Sampling a tracepoint with perf_event_open(2) into ring buffers: every
//! hit's process, thread and raw tracepoint record, on every CPU, for the
//! calling thread and every task it starts afterwards (`inherit`: an
//! inherited event writes into its parent's buffer, so one buffer per CPU
//! holds the samples of a whole process tree). Several tracepoints share
//! each CPU's buffer (PERF_EVENT_IOC_SET_OUTPUT), so one CPU's samples come
//! in the order they happened, each stamped with CLOCK_MONOTONIC when asked
//! ([`Stamped`]): a syscall's entry and exit on different CPUs can then be
//! put back in order. `contend run --profile`'s futex view uses it.
//!
//! A sampler can also be the output of BPF programs instead
//! ([`TracepointSampler::open_output`]): one event per CPU that records
//! what a program hands it (bpf_perf_event_output), with the same stamp,
//! ids and, when asked, the user stack of the thread that hit the
//! program's tracepoint; `task_filter` routes the followed threads' futex
//! calls there.
//!
//! The buffers are drained by [`TracepointSampler::drain`], which the
//! caller runs often enough that they do not fill; what the kernel had to
//! drop is counted (PERF_RECORD_LOST), never hidden.

use perf_event_open_sys::bindings as pb;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{fence, AtomicU64, Ordering};

use super::perf_record::{parse_map, parse_sample, parse_switch, text, USER_REGS};
pub use super::perf_record::{Record, Sample, Stamped, UserStack};

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

/// What a sampler's buffers get besides its tracepoints' hits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Watch {
    /// The tasks' mappings and names ([`Record::Map`], [`Record::Comm`]).
    pub tasks: bool,
    /// Each time a sampled thread leaves a CPU or comes to one
    /// ([`Record::Switch`]; needs [`Stamped::Yes`]).
    pub switches: bool,
    /// The kernel stack of each hit ([`Sample::stack`]); never the user's.
    pub kernel_stacks: bool,
    /// With a size in bytes (a multiple of 8, 0: none), each hit's user
    /// registers and that much of the top of its user stack
    /// ([`Sample::user`]), for an unwinder.
    pub user_stacks: u32,
}

/// A tracepoint to sample: its id (tracefs `events/<group>/<name>/id`)
/// and a filter expression ("" keeps every hit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracepoint {
    /// The id.
    pub id: u64,
    /// The filter.
    pub filter: String,
}

/// Tracepoints sampled on every CPU.
pub struct TracepointSampler {
    rings: Vec<Ring>,
    /// The CPU of each ring.
    cpus: Vec<i32>,
    /// The tracepoints, for threads added later.
    points: Vec<Tracepoint>,
    /// The events that write into another event's ring (closed with it).
    _followers: Vec<OwnedFd>,
    stamped: Stamped,
    /// What the buffers get, for threads added later (but the tasks'
    /// records, which the first thread's events write once).
    watch: Watch,
    /// Samples the kernel dropped because a buffer was full.
    pub lost: u64,
}

impl TracepointSampler {
    /// Starts sampling every one of `points` (each with its filter
    /// expression) on CPUs `cpus`, on thread `pid` (0: the calling thread;
    /// else a thread of a running process, whose other threads
    /// [`add_thread`](Self::add_thread) adds) and every task it starts from
    /// now on, into one buffer of `pages` data pages (a power of two) per
    /// CPU; `watch` says what else the buffers get.
    pub fn open_all(
        points: &[Tracepoint],
        stamped: Stamped,
        watch: Watch,
        pages: usize,
        pid: i32,
        cpus: impl IntoIterator<Item = i32>,
    ) -> io::Result<Self> {
        check(stamped, watch, pages)?;
        let (mut rings, mut followers, mut on) = (Vec::new(), Vec::new(), Vec::new());
        for cpu in cpus {
            on.push(cpu);
            // Only the first event of a CPU writes the tasks' records, once.
            let mut events = points.iter().enumerate().map(|(i, p)| {
                let watch = if i == 0 { watch } else { Watch { tasks: false, switches: false, ..watch } };
                open_event(p, stamped, watch, pid, cpu)
            });
            let first = events
                .next()
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no tracepoint"))??;
            let ring = map_ring(first, pages)?;
            for event in events {
                let event = event?;
                redirect(&event, &ring)?;
                followers.push(event);
            }
            rings.push(ring);
        }
        Ok(Self {
            rings,
            cpus: on,
            points: points.to_vec(),
            _followers: followers,
            stamped,
            watch: Watch { tasks: false, ..watch },
            lost: 0,
        })
    }

    /// Opens, on CPUs `cpus`, one event per CPU that records what BPF
    /// programs send it (PERF_COUNT_SW_BPF_OUTPUT: each record a sample
    /// whose raw data is what the program sent), stamped and with what
    /// `watch` asks (no switches; the tasks' records are every process's
    /// on the machine), into buffers of `pages` data pages. The programs
    /// find the events by CPU ([`outputs`](Self::outputs)).
    pub fn open_output(stamped: Stamped, watch: Watch, pages: usize, cpus: &[i32]) -> io::Result<Self> {
        if watch.switches {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "switches need per-thread events"));
        }
        check(stamped, watch, pages)?;
        let mut rings = Vec::new();
        for &cpu in cpus {
            let mut attr = attr(stamped, watch);
            attr.type_ = pb::PERF_TYPE_SOFTWARE;
            attr.config = pb::PERF_COUNT_SW_BPF_OUTPUT as u64;
            // SAFETY: a fully initialised perf_event_attr of the size it
            // declares; pid -1 with one CPU; no group.
            let fd = unsafe {
                perf_event_open_sys::perf_event_open(&mut attr, -1, cpu, -1, pb::PERF_FLAG_FD_CLOEXEC as _)
            };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: perf_event_open returned a new descriptor that we own.
            rings.push(map_ring(unsafe { OwnedFd::from_raw_fd(fd) }, pages)?);
        }
        Ok(Self {
            rings,
            cpus: cpus.to_vec(),
            points: Vec::new(),
            _followers: Vec::new(),
            stamped,
            watch: Watch { tasks: false, ..watch },
            lost: 0,
        })
    }

    /// Each CPU's event, for a BPF program's output map.
    pub fn outputs(&self) -> impl Iterator<Item = (i32, std::os::fd::BorrowedFd<'_>)> {
        use std::os::fd::AsFd;
        self.cpus.iter().zip(&self.rings).map(|(&cpu, r)| (cpu, r._event.as_fd()))
    }

    /// Also samples thread `tid` of another process (and every task it
    /// starts from now on) into the same buffers: how a running process
    /// is followed. Its threads must each be added once: a thread started
    /// by an added one is followed already (and twice if added too).
    pub fn add_thread(&mut self, tid: i32) -> io::Result<()> {
        for (ring, &cpu) in self.rings.iter().zip(&self.cpus) {
            for point in &self.points {
                // Like open_all: only the first event of a CPU writes the
                // switches.
                let watch = if std::ptr::eq(point, &self.points[0]) {
                    self.watch
                } else {
                    Watch { switches: false, ..self.watch }
                };
                let event = open_event(point, self.stamped, watch, tid, cpu)?;
                redirect(&event, ring)?;
                self._followers.push(event);
            }
        }
        Ok(())
    }

    /// Hands every sample written since the last drain to `f`, and frees
    /// their room.
    pub fn drain(&mut self, mut f: impl FnMut(Record<'_>)) {
        let user = self.watch.user_stacks > 0;
        for ring in &mut self.rings {
            self.lost += drain_ring(ring, self.stamped, self.watch.kernel_stacks, user, &mut f);
        }
    }

    /// Stops sampling, or starts it again: every event of the sampler,
    /// and the copies a task started since inherited (the kernel applies
    /// enable and disable to an event's inherited children too). What a
    /// caller uses to keep an expensive sample (a user stack) under a
    /// budget.
    pub fn set_enabled(&self, on: bool) -> io::Result<()> {
        let events = self.rings.iter().map(|r| &r._event).chain(&self._followers);
        for event in events {
            // SAFETY: plain ioctls on perf event fds this sampler owns.
            let r = unsafe {
                if on {
                    perf_event_open_sys::ioctls::ENABLE(event.as_raw_fd(), 0)
                } else {
                    perf_event_open_sys::ioctls::DISABLE(event.as_raw_fd(), 0)
                }
            };
            if r < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// Refuses what the kernel would: switches without stamps, an odd user
/// stack size, buffers not a power of two.
fn check(stamped: Stamped, watch: Watch, pages: usize) -> io::Result<()> {
    if watch.switches && stamped == Stamped::No {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "switches need stamped samples"));
    }
    if watch.user_stacks % 8 != 0 || watch.user_stacks > 32 << 10 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "user stack: not a multiple of 8 up to 32 KiB",
        ));
    }
    if !pages.is_power_of_two() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "buffer pages: not a power of two"));
    }
    Ok(())
}

/// Sends `event`'s samples into `ring` (an event of this process on the
/// same CPU, with the same clock).
fn redirect(event: &OwnedFd, ring: &Ring) -> io::Result<()> {
    // SAFETY: both are perf events of this process on the same CPU with
    // the same clock; the ioctl only redirects output.
    if unsafe { perf_event_open_sys::ioctls::SET_OUTPUT(event.as_raw_fd(), ring._event.as_raw_fd()) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Opens `point`'s event on `cpu`, filtered.
fn open_event(point: &Tracepoint, stamped: Stamped, watch: Watch, pid: i32, cpu: i32) -> io::Result<OwnedFd> {
    let filter =
        CString::new(point.filter.as_str()).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let mut attr = attr(stamped, watch);
    attr.type_ = pb::PERF_TYPE_TRACEPOINT;
    attr.config = point.id;
    attr.set_inherit(1);
    // SAFETY: `attr` is a fully initialised perf_event_attr of the size we
    // declare; pid 0 is the calling thread, else a thread id; one CPU; no
    // group.
    let fd = unsafe {
        perf_event_open_sys::perf_event_open(&mut attr, pid, cpu, -1, pb::PERF_FLAG_FD_CLOEXEC as _)
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: perf_event_open returned a new descriptor that we own.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    if !point.filter.is_empty() {
        // SAFETY: the fd is a perf event; the filter is NUL-terminated and
        // copied by the kernel before the call returns.
        let r = unsafe { perf_event_open_sys::ioctls::SET_FILTER(fd.as_raw_fd(), filter.as_ptr() as *mut _) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(fd)
}

/// An event's sampling: every hit, with its process and thread, raw
/// record, and what `stamped` and `watch` ask (its type and config are
/// the caller's).
fn attr(stamped: Stamped, watch: Watch) -> pb::perf_event_attr {
    let time = if stamped == Stamped::Yes { pb::PERF_SAMPLE_TIME } else { 0 };
    let stack = if watch.kernel_stacks { pb::PERF_SAMPLE_CALLCHAIN } else { 0 };
    let user = if watch.user_stacks > 0 { pb::PERF_SAMPLE_REGS_USER | pb::PERF_SAMPLE_STACK_USER } else { 0 };
    let mut attr = pb::perf_event_attr {
        size: std::mem::size_of::<pb::perf_event_attr>() as u32,
        sample_type: (pb::PERF_SAMPLE_TID | time | stack | pb::PERF_SAMPLE_RAW | user) as u64,
        ..Default::default()
    };
    if watch.user_stacks > 0 {
        attr.sample_regs_user = USER_REGS;
        attr.sample_stack_user = watch.user_stacks;
    }
    attr.__bindgen_anon_1.sample_period = 1;
    if watch.kernel_stacks {
        attr.set_exclude_callchain_user(1);
    }
    if watch.switches {
        // A switch record carries its thread and time only as the
        // sample id every record gets with sample_id_all.
        attr.set_context_switch(1);
        attr.set_sample_id_all(1);
    }
    if watch.tasks {
        attr.set_mmap(1);
        attr.set_mmap2(1);
        attr.set_mmap_data(1);
        attr.set_comm(1);
        attr.set_comm_exec(1);
    }
    if stamped == Stamped::Yes {
        attr.set_use_clockid(1);
        attr.clockid = libc::CLOCK_MONOTONIC;
    }
    attr
}

/// Maps `fd`'s buffer.
fn map_ring(fd: OwnedFd, pages: usize) -> io::Result<Ring> {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    let len = page * (1 + pages);
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
fn drain_ring(
    ring: &mut Ring,
    stamped: Stamped,
    stacks: bool,
    user: bool,
    f: &mut impl FnMut(Record<'_>),
) -> u64 {
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
    // Bytes [from, to) of the area, which may wrap around its end.
    let copy = |into: &mut Vec<u8>, from: u64, to: u64| {
        into.clear();
        let (a, b) = ((from % size) as usize, (to - from) as usize);
        let first = b.min(data.len() - a);
        into.extend_from_slice(&data[a..a + first]);
        into.extend_from_slice(&data[..b - first]);
    };
    let (mut header, mut record) = (Vec::with_capacity(8), Vec::new());
    let mut lost = 0;
    while at < end {
        copy(&mut header, at, at + 8);
        let kind = u32::from_ne_bytes(header[0..4].try_into().expect("4 bytes"));
        let misc = u16::from_ne_bytes(header[4..6].try_into().expect("2 bytes")) as u32;
        let len = u16::from_ne_bytes(header[6..8].try_into().expect("2 bytes")) as u64;
        if len < 8 {
            break; // a broken record: stop rather than loop
        }
        // A record may wrap around the end of the area: copy it out.
        copy(&mut record, at + 8, at + len);
        match kind {
            pb::PERF_RECORD_SAMPLE => {
                if let Some(sample) = parse_sample(&record, stamped, stacks, user) {
                    f(Record::Sample(sample));
                }
            }
            pb::PERF_RECORD_MMAP2 => {
                if let Some(map) = parse_map(&record) {
                    f(map);
                }
            }
            pb::PERF_RECORD_SWITCH => {
                if let Some(switch) = parse_switch(&record, misc) {
                    f(switch);
                }
            }
            pb::PERF_RECORD_COMM if record.len() > 8 => {
                let word = |o: usize| u32::from_ne_bytes(record[o..o + 4].try_into().expect("4 bytes"));
                let comm = text(&record[8..]);
                let exec = misc & pb::PERF_RECORD_MISC_COMM_EXEC != 0;
                f(Record::Comm { pid: word(0), tid: word(4), comm, exec });
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
