//! The stall watchdog: fails a run with a diagnosis (lock word, who holds,
//! who waits) when no worker completes a critical section for the stall
//! timeout, instead of hanging with a broken lock.

use crate::family::lock::workload::shared::{LockArena, LockTable, HOLDING, IDLE, WAITING};
use crate::model::lock::Point;
use anyhow::{bail, Result};
use locks::RawLock;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

/// Watches the workers' progress; fails with a diagnosis when no critical
/// section has completed for the stall timeout.
pub(super) struct StallWatch {
    timeout: Duration,
    last_total: u64,
    last_change: Instant,
}

impl StallWatch {
    pub(super) fn new(timeout: Duration) -> Self {
        Self { timeout, last_total: 0, last_change: Instant::now() }
    }

    pub(super) fn check<L: RawLock>(
        &mut self,
        point: &Point,
        arena: &LockArena<L>,
        table: Option<&LockTable<L>>,
    ) -> Result<()> {
        // Before the gate opens nobody may take the lock: starting 1000
        // workers is not a stall.
        if !arena.header().gate.is_open() {
            self.last_change = Instant::now();
            return Ok(());
        }
        let rw = point.read_pct.is_some();
        let total: u64 = (0..arena.len()).map(|i| arena.slot(i).read(rw).acquisitions).sum();
        if total != self.last_total {
            self.last_total = total;
            self.last_change = Instant::now();
            return Ok(());
        }
        let stalled = self.last_change.elapsed();
        if stalled < self.timeout {
            return Ok(());
        }
        let in_state = |state: u32| {
            let who: Vec<String> = (0..arena.len())
                .filter(|&i| arena.slot(i).state.load(Relaxed) == state)
                .map(|i| i.to_string())
                .collect();
            match who.len() {
                0 => "none".to_string(),
                n if n > 12 => format!("workers {} ... ({n} in all)", who[..12].join(", ")),
                _ => format!("worker {}", who.join(", ")),
            }
        };
        let word = lock_words(arena, table);
        bail!(
            "lock `{}` stalled: no worker completed a critical section for {:.1} s \
             (--stall-timeout {}). Lock word: {word}; holding: {}; waiting: {}; idle: {}",
            point.lock,
            stalled.as_secs_f64(),
            crate::model::value::format_nanos(self.timeout.as_nanos() as u64),
            in_state(HOLDING),
            in_state(WAITING),
            in_state(IDLE)
        )
    }
}

/// The lock's state word for a diagnosis, in decimal and hex, or why
/// there is none (the lock keeps its state out of reach).
fn lock_word<L: RawLock>(lock: &L) -> String {
    lock.state_word().map_or("not readable".to_string(), |w| format!("{w} ({w:#x})"))
}

/// The state word of the run's lock, or of the first 8 of its locks
/// (`lock 0: 1 (0x1), lock 1: ...`) with --locks.
pub(super) fn lock_words<L: RawLock>(arena: &LockArena<L>, table: Option<&LockTable<L>>) -> String {
    match table {
        None => lock_word(arena.lock()),
        Some(t) => {
            let shown: Vec<String> =
                (0..t.len().min(8)).map(|i| format!("lock {i}: {}", lock_word(&t.slot(i).lock))).collect();
            let more = if t.len() > 8 { format!(", ... ({} locks)", t.len()) } else { String::new() };
            shown.join(", ") + &more
        }
    }
}
