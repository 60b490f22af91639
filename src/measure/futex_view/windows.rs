//! When the holders' context switches are followed: the sampling rule
//! that bounds what the split costs a program that switches often.
//!
//! Every switch a followed thread makes costs it a record in the kernel
//! (and, into sleep, a kernel stack) and costs contend the reading. Up
//! to [`BUDGET`] switch records a second they are all followed. Above
//! it, they are followed in one window at the start of each
//! [`CYCLE`], as long as the budget allows at the rate the last window
//! saw (never under [`MIN_ON`]); between windows the router returns at
//! once (`TaskFilter::route_switches_now`). Measured on mariadbd under
//! sysbench (about 20,000 of its threads' switches a second), following
//! every switch cost 1.20–1.26× its time per operation
//! (docs/results/holder-state.md): the budget is what keeps it near the
//! view's own cost.
//!
//! A wait's time outside the windows is not split (`Split::unsampled`),
//! and the shares are of the time inside: an estimate of the whole,
//! sampled in time.

/// Switch records a second followed in full.
pub const BUDGET: f64 = 2_000.0;

/// The sampling period, ns: one window at the start of each.
pub const CYCLE: u64 = 500_000_000;

/// The shortest window, ns.
pub const MIN_ON: u64 = 10_000_000;

/// The windows' schedule and what they saw.
#[derive(Debug, Clone)]
pub struct Windows {
    on: bool,
    /// When the current cycle began.
    cycle_start: u64,
    /// How long the switches stay followed in this cycle.
    on_for: u64,
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
        Self {
            on: true,
            cycle_start: now,
            on_for: CYCLE,
            opened: now,
            counted: 0,
            started: now,
            followed_ns: 0,
            records: 0,
        }
    }

    /// At `now`, with `read` switch records read since the last call:
    /// whether to turn the router on (`Some(true)`) or off.
    pub fn tick(&mut self, now: u64, read: u64) -> Option<bool> {
        self.counted += read;
        self.records += read;
        if now >= self.cycle_start + CYCLE {
            // The next cycle's window, from this one's rate.
            let on_ns = if self.on { now - self.opened } else { self.on_for };
            let rate = self.counted as f64 / (on_ns.max(1) as f64 / 1e9);
            let share = (BUDGET / rate.max(1.0)).min(1.0);
            self.on_for = ((CYCLE as f64 * share) as u64).max(MIN_ON);
            (self.cycle_start, self.counted) = (now, 0);
            if !self.on {
                self.on = true;
                self.opened = now;
                return Some(true);
            }
            // Always on: a new window from here.
            self.followed_ns += now - self.opened;
            self.opened = now;
            return None;
        }
        if self.on && self.on_for < CYCLE && now >= self.cycle_start + self.on_for {
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
    fn over_the_budget_a_window_covers_what_the_budget_allows() {
        let mut w = Windows::new(0);
        let (mut on, mut on_ns, mut last) = (true, 0, 0);
        for t in (5..5000).step_by(5) {
            let now = t * MS;
            if on {
                on_ns += now - last;
            }
            last = now;
            // 20,000 records a second while on: 100 a pass.
            let read = if on { 100 } else { 0 };
            if let Some(next) = w.tick(now, read) {
                assert_ne!(next, on, "a change at {t} ms");
                on = next;
            }
        }
        // The first cycle is all on; then 10% (50 ms of each 500 ms).
        let after_first = on_ns - 500 * MS;
        assert!((400 * MS..=500 * MS).contains(&after_first), "{after_first}");
        let c = w.coverage(5000 * MS);
        assert!((0.15..0.25).contains(&c.followed), "{c:?}");
        assert!((c.rate - 20_000.0).abs() < 1000.0, "{c:?}");
    }

    #[test]
    fn a_window_is_never_shorter_than_the_minimum() {
        let mut w = Windows::new(0);
        // 10 million a second: the budget would allow 0.01% of a cycle.
        assert_eq!(w.tick(CYCLE, 5_000_000), None);
        assert_eq!(w.tick(CYCLE + MIN_ON - 1, 0), None);
        assert_eq!(w.tick(CYCLE + MIN_ON, 0), Some(false));
        assert_eq!(w.tick(2 * CYCLE, 0), Some(true));
    }
}
