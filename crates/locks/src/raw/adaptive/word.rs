//! The adaptive mutex's word: its fields, their masks, and the small
//! readers of them; the policy constants derived from measurements.

use crate::primitive::spin_loop;

pub(super) const STATE: u32 = 0b11;
pub(super) const UNLOCKED: u32 = 0;
pub(super) const LOCKED: u32 = 1;
/// Locked on behalf of a sleeper, which takes it by setting state 1.
pub(super) const HANDOFF: u32 = 2;
/// Locked on behalf of any waiter (spinner or sleeper); arrivals cannot
/// take it.
pub(super) const TO_WAITER: u32 = 3;
/// A sleeper is awake (woken, or not yet asleep) and will come: unlocks
/// need not wake another, and a spinner slot is kept for it.
pub(super) const WAKING: u32 = 1 << 2;
/// A spinner has waited its turn: the next unlock reserves the lock.
pub(super) const WANT: u32 = 1 << 3;
/// A sleeper was woken to take the next spinner slot, kept for it; the
/// thread whose quantum ended does not take it (it retires to sleep), and
/// unlocks need not wake another.
pub(super) const ROTATING: u32 = 1 << 4;
/// Slow-path unlocks, modulo 16: a waiter's evidence that the owner
/// progresses, kept in the word so that an unlock writes one line.
pub(super) const TICK: u32 = 1 << 5;
pub(super) const TICKS: u32 = 0xf << 5;
pub(super) const SPINNER: u32 = 1 << 9;
pub(super) const SPINNERS: u32 = 0x7f << 9;
pub(super) const SLEEPER: u32 = 1 << 16;
/// The most threads that may wait at once: the sleeper field's range.
pub(super) const MAX_WAITERS: u32 = u16::MAX as u32;

/// How many times a waiter that found no free spinner slot looks again
/// (pausing, then yielding the CPU) before it sleeps: the slot is often
/// busy only until the spinner takes its turn, well under a wake's cost.
#[cfg(not(loom))]
pub(super) const SLOT_RETRIES: u32 = 8;
/// Under loom, enough to cover the retry without blowing up the state space.
#[cfg(loom)]
pub(super) const SLOT_RETRIES: u32 = 2;
/// How many pauses the first unlock after a slow lock
/// waits for the thread that gave it the turn to come back and spin,
/// before it wakes a sleeper instead: about 1 µs (a pause takes 14 to 22 ns
/// on this machine's hosts), a tenth of a wake.
#[cfg(not(loom))]
pub(super) const GIVER_PAUSES: u32 = 64;
/// Under loom, one look: the model covers both outcomes.
#[cfg(loom)]
pub(super) const GIVER_PAUSES: u32 = 1;
/// Pauses before a spinner's second look at the word (about 0.1 µs at
/// 14 ns a pause): an owner that re-locks at once has cycled a few times
/// by then, which the ticks show.
pub(super) const FIRST_PAUSES: u32 = 8;
/// Pauses before the second look that confirms a lock seen left free
/// by an owner known to cycle fast (`left`): about 30 ns, when such an
/// owner has unlocked a few times over, and one that left has not come
/// back.
pub(super) const CONFIRM_PAUSES: u32 = 2;
/// The most pauses between two looks while a spinner waits for its turn
/// (about 3.5 µs): rare enough not to pull the line away from an owner
/// that re-locks at once, often enough to see a lock left free.
pub(super) const QUIET_PAUSES: u32 = 256;
/// Unlocks (with sleepers counted) before the first look at the clock of
/// a stay; after it, the pace of the unlocks sets the interval (below).
#[cfg(not(loom))]
pub(super) const CLOCK_EVERY: u32 = 32;
/// The owner looks at the clock about this many times a quantum, at the
/// pace of its unlocks since its last look: a look costs about 25 ns
/// through the vDSO, and a look every 32 unlocks held the throughput at
/// a 0 ns hold 7 to 11% below a look every 1 024 (4 and 16 threads); the
/// quantum then ends about a sixteenth late at most, at any hold.
#[cfg(not(loom))]
pub(super) const LOOKS_PER_QUANTUM: u64 = 16;
/// The most unlocks between two looks (about 25 µs at 6 ns a cycle).
#[cfg(not(loom))]
pub(super) const MAX_EVERY: u64 = 4096;
/// How long a spinner waits before it asks for its turn, in wake costs:
/// a batch of that length pays for the hand-over many times over.
#[cfg(not(loom))]
pub(super) const TURN_WAKES: u64 = 2;
/// How long a spinner that asked waits for its turn before it sleeps, in
/// wake costs: past that the owner is preempted or holds for long, and
/// sleeping is cheaper.
#[cfg(not(loom))]
pub(super) const PATIENCE_WAKES: u64 = 2;
/// The quantum, in wake costs: a thread stays in the active set (owner or
/// spinner) this long before it makes way for a sleeper (longer when few
/// sleep: `quantum_for`), so a rotation, which costs one wake, costs
/// about 2% of the time it buys. (At 25, 4 threads at a 1 µs hold lost
/// some 5% of throughput to rotations; at 50, 256 threads still share
/// within Jain 0.95 at a 1 µs hold over 200 ms.)
#[cfg(not(loom))]
pub(super) const QUANTUM_WAKES: u64 = 50;

/// How long a sleeper may wait for its turn in the active set, in base
/// quanta: it waits about one quantum per sleeper ahead of it.
#[cfg(not(loom))]
pub(super) const SLEEPER_WAIT_QUANTA: u64 = 8;
/// The most the quantum stretches when few sleep.
#[cfg(not(loom))]
pub(super) const MAX_STRETCH: u64 = 4;

/// The quantum with `sleepers` asleep: `base` (`QUANTUM_WAKES` wake
/// costs) stretched, up to `MAX_STRETCH` times, as far as keeps a
/// sleeper's wait for its turn within `SLEEPER_WAIT_QUANTA` base quanta.
/// A rotation costs more than its wake when the threads outnumber the
/// CPUs: at 4 threads on 2 CPUs and a 1 µs hold, each one cost the lock
/// about 12 µs (throughput against sleeps a second), and the mean hold
/// read 1.034 to 1.049 µs against 1.025 to 1.031 with the stretch
/// (owners preempted inside the lock). With 1 or 2 sleepers (3 or 4
/// threads) the quantum is 4x; there it gave 1.042x throughput at 4
/// threads (1.032..1.051) with Jain 0.999, and 1.002 at 3 threads with
/// Jain 0.981 against 0.986 over 300 ms. From 5 sleepers on it is the
/// base, so 16 and 256 threads rotate as before.
#[cfg(not(loom))]
pub(super) fn quantum_for(base: u64, sleepers: u32) -> u64 {
    base * (SLEEPER_WAIT_QUANTA / u64::from(sleepers.max(1))).clamp(1, MAX_STRETCH)
}

pub(super) fn spinners(w: u32) -> u32 {
    (w & SPINNERS) >> 9
}

pub(super) fn sleepers(w: u32) -> u32 {
    w >> 16
}

pub(super) fn ticks(w: u32) -> u32 {
    (w & TICKS) >> 5
}

/// `n` pause instructions (14 to 22 ns each on this machine's hosts).
#[link_section = "contend_measured"] // crate docs: Placement
pub(super) fn pause(n: u32) {
    for _ in 0..n {
        spin_loop();
    }
}

/// How far the ticks moved from `before` to `w`: the unlocks between two
/// looks, modulo 16 (every unlock of a word with counts in it moves them,
/// and a spinner's own count is one).
pub(super) fn moved(before: u32, w: u32) -> u32 {
    ticks(w).wrapping_sub(before) & 0xf
}

/// Whether the owner left rather than released and re-locked, from the
/// ticks `moved` since the spinner's last look: by at most one. The ticks
/// are four bits, so an owner that unlocks every few ns (a 0 ns hold)
/// wraps them between two quiet looks, and "at most one" then holds by
/// chance once in eight looks. So a spinner that has seen the owner cycle
/// fast (`fast`: two unlocks or more within a short pause) believes it
/// only if `confirm`, a second look shortly after, agrees. Without that,
/// half the spins at a 0 ns hold ended in such a take, cutting the
/// owner's batch short (docs/design/adaptive.md).
pub(super) fn left(moved: Option<u32>, fast: bool, confirm: impl FnOnce() -> bool) -> bool {
    moved.is_some_and(|m| m <= 1) && (!fast || confirm())
}
