//! The inline unlock against the one it shortcuts: for every word it
//! takes, `plain_release` must write what `unlock_slow` writes, wake
//! nobody, and leave the node as `unlock_slow` would.

use super::word::*;
use super::*;

/// The words an owner may find with counts in them (the bare lock never
/// comes here: `unlock` releases it with its own CAS): each
/// policy-relevant bit, spinner and sleeper counts of 0 to 2, and ticks
/// about to wrap or not.
fn words() -> Vec<u32> {
    let mut out = Vec::new();
    for bits in 0..8u32 {
        let marks = [WAKING, WANT, ROTATING]
            .iter()
            .enumerate()
            .filter(|(i, _)| bits & (1 << i) != 0)
            .fold(0, |acc, (_, &bit)| acc | bit);
        for spinners in 0..3 {
            for sleepers in 0..3 {
                for ticks in [0, 7, 15] {
                    out.push(LOCKED | marks | (ticks * TICK) | (spinners * SPINNER) | (sleepers * SLEEPER));
                }
            }
        }
    }
    out.retain(|&w| w != LOCKED);
    out
}

fn node(waited: bool, countdown: u32) -> AdaptiveNode {
    let node = AdaptiveNode::default();
    node.waited.set(waited);
    node.countdown.set(countdown);
    node
}

#[test]
fn a_plain_release_writes_what_the_slow_unlock_writes() {
    let mut plain = 0;
    for w in words() {
        for waited in [false, true] {
            for countdown in [0, 1, 5] {
                let Some(next) = Adaptive::<DefaultFutex>::plain_release(w, &node(waited, countdown)) else {
                    continue;
                };
                plain += 1;
                let lock = Adaptive::<DefaultFutex>::new(&LockConfig::default());
                lock.slots.word().store(w, Ordering::Relaxed);
                let slow = node(waited, countdown);
                let mut stats = LockStats::default();
                lock.unlock_slow(w, &slow, &mut stats);
                let w_hex = format!("{w:#x}");
                assert_eq!(lock.word(), next, "word {w_hex}");
                assert_eq!(stats.counts().wakes, 0, "word {w_hex}");
                assert_eq!(slow.next.get(), Next::Fast, "word {w_hex}");
                assert_eq!(slow.word.get(), next, "word {w_hex}");
                let counted = if sleepers(w) > 0 { countdown - 1 } else { countdown };
                assert_eq!(slow.countdown.get(), counted, "word {w_hex}");
            }
        }
    }
    // Not vacuous: the grid holds plain releases.
    assert!(plain > 50, "{plain}");
}

#[test]
fn a_release_that_decides_is_left_to_the_slow_unlock() {
    let quiet = node(false, 5);
    let with = |bits: u32| Adaptive::<DefaultFutex>::plain_release(LOCKED | bits, &quiet);
    // A spinner's turn, a sleeper to wake, a mark nobody can claim.
    assert_eq!(with(WANT | SPINNER), None);
    assert_eq!(with(SLEEPER), None);
    assert_eq!(with(ROTATING), None);
    // The first unlock after a slow lock, and a quantum due for a look.
    assert_eq!(Adaptive::<DefaultFutex>::plain_release(LOCKED | SPINNER, &node(true, 5)), None);
    assert_eq!(Adaptive::<DefaultFutex>::plain_release(LOCKED | SPINNER | SLEEPER, &node(false, 0)), None);
    // A spinner and a sleeper counted, nothing to decide: the ticks move.
    assert_eq!(with(SPINNER | SLEEPER), Some(SPINNER | SLEEPER | TICK));
    assert_eq!(with(SPINNER | (15 * TICK)), Some(SPINNER));
}

/// Enough sleepers for the base quantum, unstretched.
const MANY_ASLEEP: u32 = 100;

#[test]
fn few_sleepers_stretch_the_quantum_and_many_do_not() {
    let base = 500_000;
    let stretched: Vec<u64> =
        [1, 2, 3, 4, 5, 8, MANY_ASLEEP, 65_535].iter().map(|&n| quantum_for(base, n) / base).collect();
    assert_eq!(stretched, [4, 4, 2, 2, 1, 1, 1, 1]);
    // Through the owner's look: with two asleep, a stay one base quantum
    // old goes on, and one four base quanta old is over.
    let lock = Adaptive::<DefaultFutex>::new(&LockConfig::default());
    let base = lock.slots.quantum_ns();
    let node = node(false, 0);
    assert!(!lock.quantum_over(&node, 2));
    let since = node.since.get();
    node.since.set(since.saturating_sub(base + 1).max(1));
    node.countdown.set(0);
    assert!(!lock.quantum_over(&node, 2));
    node.since.set(since.saturating_sub(4 * base + 1).max(1));
    node.countdown.set(0);
    assert!(lock.quantum_over(&node, 2));
}

#[test]
fn a_quantum_once_over_stays_over_without_a_look_until_the_thread_sleeps() {
    let lock = Adaptive::<DefaultFutex>::new(&LockConfig::default());
    let node = node(false, 0);
    // The first look starts the quantum and counts down to the next one.
    assert!(!lock.quantum_over(&node, MANY_ASLEEP));
    let since = node.since.get();
    assert!(since != 0 && since != u64::MAX);
    assert_eq!(node.countdown.get(), CLOCK_EVERY - 1);
    // A stay that began a quantum ago is over, and marked so.
    node.since.set(since.saturating_sub(lock.slots.quantum_ns() + 1).max(1));
    node.countdown.set(0);
    assert!(lock.quantum_over(&node, MANY_ASLEEP));
    assert_eq!(node.since.get(), u64::MAX);
    // Over without a look: the countdown is not restarted.
    assert!(lock.quantum_over(&node, MANY_ASLEEP));
    assert_eq!(node.countdown.get(), 0);
}

#[test]
fn the_next_look_is_paced_by_the_unlocks_since_the_last() {
    let lock = Adaptive::<DefaultFutex>::new(&LockConfig::default());
    let quantum = lock.slots.quantum_ns();
    let node = node(false, 0);
    assert!(!lock.quantum_over(&node, MANY_ASLEEP));
    // A stay that began in the future is not over however slow this
    // thread runs, so only the pace decides the countdown.
    node.since.set(u64::MAX - 1);
    // The unlocks since the last look took no time (it lies ahead): the
    // next look is a sixteenth of the quantum away at 1 ns an unlock, or
    // as far as allowed.
    node.looked.set((u64::MAX - 1, CLOCK_EVERY));
    node.countdown.set(0);
    assert!(!lock.quantum_over(&node, MANY_ASLEEP));
    let far = (quantum / LOOKS_PER_QUANTUM).clamp(1, MAX_EVERY);
    assert_eq!(u64::from(node.countdown.get()), far - 1);
    // One unlock took half a quantum or more: the very next unlock looks.
    let (now, _) = node.looked.get();
    node.looked.set((now - quantum / 2, 1));
    node.countdown.set(0);
    assert!(!lock.quantum_over(&node, MANY_ASLEEP));
    assert_eq!(node.countdown.get(), 0);
}

/// A lock seen free with the ticks moved by at most one is taken at once
/// from a slow owner; from one seen cycling fast (whose ticks may have
/// wrapped) only if the confirming look agrees, and that look is made
/// only then.
#[test]
fn a_fast_owner_is_believed_gone_only_after_a_second_look() {
    use std::cell::Cell;
    let looked = Cell::new(0);
    let look = |answer: bool| {
        looked.set(looked.get() + 1);
        answer
    };
    assert!(left(Some(1), false, || look(false)), "a slow owner that unlocked once has left");
    assert!(left(Some(0), false, || look(false)));
    assert_eq!(looked.get(), 0, "no second look for a slow owner");
    assert!(!left(Some(2), false, || look(true)), "two unlocks: it is cycling");
    assert!(!left(None, false, || look(true)), "nothing to compare with at the first look");
    assert_eq!(looked.get(), 0, "no second look when the ticks already say no");
    assert!(!left(Some(1), true, || look(false)), "a fast owner whose word changed is still there");
    assert!(left(Some(1), true, || look(true)), "a fast owner whose word stayed put has left");
    assert_eq!(looked.get(), 2);
    assert_eq!(moved(15, 1 << 5), 2, "the ticks wrap modulo 16");
}
