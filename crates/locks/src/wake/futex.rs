//! A futex word per direction: post stores 1 and calls FUTEX_WAKE; wait
//! takes the 1 back with an exchange, and sleeps in FUTEX_WAIT while the
//! word is 0. Post always makes the wake syscall, as a bare futex
//! ping-pong does: that syscall is part of what is measured. Generic over
//! [`Futex`], so the same protocol runs on FUTEX_*_PRIVATE, shared futexes
//! and futex2.

use super::{Channel, ChannelConfig};
use crate::sys::futex_api::Futex;
use std::io;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU32, Ordering};

/// A futex word; `F` picks private, shared or futex2 operations.
pub struct FutexChannel<F> {
    word: AtomicU32,
    ops: PhantomData<F>,
}

impl<F: Futex> Channel for FutexChannel<F> {
    // Whether it works across processes depends on `F`: the registry pairs
    // the shared operations with process mode.
    const PROCESS_SHARED: bool = true;

    fn new(_: &ChannelConfig) -> io::Result<Self> {
        Ok(Self { word: AtomicU32::new(0), ops: PhantomData })
    }

    #[inline]
    fn post(&self) {
        // Release: what the poster wrote before (its timestamp) is visible
        // to the waiter that takes the 1.
        self.word.store(1, Ordering::Release);
        F::wake(&self.word, 1);
    }

    #[inline]
    fn wait(&self) {
        while self.word.swap(0, Ordering::Acquire) == 0 {
            // Sleeps only if the word is still 0; a post in between makes
            // the kernel return at once (EAGAIN) and the loop re-checks.
            F::wait(&self.word, 0);
        }
    }
}
