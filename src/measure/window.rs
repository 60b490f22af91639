//! The probes read at the start and end of a measured window.

use super::cpu::{CpuSplit, CpuTicks};
use super::futex::{FutexCounters, FutexCounts};
use super::rusage::{ProcessUsage, RusageSnapshot};
use anyhow::{Context, Result};

/// Everything measured around one window.
#[derive(Debug)]
pub struct Probes<'a> {
    futex: Option<&'a FutexCounters>,
}

/// Probe readings taken at the start of the window.
#[derive(Debug)]
pub struct ProbeStart {
    cpu: CpuTicks,
    rusage: RusageSnapshot,
    futex: Option<FutexCounts>,
}

/// What the probes saw during the window.
#[derive(Debug, Clone, Copy)]
pub struct WindowDelta {
    /// System-wide CPU split.
    pub cpu: CpuSplit,
    /// This process's usage.
    pub process: ProcessUsage,
    /// Futex syscalls, when countable.
    pub futex: Option<FutexCounts>,
}

impl<'a> Probes<'a> {
    /// Probes with futex counting when `futex` is given; its counters must
    /// have been opened before the workers started.
    pub fn new(futex: Option<&'a FutexCounters>) -> Self {
        Self { futex }
    }

    /// Reads the start values.
    pub fn begin(&self) -> Result<ProbeStart> {
        Ok(ProbeStart {
            cpu: CpuTicks::read().context("reading /proc/stat")?,
            rusage: RusageSnapshot::read().context("getrusage")?,
            futex: self.read_futex()?,
        })
    }

    /// Returns the deltas since `start`.
    pub fn end(&self, start: ProbeStart) -> Result<WindowDelta> {
        let futex = self
            .read_futex()?
            .zip(start.futex)
            .map(|(end, begin)| end - begin);
        let rusage = RusageSnapshot::read().context("getrusage")?;
        let cpu = CpuTicks::read().context("reading /proc/stat")?;
        Ok(WindowDelta {
            cpu: start.cpu.split_until(&cpu),
            process: start.rusage.until(&rusage),
            futex,
        })
    }

    fn read_futex(&self) -> Result<Option<FutexCounts>> {
        self.futex
            .map(|f| f.read().context("reading the futex counters"))
            .transpose()
    }
}
