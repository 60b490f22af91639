//! When the holders' context switches are followed: the sampling rule
//! that bounds what the split costs a program that switches often.
//!
//! Every switch a followed thread makes costs it a record in the kernel
//! (and, into sleep, a kernel stack) and costs contend the reading. Each
//! [`CYCLE`] opens with a window in which they are followed, and the
//! window closes once it has read the cycle's share of [`BUDGET`] (never
//! before [`MIN_ON`]); a program that switches less is followed all the
//! time. Between windows the router is detached
//! (`TaskFilter::route_switches_now`). The budget is counted, not
//! predicted from the last window's rate: a burst, or the first cycle of
//! a busy program, costs no more than a quiet one. Measured on mariadbd
//! under sysbench (20,000-40,000 of its threads' switches a second),
//! following every switch cost 1.20-1.26x its time per operation
//! (docs/results/holder-state.md): the budget is what keeps it near the
//! view's own cost.
//!
//! A wait's time outside the windows is not split (`Split::unsampled`),
//! and the shares are of the time inside: an estimate of the whole,
//! sampled in time. As a window opens, the threads' states are read from
//! /proc (`observe`), so that a holder asleep through a whole window is
//! still known.

/// Switch records a second, on average, that are followed.
pub const BUDGET: f64 = 2_000.0;

/// The sampling period, ns: one window at the start of each.
pub const CYCLE: u64 = 500_000_000;

/// The shortest window, ns.
pub const MIN_ON: u64 = 10_000_000;

/// Switch records a window may read: the cycle's share of the budget.
const PER_CYCLE: u64 = (BUDGET * CYCLE as f64 / 1e9) as u64;

/// The windows' schedule and what they saw.
#[derive(Debug, Clone)]
pub struct Windows {
    on: bool,
    /// When the current cycle began.
    cycle_start: u64,
    /// When the current window opened (if on).
    opened: u64,
    /// Switch records read in this cycle.
    counted: u64,
    /// When following began.
    started: u64,
    /// Time followed, ns, in closed windows.
    followed_ns: u64,
    /// Switch records read in all.
    records: u64,
}

/// What the windows covered, for the report.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Coverage {
    /// Share of the view's time the switches were followed, 0..=1.
    pub followed: f64,
    /// Switch records a second while followed.
    pub rate: f64,
}

impl Windows {
    /// Following from `now`, on.
    pub fn new(now: u64) -> Self {
        Self { on: true, cycle_start: now, opened: now, counted: 0, started: now, followed_ns: 0, records: 0 }
    }

    /// At `now`, with `read` switch records read since the last call:
    /// whether to turn the router on (`Some(true)`) or off.
    pub fn tick(&mut self, now: u64, read: u64) -> Option<bool> {
        self.counted += read;
        self.records += read;
        if now >= self.cycle_start + CYCLE {
            (self.cycle_start, self.counted) = (now, 0);
            if self.on {
                // Still on: the next window goes on from here.
                self.followed_ns += now - self.opened;
                self.opened = now;
                return None;
            }
            (self.on, self.opened) = (true, now);
            return Some(true);
        }
        if self.on && self.counted >= PER_CYCLE && now >= self.opened + MIN_ON {
            self.on = false;
            self.followed_ns += now - self.opened;
            return Some(false);
        }
        None
    }

    /// What they covered up to `now`.
    pub fn coverage(&self, now: u64) -> Coverage {
        let open = if self.on { now.saturating_sub(self.opened) } else { 0 };
        let followed = self.followed_ns + open;
        Coverage {
            followed: followed as f64 / now.saturating_sub(self.started).max(1) as f64,
            rate: self.records as f64 / (followed.max(1) as f64 / 1e9),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn under_the_budget_the_switches_stay_followed() {
        let mut w = Windows::new(0);
        for t in (5..3000).step_by(5) {
            // 500 records a second: 2.5 a pass.
            assert_eq!(w.tick(t * MS, 2 + (t % 10 == 0) as u64), None, "at {t} ms");
        }
        let c = w.coverage(3000 * MS);
        assert!(c.followed > 0.99, "{c:?}");
        assert!((c.rate - 500.0).abs() < 20.0, "{c:?}");
    }

    #[test]
    fn over_the_budget_a_window_reads_the_cycles_share_of_it() {
        let mut w = Windows::new(0);
        let (mut on, mut on_ns, mut last, mut read_on) = (true, 0, 0, 0);
        for t in (5..5000).step_by(5) {
            let now = t * MS;
            if on {
                on_ns += now - last;
            }
            last = now;
            // 20,000 records a second while on: 100 a pass.
            let read = if on { 100 } else { 0 };
            read_on += read;
            if let Some(next) = w.tick(now, read) {
                assert_ne!(next, on, "a change at {t} ms");
                on = next;
            }
        }
        // 1,000 records a cycle: 50 ms of each 500 ms, the first included.
        assert!((450 * MS..=550 * MS).contains(&on_ns), "{on_ns}");
        assert!((9_000..=11_000).contains(&read_on), "{read_on}");
        let c = w.coverage(5000 * MS);
        assert!((0.09..0.11).contains(&c.followed), "{c:?}");
        assert!((c.rate - 20_000.0).abs() < 1000.0, "{c:?}");
    }

    #[test]
    fn a_window_is_never_shorter_than_the_minimum() {
        let mut w = Windows::new(0);
        // A burst far over the budget at once.
        assert_eq!(w.tick(MIN_ON - 1, 5_000_000), None);
        assert_eq!(w.tick(MIN_ON, 0), Some(false));
        assert_eq!(w.tick(CYCLE - 1, 0), None);
        assert_eq!(w.tick(CYCLE, 0), Some(true));
    }
}
