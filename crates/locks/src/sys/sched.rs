//! Scheduling of the calling thread: real-time policy and priority, and
//! which CPU it runs on now, and which it may run on.

use std::io;

/// A scheduling policy a worker thread can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// SCHED_OTHER, the default time-sharing policy (priority 0).
    Other,
    /// SCHED_FIFO: real-time, runs until it blocks or a higher priority
    /// preempts it.
    Fifo,
    /// SCHED_RR: real-time with a round-robin time slice among equals.
    RoundRobin,
}

impl Policy {
    fn raw(self) -> libc::c_int {
        match self {
            Policy::Other => libc::SCHED_OTHER,
            Policy::Fifo => libc::SCHED_FIFO,
            Policy::RoundRobin => libc::SCHED_RR,
        }
    }

    /// The priorities the kernel accepts for this policy (1..=99 for the
    /// real-time ones, 0..=0 for SCHED_OTHER).
    pub fn priority_range(self) -> (i32, i32) {
        // SAFETY: both calls take a policy number and nothing else.
        unsafe { (libc::sched_get_priority_min(self.raw()), libc::sched_get_priority_max(self.raw())) }
    }
}

/// Sets the calling thread's policy and priority (pid 0 in
/// sched_setscheduler means the calling thread on Linux).
pub fn set_current_thread(policy: Policy, priority: i32) -> io::Result<()> {
    let param = libc::sched_param { sched_priority: priority };
    // SAFETY: `param` is a valid sched_param for the duration of the call.
    let r = unsafe { libc::sched_setscheduler(0, policy.raw(), &param) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The CPU the calling thread is running on right now (glibc reads it from
/// rseq, without a syscall).
#[inline]
pub fn current_cpu() -> i32 {
    // SAFETY: sched_getcpu takes no arguments.
    unsafe { libc::sched_getcpu() }
}

/// The CPUs the calling thread may run on, in order.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: an all-zero cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 is the
    // calling thread.
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: CPU_ISSET reads the set for indices below CPU_SETSIZE.
    Ok((0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect())
}

/// Restricts the calling thread to `cpus` (EINVAL for a CPU beyond the
/// set's size). The wakeup family pins its pair threads with this, and the
/// wake-cost measurement its two helpers.
pub fn pin_current_thread(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: an all-zero cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: CPU_SET writes inside the set: `cpu` is below CPU_SETSIZE.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 is the
    // calling thread.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
