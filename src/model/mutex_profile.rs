//! What `contend run --profile` says of each lock of a program: a
//! mutex's counts, stacks and holders, its kernel waits, the rwlocks and
//! spinlocks counted apart, and the `pthread_mutex_init` calls by what
//! became of the mutex; with the conversions from the interposer's
//! report (`locks::in_mutex::report`). Re-exported by `model::program`,
//! of which it is the profile's part.

use serde::Serialize;
/// `pthread_mutex_init` calls, by what became of the mutex.
#[derive(Debug, Clone, Copy, Default, Serialize, schemars::JsonSchema)]
pub struct MutexInits {
    /// Holding the swapped lock.
    pub swapped: u64,
    /// Left to glibc: recursive.
    pub recursive: u64,
    /// Left to glibc: error-checking.
    pub errorcheck: u64,
    /// Left to glibc: robust.
    pub robust: u64,
    /// Left to glibc: priority-inheritance or priority-protected.
    pub pi_or_pp: u64,
    /// Left to glibc: process-shared.
    pub pshared: u64,
}

/// One mutex's acquisitions and waits, as the interposer counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct MutexCounts {
    /// Acquisitions (lock, successful try-lock and timed lock, and the
    /// re-acquisition at the end of a condition wait).
    pub acquisitions: u64,
    /// Of those, the ones that had to wait: their first try-lock failed
    /// (the table's "had to wait").
    pub contended: u64,
    /// The program's own try-locks that failed.
    pub try_failed: u64,
    /// Condition waits that released and re-took it (each re-acquisition
    /// is also one of `acquisitions`; under glibc's condition variable its
    /// wait is inside glibc, and shows only in `kernel_waits`).
    pub cond_waits: u64,
    /// Time the contended acquisitions waited, ns.
    pub wait_ns: u64,
    /// The longest, ns.
    pub max_wait_ns: u64,
    /// Median wait of the contended acquisitions, ns (to 12.5%).
    pub p50_wait_ns: u64,
    /// 99th percentile, ns (to 12.5%).
    pub p99_wait_ns: u64,
}

/// The export's counts of a mutex, from the report's line (which also
/// carries its address, kind, site and holds, kept elsewhere in
/// [`MutexProfile`]).
impl From<&locks::in_mutex::report::ReportedCounts> for MutexCounts {
    fn from(c: &locks::in_mutex::report::ReportedCounts) -> Self {
        MutexCounts {
            acquisitions: c.acquisitions,
            contended: c.contended,
            try_failed: c.try_failed,
            cond_waits: c.cond_waits,
            wait_ns: c.wait_ns,
            max_wait_ns: c.max_wait_ns,
            p50_wait_ns: c.p50_wait_ns,
            p99_wait_ns: c.p99_wait_ns,
        }
    }
}

/// One mutex of one process, as `--profile` saw it.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct MutexProfile {
    /// The process.
    pub pid: u32,
    /// Its name (its comm: the kernel's, up to 15 bytes).
    pub comm: String,
    /// The mutex's address in it (0: the mutexes beyond the interposer's
    /// table, together).
    pub address: u64,
    /// The call site of its first acquisition, symbolized where the
    /// module has symbols (`function (file:line)`), else `module+0xoffset`.
    pub site: String,
    /// Where it is contended: the site of its most-waited stack, past
    /// the wrapper frames it shares with other mutexes (a function that
    /// locks several mutexes for several callers, as pigz's `possess`);
    /// when it never waited, the same of its first acquisition's stack.
    pub waits_at: String,
    /// Its contended acquisitions by stack, most waited first (up to four
    /// stacks; an entry without frames counts the others together), as
    /// sampled (see [`StackProfile::contended`]).
    pub stacks: Vec<StackProfile>,
    /// The stack of its first acquisition (its counts are 0).
    pub first_stack: Option<StackProfile>,
    /// The first stack of its acquisitions from each other call site,
    /// contended or not (up to three; counts 0): where else it is
    /// locked, so that any of those places names it for `--lock` and
    /// `--what-if`.
    pub other_sites: Vec<StackProfile>,
    /// The holders' side: its releases while others waited, by release
    /// site (up to four; an entry without frames counts the others), most
    /// wait caused first.
    pub holders: Vec<HolderProfile>,
    /// Waits whose releaser is not known (a release that came between the
    /// waiter's failed try-lock and its saying that it waits), ns.
    pub unattributed_wait_ns: u64,
    /// Parking: contended acquisitions whose section was empty (the
    /// thread released the mutex, or went into a condition wait on it,
    /// with nothing but the call's arguments in between). A thread that
    /// waits only to let go waits for a turn it has no use for: not
    /// contention (see [`MutexProfile::parking`]).
    pub parked_waits: u64,
    /// Their wait, ns.
    pub parked_wait_ns: u64,
    /// The module of the site, and the site's offset in it.
    pub module: String,
    /// Offset of the call (the return address less one) in the module.
    pub offset: u64,
    /// glibc's mutex kind (0 normal, 1 recursive, 2 error-checking, 3
    /// adaptive, plus robust 16, PI 32, PP 64, shared 128).
    pub kind: i32,
    /// Whether it held the swapped lock (false: glibc's mutex).
    pub swapped: bool,
    /// Its acquisitions and waits.
    #[serde(flatten)]
    pub counts: MutexCounts,
    /// Mean hold, from acquisition to unlock, ns.
    pub mean_hold_ns: f64,
    /// Times a thread blocked in the kernel on it: FUTEX_WAIT (or
    /// FUTEX_LOCK_PI) calls on its address, by any thread of its process,
    /// including the re-acquisitions inside glibc's condition wait. None
    /// when they could not be counted (the run's warnings say why). A
    /// swapped lock that waits elsewhere than the mutex's own word (mcs,
    /// on each waiter's node) shows 0.
    pub kernel_waits: Option<u64>,
    /// Its contended waits by size (buckets 12.5% wide; `value_ns` is a
    /// bucket's upper edge): what `contend plot` draws per top mutex.
    pub wait_histogram: Vec<crate::measure::latency::Bucket>,
}

impl MutexProfile {
    /// Whether the mutex is a parking place rather than a contended one:
    /// at least half of its wait was parking ([`MutexProfile::parked_waits`]).
    /// Shortening anyone's sections would not give its waiters more to
    /// do, so `--what-if top:N` and `--recommend` leave it out of their
    /// ranking (redis's io threads wait on their mutexes this way: the
    /// top three of its profile by wait).
    pub fn parking(&self) -> bool {
        self.parked_waits > 0 && self.parked_wait_ns.saturating_mul(2) >= self.counts.wait_ns
    }
}

/// The first `n` of `mutexes` (in their order) that are not parking, and
/// the parking ones met before those `n` were found: what a ranking
/// takes, and what it left out (`--what-if top:N`, `--recommend`).
pub fn first_not_parking<'a>(
    mutexes: impl IntoIterator<Item = &'a MutexProfile>,
    n: usize,
) -> (Vec<&'a MutexProfile>, Vec<&'a MutexProfile>) {
    let (mut chosen, mut parking) = (Vec::new(), Vec::new());
    for m in mutexes {
        if chosen.len() == n {
            break;
        }
        if m.parking() {
            parking.push(m);
        } else {
            chosen.push(m);
        }
    }
    (chosen, parking)
}

/// The program's sleeping futex calls over one execution.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct KernelWaitTotals {
    /// By every process of the program.
    pub all: u64,
    /// Of those, on the address of a mutex the profile saw.
    pub on_mutexes: u64,
    /// Calls the kernel could not record (its buffers were full): when not
    /// zero, every count is a lower bound.
    pub lost: u64,
}

/// One side of a rwlock (its readers or its writers), as `--profile` saw
/// it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SideProfile {
    /// Acquisitions (lock, successful try-lock and timed lock).
    pub acquisitions: u64,
    /// Of those, the ones whose first try-lock failed.
    pub contended: u64,
    /// The program's own try-locks that failed.
    pub try_failed: u64,
    /// Time the contended acquisitions waited, ns.
    pub wait_ns: u64,
    /// The longest, ns.
    pub max_wait_ns: u64,
}

/// The export's side of a rwlock or spinlock, from the report's.
impl From<&locks::in_mutex::report::SideCounts> for SideProfile {
    fn from(s: &locks::in_mutex::report::SideCounts) -> Self {
        SideProfile {
            acquisitions: s.acquisitions,
            contended: s.contended,
            try_failed: s.try_failed,
            wait_ns: s.wait_ns,
            max_wait_ns: s.max_wait_ns,
        }
    }
}

/// Whether a lock the profile counted apart from the mutexes is a rwlock
/// or a spinlock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RwKind {
    /// pthread_rwlock_t.
    Rwlock,
    /// pthread_spinlock_t (its holders count as writers).
    Spinlock,
}

/// One pthread rwlock or spinlock of one process, as `--profile` saw it
/// (always glibc's: nothing swaps them).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RwLockProfile {
    /// The process.
    pub pid: u32,
    /// Its address (0: the locks beyond the interposer's table, together).
    pub address: u64,
    /// A rwlock or a spinlock.
    pub kind: RwKind,
    /// The call site of its first acquisition, named as a mutex's site is.
    pub site: String,
    /// The stack of its first acquisition, innermost first, named.
    pub first_stack: Vec<String>,
    /// Its readers (0 for a spinlock).
    pub read: SideProfile,
    /// Its writers, or a spinlock's holders.
    pub write: SideProfile,
}

impl RwLockProfile {
    /// Both sides' wait, ns.
    pub fn wait_ns(&self) -> u64 {
        self.read.wait_ns + self.write.wait_ns
    }
}

/// The contended acquisitions of one mutex from one stack.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct StackProfile {
    /// Contended acquisitions from it whose stack was walked: all of a
    /// mutex's first 64 contended acquisitions, then one in 16 (a sample:
    /// the mutex's own counts are exact).
    pub contended: u64,
    /// Their total wait, ns.
    pub wait_ns: u64,
    /// The call site and its callers, innermost first, named (up to 8).
    pub frames: Vec<String>,
    /// How many of the first frames are wrappers (shared with other
    /// mutexes); `frames[wrappers]` is where it waits.
    pub wrappers: usize,
}

/// The releases of one mutex from one site while others waited for it:
/// whose critical section caused the waits.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct HolderProfile {
    /// Releases with at least one waiter.
    pub releases: u64,
    /// The holds those releases ended, ns.
    pub held_ns: u64,
    /// The waits those releases ended, ns: each contended acquisition's
    /// wait is charged to the release just before it (as Go's mutex
    /// profile charges the unlocker).
    pub caused_wait_ns: u64,
    /// The release site (an unlock, or a condition wait that released
    /// the mutex) and its callers, innermost first, named.
    pub frames: Vec<String>,
    /// How many of the first frames are wrappers; `frames[wrappers]` is
    /// where it held the mutex.
    pub wrappers: usize,
}

/// The order of the profile's table (`contend run --profile --sort`), as
/// `perf lock report -k` picks its key. Only the table's: `--what-if
/// top:N`, `--recommend` and the export keep the mutexes most waited-on
/// first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, clap::ValueEnum, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileSort {
    /// Total wait of the contended acquisitions.
    #[default]
    Wait,
    /// Acquisitions.
    Acquisitions,
    /// Acquisitions that had to wait.
    Contended,
    /// The longest single wait.
    MaxWait,
    /// Total hold: acquisitions times the mean hold.
    Held,
}

impl ProfileSort {
    /// `mutexes` ordered by this key, largest first (ties: by total
    /// wait, then acquisitions, the export's order).
    pub fn order(self, mutexes: &[MutexProfile]) -> Vec<&MutexProfile> {
        let key = |m: &MutexProfile| -> f64 {
            match self {
                ProfileSort::Wait => m.counts.wait_ns as f64,
                ProfileSort::Acquisitions => m.counts.acquisitions as f64,
                ProfileSort::Contended => m.counts.contended as f64,
                ProfileSort::MaxWait => m.counts.max_wait_ns as f64,
                ProfileSort::Held => m.mean_hold_ns * m.counts.acquisitions as f64,
            }
        };
        let mut v: Vec<&MutexProfile> = mutexes.iter().collect();
        // A stable sort keeps the export's order among equals.
        v.sort_by(|a, b| key(b).total_cmp(&key(a)));
        v
    }

    /// As the table's heading says it.
    pub fn words(self) -> &'static str {
        match self {
            ProfileSort::Wait => "total wait",
            ProfileSort::Acquisitions => "acquisitions",
            ProfileSort::Contended => "acquisitions that had to wait",
            ProfileSort::MaxWait => "longest wait",
            ProfileSort::Held => "total hold",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mutex(
        address: u64,
        acquisitions: u64,
        wait_ns: u64,
        max_wait_ns: u64,
        mean_hold_ns: f64,
    ) -> MutexProfile {
        MutexProfile {
            address,
            counts: MutexCounts {
                acquisitions,
                wait_ns,
                max_wait_ns,
                contended: acquisitions / 10,
                ..Default::default()
            },
            mean_hold_ns,
            ..Default::default()
        }
    }

    #[test]
    fn each_key_puts_its_largest_first_and_keeps_the_export_order_among_equals() {
        // As the export orders them: most waited-on first.
        let m = [mutex(1, 10, 900, 50, 1.0), mutex(2, 1000, 500, 400, 2.0), mutex(3, 10, 100, 90, 500.0)];
        let order = |k: ProfileSort| k.order(&m).iter().map(|m| m.address).collect::<Vec<_>>();
        assert_eq!(order(ProfileSort::Wait), [1, 2, 3]);
        assert_eq!(order(ProfileSort::Acquisitions), [2, 1, 3], "ties keep the export's order");
        assert_eq!(order(ProfileSort::Contended), [2, 1, 3]);
        assert_eq!(order(ProfileSort::MaxWait), [2, 3, 1]);
        assert_eq!(order(ProfileSort::Held), [3, 2, 1], "10 x 500 ns before 1000 x 2 ns");
    }
}
