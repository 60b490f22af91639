//! `mcs`: the MCS queue lock.
//!
//! | word | meaning |
//! |------|---------|
//! | `tail` = null | unlocked |
//! | `tail` = node | locked; `node` is the last thread in the queue |
//! | node.`locked` | true while that thread must wait; its predecessor clears it |
//! | node.`next` | the successor, linked after it swapped itself into `tail` |
//!
//! Origin: Mellor-Crummey and Scott, "Algorithms for Scalable
//! Synchronization on Shared-Memory Multiprocessors" (1991). Each waiter
//! spins on its own node's flag (a local cache line), and the unlocker hands
//! the lock to its successor directly: FIFO with one cache-line transfer per
//! handoff. The basis of Linux's qspinlock.
//!
//! Known failure mode: as `ticket`, FIFO handoff to a preempted thread:
//! with more threads than CPUs the successor is often not running and the
//! lock sits idle until the scheduler runs it; an unlocker whose successor
//! has swapped itself in but not yet linked must wait for the link.

use crate::primitive::{spin_loop, AtomicBool, AtomicPtr, Ordering};
use crate::{Caps, LockConfig, LockStats, RawLock, TryLock};
use std::ptr;

/// A waiter's queue node. The caller keeps it at a fixed address from
/// `lock` to `unlock` (the workload keeps one per worker on its stack).
#[derive(Debug)]
pub struct McsNode {
    next: AtomicPtr<McsNode>,
    locked: AtomicBool,
}

impl Default for McsNode {
    fn default() -> Self {
        Self { next: AtomicPtr::new(ptr::null_mut()), locked: AtomicBool::new(false) }
    }
}

/// An MCS lock; see the module docs.
#[derive(Debug)]
pub struct Mcs {
    tail: AtomicPtr<McsNode>,
}

impl Mcs {
    #[link_section = "contend_measured"] // crate docs: Placement
    fn enqueue_prepare(node: &McsNode) -> *mut McsNode {
        node.next.store(ptr::null_mut(), Ordering::Relaxed);
        node.locked.store(true, Ordering::Relaxed);
        node as *const McsNode as *mut McsNode
    }
}

// SAFETY: the thread whose swap found `tail` null, or whose `locked` flag
// its predecessor cleared (Release, observed with Acquire), holds the lock;
// each holder hands it to exactly one successor or resets `tail` to null.
unsafe impl RawLock for Mcs {
    type Node = McsNode;
    const CAPS: Caps = Caps { try_lock: true, counters: true, fifo: true, ..Caps::PLAIN };

    fn new(_config: &LockConfig) -> Self {
        Self { tail: AtomicPtr::new(ptr::null_mut()) }
    }

    #[inline]
    fn lock(&self, node: &McsNode, stats: &mut LockStats) {
        let me = Self::enqueue_prepare(node);
        let pred = self.tail.swap(me, Ordering::AcqRel);
        if pred.is_null() {
            return;
        }
        // SAFETY: `pred` is the node of the thread queued before us; it
        // cannot leave `unlock` before it has seen our link (it waits for
        // `next` when `tail` is not its own node), so it is alive here.
        unsafe { (*pred).next.store(me, Ordering::Release) };
        while node.locked.load(Ordering::Acquire) {
            stats.add_spins(1);
            spin_loop();
        }
    }

    #[inline]
    unsafe fn unlock(&self, node: &McsNode, stats: &mut LockStats) {
        let me = node as *const McsNode as *mut McsNode;
        let mut succ = node.next.load(Ordering::Acquire);
        if succ.is_null() {
            if self.tail.compare_exchange(me, ptr::null_mut(), Ordering::Release, Ordering::Relaxed).is_ok() {
                return;
            }
            // A successor swapped itself in but has not linked yet.
            loop {
                succ = node.next.load(Ordering::Acquire);
                if !succ.is_null() {
                    break;
                }
                stats.add_spins(1);
                spin_loop();
            }
        }
        // SAFETY: the successor is spinning on its node until this store, so
        // the node is alive.
        unsafe { (*succ).locked.store(false, Ordering::Release) };
    }
}

// SAFETY: swapping ourselves into an empty queue is an uncontended `lock`.
unsafe impl TryLock for Mcs {
    #[inline]
    fn try_lock(&self, node: &McsNode, _stats: &mut LockStats) -> bool {
        let me = Self::enqueue_prepare(node);
        self.tail.compare_exchange(ptr::null_mut(), me, Ordering::Acquire, Ordering::Relaxed).is_ok()
    }
}
