//! An in-kernel filter of tasks for tracepoints: a BPF hash map of
//! followed thread ids, which the kernel itself keeps up to date (a task
//! started by a followed thread is followed from its start; a thread that
//! exits is forgotten), and BPF programs on tracepoints that send the
//! followed threads' hits, as the tracepoint's record, to a
//! [`TracepointSampler`] of BPF output events (`open_output`).
//!
//! Why: a per-thread perf event (`perf_ring`'s `inherit` events) sits in
//! each followed thread's perf context, which the kernel switches out and
//! in at every context switch of the thread, whether the tracepoint fires
//! or not: measured, that alone cost a pipe ping-pong with no futex call
//! 1.36× (docs/results/futex-view-cost.md). A BPF program on a
//! tracepoint runs only when the tracepoint fires, on any CPU.
//!
//! The programs return 1, so that they change nothing for other users of
//! the same tracepoints: the kernel runs every program attached to a
//! tracepoint at each hit, and drops the hit for every perf event on it
//! when any of them returns 0 (a filter returning 0 would blind a
//! concurrent `perf trace`, or a second contend). Each program is
//! attached through a counting event of its own on one CPU (the kernel
//! runs a tracepoint's programs on every CPU).
//!
//! The programs (the router of each tracepoint, and the hooks on
//! sched_process_fork and sched_process_exit that keep the map) are a
//! few dozen instructions each, assembled here: building them needs no
//! BPF compiler (clang) nor libbpf on the machine that builds contend.
//! Loading needs CAP_BPF and CAP_PERFMON (or root); a caller that cannot
//! falls back to per-thread events.

mod asm;
mod programs;
mod syscalls;

use super::perf_ring::TracepointSampler;
use asm::Insn;
use programs::{on_exit, on_fork, route, route_switch, route_waitv, WAITV_SCRATCH};
pub use programs::{SwitchFields, WaitvFields, WAITV_ENTRY};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use syscalls::{
    attached, create_map, elem, load, update, BPF_MAP_DELETE_ELEM, BPF_MAP_LOOKUP_ELEM, BPF_MAP_TYPE_HASH,
    BPF_MAP_TYPE_PERCPU_ARRAY, BPF_MAP_TYPE_PERF_EVENT_ARRAY,
};

/// How many threads can be followed at once (live ones: an exiting
/// thread leaves the map).
const MAX_THREADS: u32 = 1 << 16;

/// The followed threads, the hooks that keep them, and the routers.
pub struct TaskFilter {
    map: OwnedFd,
    /// The CPU the programs' events are opened on.
    cpu: i32,
    /// The events that run the programs (one per program; the switch
    /// router's is in `switches`).
    _attached: Vec<OwnedFd>,
    /// The switch router, once loaded: attached only while switches are
    /// followed (`route_switches_now`).
    switches: Option<Router>,
    /// The maps the programs use besides the followed one: outputs and
    /// scratch (closed after the events).
    _outputs: Vec<OwnedFd>,
}

/// A program attached to its tracepoint only at times.
struct Router {
    /// The tracepoint's id.
    id: u64,
    program: OwnedFd,
    /// The event that runs it, while attached.
    event: Option<OwnedFd>,
}

/// Tracepoints the hooks attach to: their ids and where sched_process_fork
/// keeps the child's id, from tracefs.
#[derive(Debug, Clone, Copy)]
pub struct Hooks {
    /// sched_process_fork's id.
    pub fork: u64,
    /// Offset of its child_pid field.
    pub child_pid: usize,
    /// sched_process_exit's id.
    pub exit: u64,
}

/// A tracepoint whose followed hits are sent on.
#[derive(Debug, Clone, Copy)]
pub struct Route {
    /// Its id.
    pub id: u64,
    /// Its record's length, bytes (the format's last field's end).
    pub len: usize,
    /// Whether the hits also go to the second sampler (the stacks').
    pub both: bool,
    /// For sys_enter_futex_waitv: where its array's address and length
    /// are, so that the array goes with the record (the record alone to
    /// the second sampler, `both` or not).
    pub waitv: Option<WaitvFields>,
}

impl TaskFilter {
    /// Loads the map and the hooks (opened on `cpus`'s first); no thread
    /// is followed yet ([`follow`](Self::follow)).
    pub fn open(hooks: Hooks, cpus: &[i32]) -> io::Result<Self> {
        let child_pid = i16::try_from(hooks.child_pid)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "child_pid offset out of range"))?;
        let cpu = *cpus.first().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no CPU"))?;
        let map = create_map(BPF_MAP_TYPE_HASH, 4, 4, MAX_THREADS)?;
        let fd = map.as_raw_fd();
        let mut me = Self { map, cpu, _attached: Vec::new(), switches: None, _outputs: Vec::new() };
        me.attach(hooks.fork, &on_fork(fd, child_pid), "contend_fork")?;
        me.attach(hooks.exit, &on_exit(fd), "contend_exit")?;
        Ok(me)
    }

    /// Sends the followed threads' hits of each of `routes` to `first`,
    /// and those of a route marked `both` to `second` too.
    pub fn route(
        &mut self,
        routes: &[Route],
        first: &TracepointSampler,
        second: Option<&TracepointSampler>,
    ) -> io::Result<()> {
        let first = self.outputs(first)?;
        let second = second.map(|s| self.outputs(s)).transpose()?;
        for r in routes {
            let (id, len) = (checked_id(r.id)?, checked_len(r.len)?);
            let followed = self.map.as_raw_fd();
            // A kernel that refuses the array's copy (bpf_probe_read_user
            // is Linux 5.5) still gets the record: its words go unread.
            if let Some(at) = r.waitv {
                if self.route_waitv(r.id, id, len, at, first, second).is_ok() {
                    continue;
                }
            }
            let maps: Vec<i32> = std::iter::once(first).chain(second.filter(|_| r.both)).collect();
            self.attach(r.id, &route(followed, id, len, &maps), "contend_route")?;
        }
        Ok(())
    }

    /// The futex_waitv router (`programs::route_waitv`) on tracepoint
    /// `tp` (`id` as an immediate), with its scratch map.
    fn route_waitv(
        &mut self,
        tp: u64,
        id: i32,
        len: i16,
        at: WaitvFields,
        first: i32,
        second: Option<i32>,
    ) -> io::Result<()> {
        let scratch = create_map(BPF_MAP_TYPE_PERCPU_ARRAY, 4, WAITV_SCRATCH, 1)?;
        let program = route_waitv(self.map.as_raw_fd(), scratch.as_raw_fd(), id, len, at, first, second);
        self.attach(tp, &program, "contend_waitv")?;
        self._outputs.push(scratch);
        Ok(())
    }

    /// Sends sched_switch's records (tracepoint `id`, `len` bytes, its
    /// fields `at`) where a followed thread leaves a CPU or comes to one,
    /// to `switches`, and those where a followed thread goes to sleep to
    /// `sleeps` too (a sampler with the kernel's stacks): the record's
    /// byte after its id says 1 (leaving), 2 (coming) or both.
    pub fn route_switches(
        &mut self,
        id: u64,
        len: usize,
        at: SwitchFields,
        switches: &TracepointSampler,
        sleeps: &TracepointSampler,
    ) -> io::Result<()> {
        let (id, len) = (checked_id(id)?, checked_len(len)?);
        let (switches, sleeps) = (self.outputs(switches)?, self.outputs(sleeps)?);
        let program =
            load(&route_switch(self.map.as_raw_fd(), id, len, at, switches, sleeps), "contend_switch")?;
        self.switches = Some(Router { id: id as u64, program, event: None });
        self.route_switches_now(true)
    }

    /// Turns the switch router on or off (it starts on): what follows
    /// the switches in windows of time, to bound what they cost.
    ///
    /// Off, it is detached from sched_switch, not told to return early:
    /// while any program is attached to a tracepoint, the kernel builds
    /// the tracepoint's record before it runs the program, at every
    /// context switch of every task on the machine, followed or not; and
    /// with no program or event left on sched_switch, the kernel
    /// unregisters its probe there.
    pub fn route_switches_now(&mut self, on: bool) -> io::Result<()> {
        let cpu = self.cpu;
        let router = self.switches.as_mut().ok_or_else(|| io::Error::other("the switches are not routed"))?;
        match (on, &router.event) {
            (true, None) => router.event = Some(attached(router.id, cpu, &router.program)?),
            (false, Some(_)) => router.event = None,
            _ => {}
        }
        Ok(())
    }

    /// An output map of `sampler`'s events, by CPU; its descriptor.
    fn outputs(&mut self, sampler: &TracepointSampler) -> io::Result<i32> {
        let events: Vec<_> = sampler.outputs().collect();
        let size = events.iter().map(|(cpu, _)| *cpu as u32 + 1).max().unwrap_or(1);
        let map = create_map(BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, size)?;
        for (cpu, event) in events {
            let (key, value) = (cpu as u32, event.as_raw_fd() as u32);
            update(&map, &key, &value as *const u32 as u64)?;
        }
        let fd = map.as_raw_fd();
        self._outputs.push(map);
        Ok(fd)
    }

    /// Loads `insns` and runs it at each hit of tracepoint `id`.
    fn attach(&mut self, id: u64, insns: &[Insn], name: &str) -> io::Result<()> {
        let prog = load(insns, name)?;
        let event = attached(id, self.cpu, &prog)?;
        self._attached.push(event);
        Ok(())
    }

    /// Follows thread `tid`, and from now on every task it starts.
    pub fn follow(&self, tid: u32) -> io::Result<()> {
        update(&self.map, &tid, &1u32 as *const u32 as u64)
    }

    /// Stops following thread `tid` (tasks it started stay followed).
    pub fn forget(&self, tid: u32) -> io::Result<()> {
        match self.elem(BPF_MAP_DELETE_ELEM, tid, 0) {
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(()),
            r => r.map(|_| ()),
        }
    }

    /// Whether thread `tid` is followed.
    pub fn follows(&self, tid: u32) -> io::Result<bool> {
        let mut value = 0u32;
        match self.elem(BPF_MAP_LOOKUP_ELEM, tid, &mut value as *mut u32 as u64) {
            Ok(_) => Ok(true),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// A map command on key `tid` with a value at `value` (0: none).
    fn elem(&self, cmd: i64, tid: u32, value: u64) -> io::Result<i64> {
        elem(&self.map, cmd, &tid, value)
    }
}

/// A tracepoint id as an instruction's immediate.
fn checked_id(id: u64) -> io::Result<i32> {
    i32::try_from(id).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "tracepoint id out of range"))
}

/// What a router copies of a record of `len` bytes: its length rounded
/// up to 8 bytes. The futex_waitv router's copied array follows it there.
pub fn routed_len(len: usize) -> usize {
    len.div_ceil(8) * 8
}

/// [`routed_len`], at most 64 (what a router copies to its stack).
fn checked_len(len: usize) -> io::Result<i16> {
    i16::try_from(routed_len(len))
        .ok()
        .filter(|l| (8..=64).contains(l))
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "record longer than 64 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tracepoint's id and format, from tracefs wherever it is mounted.
    fn tracepoint(name: &str) -> (u64, String) {
        for root in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
            let dir = std::path::Path::new(root).join("events/sched").join(name);
            if let (Ok(id), Ok(format)) =
                (std::fs::read_to_string(dir.join("id")), std::fs::read_to_string(dir.join("format")))
            {
                return (id.trim().parse().unwrap(), format);
            }
        }
        panic!("no tracefs with sched/{name} (mount -t tracefs nodev /sys/kernel/tracing)");
    }

    /// The offset of `field` in a tracepoint's `format`.
    fn offset(format: &str, field: &str) -> usize {
        let line = format.lines().find(|l| l.contains(&format!(" {field};"))).expect("the field");
        line.split("offset:").nth(1).unwrap().split(';').next().unwrap().parse().unwrap()
    }

    /// A filter with its hooks, loaded on CPU 0.
    fn filter() -> TaskFilter {
        let (fork, format) = tracepoint("sched_process_fork");
        let child_pid = offset(&format, "child_pid");
        let (exit, _) = tracepoint("sched_process_exit");
        TaskFilter::open(Hooks { fork, child_pid, exit }, &[0]).expect("root can load BPF here")
    }

    #[test]
    fn the_switch_router_sends_a_followed_threads_switches_only_while_on() {
        use super::super::perf_ring::{Record, Stamped, Watch};
        let mut filter = filter();
        let me = super::super::tid::current();
        filter.follow(me).unwrap();
        let (id, format) = tracepoint("sched_switch");
        let at = SwitchFields {
            prev_state: offset(&format, "prev_state") as i16,
            next_pid: offset(&format, "next_pid") as i16,
        };
        let len = format.lines().filter_map(|l| {
            let n = |k: &str| l.split(k).nth(1)?.split(';').next()?.trim().parse::<usize>().ok();
            Some(n("offset:")? + n("size:")?)
        });
        let len = len.max().unwrap();
        let cpus: Vec<i32> = (0..std::thread::available_parallelism().unwrap().get() as i32).collect();
        let open = || TracepointSampler::open_output(Stamped::Yes, Watch::default(), 16, &cpus).unwrap();
        let (mut switches, sleeps) = (open(), open());
        filter.route_switches(id, len, at, &switches, &sleeps).unwrap();
        // Each nap is a switch out of this thread and one back in.
        let mut napped = |filter: &mut TaskFilter, on: bool| {
            filter.route_switches_now(on).unwrap();
            for _ in 0..20 {
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            let mut mine = 0;
            switches.drain(|r| mine += matches!(r, Record::Sample(s) if s.tid == me) as u32);
            mine
        };
        assert!(napped(&mut filter, true) >= 20, "on: the switches are sent");
        assert_eq!(napped(&mut filter, false), 0, "off: none");
        assert!(napped(&mut filter, true) >= 20, "on again");
    }

    #[test]
    fn the_kernel_follows_a_followed_threads_children_and_forgets_them_at_exit() {
        let filter = filter();
        let me = super::super::tid::current();
        assert!(!filter.follows(me).unwrap());
        filter.follow(me).unwrap();
        assert!(filter.follows(me).unwrap());
        // A thread this one starts is followed from its start; one the
        // test harness starts is not.
        let (tx, rx) = std::sync::mpsc::channel();
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let child = std::thread::spawn(move || {
            tx.send(super::super::tid::current()).unwrap();
            wait.recv().unwrap();
        });
        let tid = rx.recv().unwrap();
        assert!(filter.follows(tid).unwrap(), "a thread started by a followed one");
        go.send(()).unwrap();
        child.join().unwrap();
        // Joined; the join may return before the exit's tracepoint ran
        // (older kernels wake the joiner first), so it is asked again.
        let forgotten = (0..1000).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(1));
            !filter.follows(tid).unwrap()
        });
        assert!(forgotten, "an exited thread is forgotten");
        filter.forget(me).unwrap();
        assert!(!filter.follows(me).unwrap());
    }
}
