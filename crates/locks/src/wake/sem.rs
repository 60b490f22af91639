//! Semaphores as channels: a POSIX `sem_t` (sem_post / sem_wait) and one
//! semaphore of a SysV set (semop +1 / -1), each starting at 0.

use super::{Channel, ChannelConfig};
use crate::sys::posix_sem::Semaphore;
use crate::sys::sysv_sem::Sem;
use std::io;

/// An unnamed POSIX semaphore (pshared in process mode).
pub struct PosixSemChannel(Semaphore);

impl Channel for PosixSemChannel {
    const PROCESS_SHARED: bool = true;

    fn new(config: &ChannelConfig) -> io::Result<Self> {
        Ok(Self(Semaphore::new(0, config.shared)))
    }

    #[inline]
    fn post(&self) {
        self.0.post();
    }

    #[inline]
    fn wait(&self) {
        self.0.wait();
    }
}

/// One semaphore of the run's SysV set, as svsematest uses them. SysV ids
/// are system-wide, so the same object serves threads and processes.
pub struct SysvSemChannel(Sem);

impl Channel for SysvSemChannel {
    const PROCESS_SHARED: bool = true;

    fn new(config: &ChannelConfig) -> io::Result<Self> {
        let (id, index) = config.sysv.ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "a SysV channel needs a semaphore set")
        })?;
        Sem::init(id, index, 0).map(Self)
    }

    #[inline]
    fn post(&self) {
        self.0.post();
    }

    #[inline]
    fn wait(&self) {
        self.0.wait();
    }
}
