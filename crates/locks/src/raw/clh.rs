//! `clh`: the CLH queue lock.
//!
//! | word | meaning |
//! |------|---------|
//! | `tail` | the node of the last thread to arrive (initially a released dummy) |
//! | node.`locked` | true while its owner holds or waits for the lock |
//!
//! Origin: Craig (1993) and Magnussen, Landin and Hagersten (1994). A thread
//! swaps its node into `tail` and spins on its predecessor's flag; unlocking
//! clears its own flag. Nodes migrate: after unlocking, a thread takes its
//! predecessor's node for its next acquisition, so each acquisition uses a
//! fresh queue node and nothing is freed while queued.
//!
//! Known failure mode: FIFO handoff to preempted threads, as `ticket` and
//! `mcs`; and each waiter spins on a node another thread last wrote, which
//! on NUMA machines is remote memory.

use crate::primitive::{spin_loop, AtomicBool, AtomicPtr, Ordering};
use crate::{Caps, LockConfig, LockStats, RawLock};
use std::cell::Cell;

#[derive(Debug)]
struct ClhNode {
    locked: AtomicBool,
}

fn new_node(locked: bool) -> *mut ClhNode {
    Box::into_raw(Box::new(ClhNode { locked: AtomicBool::new(locked) }))
}

/// A thread's handle: the node it will enqueue next and, while it holds the
/// lock, its predecessor's node (which becomes its next node).
#[derive(Debug)]
pub struct ClhHandle {
    mine: Cell<*mut ClhNode>,
    pred: Cell<*mut ClhNode>,
}

impl Default for ClhHandle {
    fn default() -> Self {
        Self { mine: Cell::new(new_node(false)), pred: Cell::new(std::ptr::null_mut()) }
    }
}

impl Drop for ClhHandle {
    fn drop(&mut self) {
        // SAFETY: when the handle is idle its node is not in the queue (it
        // was taken from a predecessor that nobody references any more), and
        // the handle owns it.
        unsafe { drop(Box::from_raw(self.mine.get())) };
    }
}

/// A CLH lock; see the module docs.
#[derive(Debug)]
pub struct Clh {
    tail: AtomicPtr<ClhNode>,
}

impl Drop for Clh {
    fn drop(&mut self) {
        // SAFETY: with nobody holding or waiting, the tail node is the last
        // released node, which no handle owns.
        unsafe { drop(Box::from_raw(self.tail.load(Ordering::Relaxed))) };
    }
}

// SAFETY: a thread returns from `lock` only after its predecessor cleared
// its flag (Release, read with Acquire); each node has at most one
// successor because `tail` is swapped atomically.
unsafe impl RawLock for Clh {
    type Node = ClhHandle;
    const CAPS: Caps = Caps { counters: true, fifo: true, ..Caps::PLAIN };

    fn new(_config: &LockConfig) -> Self {
        Self { tail: AtomicPtr::new(new_node(false)) }
    }

    #[inline]
    fn lock(&self, handle: &ClhHandle, stats: &mut LockStats) {
        let me = handle.mine.get();
        // SAFETY: `me` is owned by this handle and not in the queue.
        unsafe { (*me).locked.store(true, Ordering::Relaxed) };
        let pred = self.tail.swap(me, Ordering::AcqRel);
        // SAFETY: `pred` stays allocated until its owner takes it over,
        // which happens only after we release (we are its only successor).
        while unsafe { (*pred).locked.load(Ordering::Acquire) } {
            stats.add_spins(1);
            spin_loop();
        }
        handle.pred.set(pred);
    }

    #[inline]
    unsafe fn unlock(&self, handle: &ClhHandle, _stats: &mut LockStats) {
        let me = handle.mine.get();
        // SAFETY: our node is alive (our successor, if any, spins on it).
        unsafe { (*me).locked.store(false, Ordering::Release) };
        // Our node now belongs to the successor (or the tail); take the
        // predecessor's, which nobody references any more.
        handle.mine.set(handle.pred.get());
    }
}
