//! The profile's table: one record per mutex, split into the part every
//! acquisition touches ([`Hot`]) and the rest ([`Cold`]), at the same index
//! of two static arrays, with the wait histogram's bucket arithmetic. What
//! each pthread call records in it is the parent module's.

use crate::stack::{Frames, DEPTH};
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};

/// Records in the table.
pub const SLOTS: usize = 4096;
/// Histogram buckets: 8 per power of two (12.5% wide) over 64 powers.
const SUB: usize = 8;
pub(super) const BUCKETS: usize = 64 * SUB;
/// Stacks kept per mutex: a mutex contended from more places than that
/// is usually contended mostly from a few, and the first ones seen are
/// those (the rest are counted in [`Record::other_stacks`]).
pub const STACKS: usize = 4;

/// The contended acquisitions of one mutex from one stack.
pub struct Stack {
    /// Innermost first (free while empty).
    pub frames: Frames,
    pub count: AtomicU64,
    pub wait_ns: AtomicU64,
}

impl Stack {
    #[allow(clippy::declare_interior_mutable_const)]
    const EMPTY: Stack =
        Stack { frames: Frames::EMPTY, count: AtomicU64::new(0), wait_ns: AtomicU64::new(0) };
}

/// Releases of one mutex from one place (an unlock, or a condition wait
/// that releases it) while other threads waited for it: the holder's side
/// of contention.
pub struct Holder {
    /// The release site and its callers (the walk happens once, when the
    /// site is first seen releasing to waiters); free while empty.
    pub frames: Frames,
    /// Releases with waiters.
    pub releases: AtomicU64,
    /// The holds those releases ended, ns.
    pub held_ns: AtomicU64,
    /// The waits those releases ended, ns: each contended acquisition's
    /// wait is charged to the release just before it.
    pub caused_ns: AtomicU64,
}

impl Holder {
    #[allow(clippy::declare_interior_mutable_const)]
    const EMPTY: Holder = Holder {
        frames: Frames::EMPTY,
        releases: AtomicU64::new(0),
        held_ns: AtomicU64::new(0),
        caused_ns: AtomicU64::new(0),
    };
}

/// Release sites kept per mutex.
pub const HOLDERS: usize = 4;
/// Call sites besides the first whose first stack a record keeps.
pub const SITES: usize = 3;
/// `last_release` values besides a holder's index + 1.
pub(super) const RELEASED_UNKNOWN: usize = 0;
pub(super) const RELEASED_OTHER: usize = HOLDERS + 1;

/// What every acquisition and release of a mutex touches, apart from the
/// rest of its record and packed in one cache line: a program that locks
/// thousands of mutexes at random (sysbench's mutex test) then walks a
/// dense 256 KiB array instead of one page of a large record each time
/// (with whole records, the profile made that test 1.23x slower; with 64
/// mutexes, 1.08x).
#[repr(align(64))]
pub struct Hot {
    /// The mutex's address (0: free).
    pub key: AtomicUsize,
    pub acquisitions: AtomicU64,
    pub holds: AtomicU64,
    pub hold_ns: AtomicU64,
    /// When the current hold began (0: not held through a profiled lock).
    pub(super) hold_start: AtomicU64,
    /// Threads waiting for it now (atomic: waiters do not hold it).
    pub(super) waiting: AtomicU32,
    /// The call site of the last acquisition that looked for a new site
    /// (see `profile::acquired_at`).
    pub(super) last_site: AtomicUsize,
    /// The call site of the contended acquisition that began the current
    /// hold (0: it did not wait), for `profile::end`'s parking test.
    pub(super) waited_at: AtomicUsize,
}

// The hot part fills its cache line and no more.
const _: () = assert!(std::mem::size_of::<Hot>() == 64);

impl Hot {
    #[allow(clippy::declare_interior_mutable_const)]
    const EMPTY: Hot = Hot {
        key: AtomicUsize::new(0),
        acquisitions: AtomicU64::new(0),
        holds: AtomicU64::new(0),
        hold_ns: AtomicU64::new(0),
        hold_start: AtomicU64::new(0),
        waiting: AtomicU32::new(0),
        last_site: AtomicUsize::new(0),
        waited_at: AtomicUsize::new(0),
    };
}

impl crate::slots::Slot for Hot {
    fn key(&self) -> &AtomicUsize {
        &self.key
    }
}

/// The rest of a mutex's counts: what contended acquisitions and releases
/// to waiters touch, and its names.
pub struct Cold {
    /// The return address of its first acquisition.
    pub site: AtomicUsize,
    /// The stack of its first acquisition.
    pub first_stack: Frames,
    /// The first stack from each other call site, as many as fit: so that
    /// every name a profile may print for it (the function of any call
    /// site, contended or not) is in every execution's report.
    pub sites: [Frames; SITES],
    /// glibc's kind field at the first acquisition.
    pub kind: AtomicI32,
    pub contended: AtomicU64,
    /// Try-locks that failed (the program's own).
    pub try_failed: AtomicU64,
    /// Condition waits that released and re-took it.
    pub cond_waits: AtomicU64,
    pub wait_ns: AtomicU64,
    pub max_wait_ns: AtomicU64,
    pub(super) hist: [AtomicU64; BUCKETS],
    /// The contended acquisitions by stack (not in the overflow record).
    pub stacks: [Stack; STACKS],
    /// Contended acquisitions from stacks beyond [`STACKS`], and their
    /// wait.
    pub other_stacks: AtomicU64,
    pub other_stacks_wait_ns: AtomicU64,
    /// Who released it last with waiters: a holder's index + 1,
    /// [`RELEASED_OTHER`], or [`RELEASED_UNKNOWN`].
    pub(super) last_release: AtomicUsize,
    /// Its releases to waiters by site.
    pub holders: [Holder; HOLDERS],
    /// Releases to waiters from sites beyond [`HOLDERS`]: count, holds,
    /// waits caused.
    pub other_holders: [AtomicU64; 3],
    /// Waits whose releaser is not known (the release came before the
    /// waiter said it waits), ns.
    pub unattributed_ns: AtomicU64,
    /// The wait of the contended acquisition that began the current hold,
    /// ns (read only when [`Hot::waited_at`] is set).
    pub(super) pending_wait_ns: AtomicU64,
    /// Contended acquisitions whose section was empty (parking: see
    /// `profile::empty_section`).
    pub parked: AtomicU64,
    /// Their wait, ns.
    pub parked_wait_ns: AtomicU64,
}

impl Cold {
    // Only ever the initializer of the static table's elements, each a
    // fresh copy; never read through as a shared constant.
    #[allow(clippy::declare_interior_mutable_const)]
    const EMPTY: Cold = Cold {
        site: AtomicUsize::new(0),
        first_stack: Frames::EMPTY,
        sites: [const { Frames::EMPTY }; SITES],
        kind: AtomicI32::new(0),
        contended: AtomicU64::new(0),
        try_failed: AtomicU64::new(0),
        cond_waits: AtomicU64::new(0),
        wait_ns: AtomicU64::new(0),
        max_wait_ns: AtomicU64::new(0),
        hist: [const { AtomicU64::new(0) }; BUCKETS],
        stacks: [const { Stack::EMPTY }; STACKS],
        other_stacks: AtomicU64::new(0),
        other_stacks_wait_ns: AtomicU64::new(0),
        last_release: AtomicUsize::new(RELEASED_UNKNOWN),
        holders: [const { Holder::EMPTY }; HOLDERS],
        other_holders: [const { AtomicU64::new(0) }; 3],
        unattributed_ns: AtomicU64::new(0),
        pending_wait_ns: AtomicU64::new(0),
        parked: AtomicU64::new(0),
        parked_wait_ns: AtomicU64::new(0),
    };

    /// The wait below which `q` (0..1) of the contended acquisitions
    /// waited, ns: the upper edge of the bucket it falls in.
    pub fn wait_quantile(&self, q: f64) -> u64 {
        let n = self.contended.load(Relaxed);
        if n == 0 {
            return 0;
        }
        let want = ((n as f64 * q).ceil() as u64).max(1);
        let mut seen = 0;
        for (b, c) in self.hist.iter().enumerate() {
            seen += c.load(Relaxed);
            if seen >= want {
                return upper_edge(b).min(self.max_wait_ns.load(Relaxed));
            }
        }
        self.max_wait_ns.load(Relaxed)
    }

    /// The non-empty buckets of the contended waits: (upper edge ns,
    /// count), the last edge capped by the largest wait.
    pub fn wait_buckets(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let max = self.max_wait_ns.load(Relaxed);
        self.hist.iter().enumerate().filter_map(move |(b, c)| {
            let n = c.load(Relaxed);
            (n != 0).then(|| (upper_edge(b).min(max), n))
        })
    }
}

/// One mutex's record: its hot part and the rest, side by side in two
/// tables ([`HOT`], [`COLD`]) at the same index; the cold part's fields
/// read through it directly.
#[derive(Clone, Copy)]
pub struct Record {
    /// What every acquisition touches.
    pub hot: &'static Hot,
    cold: &'static Cold,
    /// The overflow record, shared by mutexes that found no slot.
    overflow: bool,
}

impl std::ops::Deref for Record {
    type Target = Cold;
    fn deref(&self) -> &Cold {
        self.cold
    }
}

impl Record {
    /// The record at index `i` of the tables ([`SLOTS`]: the overflow
    /// record).
    #[inline(always)]
    pub fn at(i: usize) -> Record {
        Record { hot: &HOT[i], cold: &COLD[i], overflow: i == SLOTS }
    }

    /// A record of its own, outside the tables (the tables are the
    /// process's profile).
    #[cfg(test)]
    pub(super) fn leaked() -> Record {
        Record {
            hot: Box::leak(Box::new(Hot::EMPTY)),
            cold: Box::leak(Box::new(Cold::EMPTY)),
            overflow: false,
        }
    }

    /// The mutex's address (0: a free slot).
    pub fn key(&self) -> usize {
        self.hot.key.load(Relaxed)
    }

    /// The overflow record, shared by mutexes that found no slot.
    pub(super) fn is_overflow(&self) -> bool {
        self.overflow
    }

    /// Adds `v` to one of this record's counts: a plain load and store
    /// (the mutex orders its holders), except in the overflow record,
    /// which unrelated mutexes update at once.
    pub(super) fn add(&self, field: &AtomicU64, v: u64) {
        if self.is_overflow() {
            field.fetch_add(v, Relaxed);
        } else {
            field.store(field.load(Relaxed).wrapping_add(v), Relaxed);
        }
    }

    /// Zeroes the counts (a forked child starts its own profile).
    pub(super) fn clear(&self) {
        for f in [
            &self.hot.acquisitions,
            &self.contended,
            &self.try_failed,
            &self.cond_waits,
            &self.wait_ns,
            &self.max_wait_ns,
            &self.hot.holds,
            &self.hot.hold_ns,
            &self.other_stacks,
            &self.other_stacks_wait_ns,
            &self.unattributed_ns,
            &self.parked,
            &self.parked_wait_ns,
        ]
        .into_iter()
        .chain(&self.other_holders)
        {
            f.store(0, Relaxed);
        }
        self.last_release.store(RELEASED_UNKNOWN, Relaxed);
        self.hot.waited_at.store(0, Relaxed);
        for h in &self.holders {
            h.frames.store(&[0; DEPTH]);
            for f in [&h.releases, &h.held_ns, &h.caused_ns] {
                f.store(0, Relaxed);
            }
        }
        self.hist.iter().for_each(|c| c.store(0, Relaxed));
        for st in &self.stacks {
            st.frames.store(&[0; DEPTH]);
            st.count.store(0, Relaxed);
            st.wait_ns.store(0, Relaxed);
        }
    }

    /// Counts a contended acquisition from `frames` that waited `w` ns.
    /// Called by the thread that now holds the mutex (so plain stores, as
    /// for the other counts); never on the overflow record.
    pub(super) fn add_stack(&self, frames: &[usize; DEPTH], w: u64) {
        let known = frames[0] != 0;
        let slot = known.then_some(()).and_then(|()| {
            self.stacks.iter().find(|st| st.frames.is(frames)).or_else(|| {
                let free = self.stacks.iter().find(|st| st.frames.first() == 0)?;
                free.frames.store(frames);
                Some(free)
            })
        });
        match slot {
            Some(st) => {
                self.add(&st.count, 1);
                self.add(&st.wait_ns, w);
            }
            None => {
                self.add(&self.other_stacks, 1);
                self.add(&self.other_stacks_wait_ns, w);
            }
        }
    }
}

/// The hot parts without the overflow record's.
#[inline(always)]
pub(super) fn slots() -> &'static [Hot; SLOTS] {
    HOT.first_chunk().expect("the table holds SLOTS records and one more")
}

/// The records' hot parts, then the overflow record's.
pub static HOT: [Hot; SLOTS + 1] = [const { Hot::EMPTY }; SLOTS + 1];
/// The records' other parts, at the same indexes.
pub static COLD: [Cold; SLOTS + 1] = [const { Cold::EMPTY }; SLOTS + 1];

/// The histogram bucket of a wait of `ns`.
pub(super) fn bucket(ns: u64) -> usize {
    if ns < SUB as u64 {
        return ns as usize;
    }
    let power = 63 - ns.leading_zeros() as usize; // >= 3
    let sub = ((ns >> (power - 3)) & (SUB as u64 - 1)) as usize;
    (power - 2) * SUB + sub
}

/// The largest wait in bucket `b`, ns.
fn upper_edge(b: usize) -> u64 {
    if b < SUB {
        return b as u64;
    }
    let power = b / SUB + 2;
    let sub = (b % SUB) as u64;
    ((SUB as u64 + sub + 1) << (power - 3)) - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_wait_falls_in_a_bucket_whose_edge_bounds_it() {
        let mut last = 0;
        for ns in (0..200_000u64).chain([1 << 30, (1 << 40) + 12345, u64::MAX / 2]) {
            let b = bucket(ns);
            assert!(b < BUCKETS && b >= last, "{ns}: bucket {b} after {last}");
            assert!(upper_edge(b) >= ns, "{ns} above the edge of bucket {b}");
            if b > 0 {
                assert!(upper_edge(b - 1) < ns, "{ns} fits bucket {} already", b - 1);
            }
            last = b;
        }
        // 12.5% wide: the edge is within an eighth of any value in it.
        for ns in [1_000u64, 77_777, 5_000_000] {
            assert!(upper_edge(bucket(ns)) as f64 <= ns as f64 * 1.125, "{ns}");
        }
    }
}
