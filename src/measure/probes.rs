//! The probes read at the start and end of a measured window.

use crate::measure::children::ChildrenSnapshot;
use crate::measure::cpu::{CpuSplit, CpuTicks};
use crate::measure::futex::{FutexCounters, FutexCounts};
use crate::measure::rusage::{ProcessUsage, RusageSnapshot};
use anyhow::{Context, Result};
use nix::unistd::Pid;

/// Whose CPU time and context switches the window reports.
#[derive(Debug, Clone)]
pub enum UsageSource {
    /// This process (the workers are its threads).
    SelfProcess,
    /// These worker processes.
    Children(Vec<Pid>),
}

/// Everything measured around one window.
#[derive(Debug)]
pub struct Probes<'a> {
    futex: Option<&'a FutexCounters>,
    usage: UsageSource,
}

#[derive(Debug)]
enum UsageStart {
    Rusage(RusageSnapshot),
    Children(ChildrenSnapshot),
}

/// Probe readings taken at the start of the window.
#[derive(Debug)]
pub struct ProbeStart {
    cpu: CpuTicks,
    usage: UsageStart,
    futex: Option<FutexCounts>,
    coordinator: f64,
}

/// What the probes saw during the window.
#[derive(Debug, Clone, Copy)]
pub struct WindowDelta {
    /// System-wide CPU split.
    pub cpu: CpuSplit,
    /// The workers' usage.
    pub process: ProcessUsage,
    /// Futex syscalls, when countable.
    pub futex: Option<FutexCounts>,
    /// CPU time the coordinator thread itself used in the window (its
    /// polls, watch calls and the probes' end reads), s: the harness's
    /// own cost, NaN if it could not be read.
    pub coordinator_cpu_s: f64,
}

/// The calling thread's CPU time so far, s (getrusage RUSAGE_THREAD).
fn thread_cpu_s() -> f64 {
    use nix::sys::resource::{getrusage, UsageWho};
    getrusage(UsageWho::RUSAGE_THREAD).map_or(f64::NAN, |u| {
        let s = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 * 1e-6;
        s(u.user_time()) + s(u.system_time())
    })
}

impl<'a> Probes<'a> {
    /// Probes with futex counting when `futex` is given (its counters must
    /// have been opened before the workers started, so they inherit them).
    pub fn new(futex: Option<&'a FutexCounters>, usage: UsageSource) -> Self {
        Self { futex, usage }
    }

    fn read_usage(&self) -> Result<UsageStart> {
        Ok(match &self.usage {
            UsageSource::SelfProcess => UsageStart::Rusage(RusageSnapshot::read().context("getrusage")?),
            UsageSource::Children(pids) => UsageStart::Children(ChildrenSnapshot::read(pids)),
        })
    }

    /// Reads the start values.
    pub fn begin(&self) -> Result<ProbeStart> {
        Ok(ProbeStart {
            cpu: CpuTicks::read().context("reading /proc/stat")?,
            usage: self.read_usage()?,
            futex: self.read_futex()?,
            coordinator: thread_cpu_s(),
        })
    }

    /// Returns the deltas since `start`.
    pub fn end(&self, start: ProbeStart) -> Result<WindowDelta> {
        let futex = self.read_futex()?.zip(start.futex).map(|(end, begin)| end - begin);
        let process = match (start.usage, self.read_usage()?) {
            (UsageStart::Rusage(a), UsageStart::Rusage(b)) => a.until(&b),
            (UsageStart::Children(a), UsageStart::Children(b)) => a.until(&b),
            _ => unreachable!("the usage source does not change during a window"),
        };
        let cpu = CpuTicks::read().context("reading /proc/stat")?;
        Ok(WindowDelta {
            cpu: start.cpu.split_until(&cpu),
            process,
            futex,
            coordinator_cpu_s: thread_cpu_s() - start.coordinator,
        })
    }

    fn read_futex(&self) -> Result<Option<FutexCounts>> {
        self.futex.map(|f| f.read().context("reading the futex counters")).transpose()
    }
}
