//! Descriptor channels: an eventfd (post writes 1 to its counter, wait
//! reads the counter back) and a pipe (one byte per post). Forked workers
//! inherit the descriptors, so both work between processes.

use super::{Channel, ChannelConfig};
use crate::sys::fd::{eventfd, pipe, raw, read_exact, write_all};
use std::io;
use std::os::fd::OwnedFd;

/// An eventfd counter.
pub struct EventFdChannel(OwnedFd);

impl Channel for EventFdChannel {
    const PROCESS_SHARED: bool = true;

    fn new(_: &ChannelConfig) -> io::Result<Self> {
        eventfd().map(Self)
    }

    #[inline]
    fn post(&self) {
        write_all(raw(&self.0), &1u64.to_ne_bytes()).expect("write to the eventfd");
    }

    #[inline]
    fn wait(&self) {
        let mut count = [0u8; 8];
        read_exact(raw(&self.0), &mut count).expect("read from the eventfd");
    }
}

/// A pipe: the poster writes one byte, the waiter reads it.
pub struct PipeChannel {
    read: OwnedFd,
    write: OwnedFd,
}

impl Channel for PipeChannel {
    const PROCESS_SHARED: bool = true;

    fn new(_: &ChannelConfig) -> io::Result<Self> {
        let (read, write) = pipe()?;
        Ok(Self { read, write })
    }

    #[inline]
    fn post(&self) {
        write_all(raw(&self.write), b"!").expect("write to the pipe");
    }

    #[inline]
    fn wait(&self) {
        let mut byte = [0u8; 1];
        read_exact(raw(&self.read), &mut byte).expect("read from the pipe");
    }
}
