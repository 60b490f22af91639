//! `--affinity`: each worker pins itself (sched_setaffinity on its own
//! thread, or in its own process after the fork) before it reaches the
//! start gate, so the whole window runs placed. A worker that cannot pin
//! says so in the arena's header and runs on; the coordinator fails the
//! point once every worker has arrived, before the window opens.

use crate::family::lock::workload::shared::Header;
use crate::model::lock::Point;
use anyhow::{bail, Result};
use std::sync::atomic::Ordering::Relaxed;

/// The CPU of each worker of `point` (None: unpinned), drawn from the
/// CPUs the calling thread may use, the coordinator's, which is never
/// pinned itself.
pub(super) fn plan(point: &Point) -> Result<Vec<Option<usize>>> {
    let n = point.workers as usize;
    if point.affinity.is_none() {
        return Ok(vec![None; n]);
    }
    let cpus = locks::sys::sched::allowed_cpus().unwrap_or_default();
    if cpus.is_empty() {
        bail!("--affinity {}: the kernel would not say which CPUs contend may use", point.affinity);
    }
    Ok((0..n).map(|i| point.affinity.cpu_of(i, &cpus)).collect())
}

/// Pins the calling worker `me` where `plan` put it; a failure is noted
/// in the header (the first one wins), for [`check`].
pub(super) fn pin(header: &Header, plan: &[Option<usize>], me: usize) {
    let Some(cpu) = plan.get(me).copied().flatten() else { return };
    if let Err(e) = locks::sys::sched::pin_current_thread(&[cpu]) {
        let errno = e.raw_os_error().unwrap_or(nix::libc::EINVAL);
        if header.pin_errno.compare_exchange(0, errno, Relaxed, Relaxed).is_ok() {
            header.pin_failed.store(me as u32, Relaxed);
        }
    }
}

/// Fails the point if a worker could not pin itself: a placement not
/// made is not the one the row would claim.
pub(super) fn check(header: &Header, plan: &[Option<usize>]) -> Result<()> {
    match header.pin_errno.load(Relaxed) {
        0 => Ok(()),
        errno => {
            let me = header.pin_failed.load(Relaxed) as usize;
            let cpu = plan.get(me).copied().flatten().map_or("?".into(), |c| c.to_string());
            bail!(
                "--affinity: worker {me} could not be pinned to CPU {cpu} ({}); is the CPU online and in \
                 contend's cpuset?",
                std::io::Error::from_raw_os_error(errno)
            )
        }
    }
}
