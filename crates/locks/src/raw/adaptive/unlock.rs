//! The adaptive mutex's owner side: the unlock that decides, on the word
//! its own CAS replaces, whether to hand over, reserve, rotate or wake;
//! the bell; and the quantum.

use super::word::*;
use super::*;

impl<F: Futex, S: Layout> Adaptive<F, S> {
    /// The unlock of a word that holds more than state 1 (waiters, or a
    /// bit to clear), starting from `seen`, the word as last seen or
    /// guessed. Records in the node what it wrote and what its next lock
    /// does.
    #[inline(never)]
    #[link_section = "contend_measured"] // crate docs: Placement
    pub(super) fn unlock_slow(&self, seen: u32, node: &AdaptiveNode, stats: &mut LockStats) {
        // The state is 1 and only we change it, but counts change under us
        // (a sleeper may even become a spinner), so every branch decides
        // on the word the CAS will replace. The quantum is looked at once,
        // the first time someone sleeps.
        let mut over: Option<bool> = None;
        let mut w = if node.waited.replace(false) { self.await_giver(seen) } else { seen };
        loop {
            let mut rest = (w & !STATE & !WANT & !TICKS) | ((w + TICK) & TICKS);
            if sleepers(w) == 0 {
                // Nobody left to take a kept slot.
                rest &= !ROTATING;
            }
            let over_now =
                sleepers(w) > 0 && *over.get_or_insert_with(|| self.quantum_over(node, sleepers(w)));
            let (next, wake, retire) = if w == LOCKED {
                // The guess was a bare lock: nothing to decide.
                (UNLOCKED, false, false)
            } else if over_now && spinners(w) == 0 {
                // Our quantum is over and nobody spins: hand the lock to a
                // sleeper (it clears WAKING when it takes) and retire.
                (rest | HANDOFF, true, true)
            } else if w & WANT != 0 && spinners(w) + sleepers(w) > 0 {
                // A spinner's turn. If it turned sleeper since, wake a
                // sleeper to take it (unless one is on its way). If our
                // quantum is over, also wake one to take our place (the
                // slot is kept for it) and retire. (Waiting for the turn
                // rather than giving it early: a spinner that has not
                // asked looks rarely, and would leave the lock idle.) A
                // mark needs a sleeper of its own: ROTATING over a WAKING in
                // flight with one sleeper counted left one of the two with
                // nobody to claim it, and no later sleeper was ever woken
                // (hung at a stop, many spinners, 4 threads, 90% duty).
                let spare = sleepers(w) > u32::from(w & WAKING != 0);
                if spinners(w) == 0 {
                    let wake = w & (WAKING | ROTATING) == 0;
                    (rest | TO_WAITER | if wake { WAKING } else { 0 }, wake, false)
                } else if over_now && w & ROTATING == 0 && spare {
                    (rest | TO_WAITER | ROTATING, true, true)
                } else {
                    (rest | TO_WAITER, false, over_now)
                }
            } else {
                // Release, and mark a wake in flight in the same RMW if one
                // is needed and none is in flight already (a sleeper woken
                // to rotate in is one: it comes to spin).
                let wake = sleepers(w) > 0 && spinners(w) == 0 && w & (WAKING | ROTATING) == 0;
                (rest | if wake { WAKING } else { 0 }, wake, false)
            };
            match self.slots.word().compare_exchange_weak(w, next, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => {
                    if wake {
                        self.ring(stats);
                    }
                    node.word.set(next & !STATE);
                    node.next.set(if retire {
                        Next::Retire
                    } else if next & STATE == TO_WAITER {
                        Next::AfterTurn
                    } else {
                        Next::Fast
                    });
                    return;
                }
                Err(now) => w = now,
            }
        }
    }

    /// The unlock of a word that holds counts, `seen` as guessed: a plain
    /// release in one CAS when there is nothing to decide, else
    /// `unlock_slow`. Inline: at a 0 ns hold with a spinner and sleepers
    /// counted every unlock comes here, and out of line (a small function
    /// of its own) the owner ran at 0.895x (0.849..0.943) at 4 threads.
    #[inline]
    pub(super) fn unlock_counted(&self, seen: u32, node: &AdaptiveNode, stats: &mut LockStats) {
        let Some(next) = Self::plain_release(seen, node) else {
            return self.unlock_slow(seen, node, stats);
        };
        match self.slots.word().compare_exchange(seen, next, Ordering::Release, Ordering::Relaxed) {
            Ok(_) => {
                node.word.set(next);
                if sleepers(next) > 0 {
                    node.countdown.set(node.countdown.get() - 1);
                }
            }
            Err(w) => self.unlock_slow(w, node, stats),
        }
    }

    /// What `unlock_slow` would write for `w` (state 1) when that is a
    /// plain release: the ticks moved on, nothing else changed, no wake,
    /// no hand-over, the next lock fast. `None` when it has to decide: the
    /// first unlock after a slow lock, a spinner's turn (WANT), a mark to
    /// clear, a sleeper to wake, or the quantum due for a look (with
    /// sleepers, the caller counts the look down once its CAS succeeded,
    /// as `quantum_over` would have). At a 0 ns hold with a spinner and
    /// sleepers counted, every unlock took the call, and the owner spent
    /// about 40% of its samples in it (docs/design/adaptive.md).
    #[inline(always)]
    pub(super) fn plain_release(w: u32, node: &AdaptiveNode) -> Option<u32> {
        let plain = w & WANT == 0
            && !node.waited.get()
            && if sleepers(w) == 0 {
                w & ROTATING == 0
            } else {
                node.countdown.get() > 0 && (spinners(w) > 0 || w & (WAKING | ROTATING) != 0)
            };
        plain.then(|| (w & !STATE & !TICKS) | ((w + TICK) & TICKS))
    }

    /// The first unlock after a slow lock, `w` the word it found: if the
    /// release would have to wake a sleeper for want of a spinner, waits up
    /// to `GIVER_PAUSES` for a spinner to appear, and returns the word as
    /// last seen. The thread that gave us its turn joins the slot within
    /// tens of ns when it re-locks at once; at a 0 ns hold our first unlock
    /// comes sooner, and used to find the slot empty, ring, and keep the
    /// slot for the woken sleeper, so the giver slept: most stays at 256
    /// threads ended that way, long before their quantum, and the shares
    /// spread. Waiting inside `unlock` keeps the rule that nothing in the
    /// word speaks for a thread outside the lock's calls: if the giver
    /// never comes, the release wakes a sleeper as before.
    fn await_giver(&self, mut w: u32) -> u32 {
        let needs_wake = |w: u32| sleepers(w) > 0 && spinners(w) == 0 && w & (WAKING | ROTATING) == 0;
        if self.slots.max_spinners() == 0 {
            return w;
        }
        for _ in 0..GIVER_PAUSES {
            if !needs_wake(w) {
                break;
            }
            pause(1);
            w = self.slots.word().load(Ordering::Relaxed);
        }
        w
    }

    /// Wakes a sleeper: rings the bell, then makes the syscall. Every RMW
    /// that sets WAKING, ROTATING or state 2 rings once it succeeded, so a
    /// sleeper never sleeps through a change meant for it.
    pub(super) fn ring(&self, stats: &mut LockStats) {
        stats.add_wake();
        self.slots.bell().fetch_add(1, Ordering::Release);
        F::wake(self.slots.bell(), 1);
    }

    /// Whether the owner's quantum is over, looking at the clock when the
    /// countdown runs out (the first look starts the quantum). The next
    /// look comes after about `1/LOOKS_PER_QUANTUM` of the quantum, at the
    /// pace of the unlocks since the last look: a fixed 32 unlocks was a
    /// look every 200 ns at a 0 ns hold, and every 320 µs (a whole
    /// quantum) at 10 µs. Once over it stays over without another look
    /// until the thread sleeps (which resets `since`): looking on every
    /// unlock until then cost the owner a clock read a critical section
    /// at a 0 ns hold while it waited for a spinner to ask.
    #[cfg(not(loom))]
    pub(super) fn quantum_over(&self, node: &AdaptiveNode, sleepers: u32) -> bool {
        let left = node.countdown.get();
        if left > 0 {
            node.countdown.set(left - 1);
            return false;
        }
        let since = node.since.get();
        if since == u64::MAX {
            return true;
        }
        let now = now_ns();
        let quantum = quantum_for(self.slots.quantum_ns(), sleepers);
        let (over, every) = match since {
            0 => {
                node.since.set(now);
                (false, CLOCK_EVERY)
            }
            since => {
                let (last, ran) = node.looked.get();
                let per_unlock = (now.saturating_sub(last) / u64::from(ran.max(1))).max(1);
                let every = (quantum / LOOKS_PER_QUANTUM / per_unlock).clamp(1, MAX_EVERY);
                (now.saturating_sub(since) >= quantum, every as u32)
            }
        };
        if over {
            node.since.set(u64::MAX);
        } else {
            node.countdown.set(every - 1);
            node.looked.set((now, every));
        }
        over
    }

    /// Under loom (no clock): every other call, so the model covers both.
    #[cfg(loom)]
    pub(super) fn quantum_over(&self, node: &AdaptiveNode, _sleepers: u32) -> bool {
        let left = node.countdown.get();
        node.countdown.set(if left > 0 { left - 1 } else { 1 });
        left == 0
    }
}
