//! The profile's tables of records keyed by a lock's address: found by
//! hashing and linear probing, claimed with one CAS, never freed (a table
//! is static: the program's allocator may itself lock mutexes). Shared by
//! the mutexes' table (`profile/record.rs`) and the rwlocks' and spinlocks'
//! (`rwlock.rs`).

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Slots probed for a key before the caller's overflow record takes it: a
/// program with more locks than the table must not pay a scan of the
/// whole table on each lock.
pub const MAX_PROBES: usize = 64;

/// A record that a key can claim.
pub trait Slot {
    /// The address it is claimed for (0: free).
    fn key(&self) -> &AtomicUsize;
}

/// The index of `key`'s record in `table` (`N` a power of two, so that
/// the probe wraps with a mask, not a division), and whether this call
/// claimed it; None when no slot was free within [`MAX_PROBES`].
#[inline]
pub fn find<R: Slot, const N: usize>(table: &[R; N], key: usize) -> Option<(usize, bool)> {
    const { assert!(N.is_power_of_two()) };
    // Fibonacci hashing of the address (its low 3 bits are alignment).
    let start = (key >> 3).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
    for probe in 0..MAX_PROBES {
        let i = (start + probe) & (N - 1);
        let r = &table[i];
        match r.key().load(Relaxed) {
            k if k == key => return Some((i, false)),
            0 => {
                if r.key().compare_exchange(0, key, Relaxed, Relaxed).is_ok() {
                    return Some((i, true));
                }
                if r.key().load(Relaxed) == key {
                    return Some((i, false));
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    struct R(AtomicUsize);
    impl Slot for R {
        fn key(&self) -> &AtomicUsize {
            &self.0
        }
    }

    #[test]
    fn a_key_finds_its_own_record_and_a_full_neighbourhood_none() {
        static T: [R; 128] = [const { R(AtomicUsize::new(0)) }; 128];
        let (a, new) = find(&T, 0x1000).unwrap();
        assert!(new);
        let (again, new) = find(&T, 0x1000).unwrap();
        assert!(a == again && !new);
        assert_eq!(T[a].0.load(Relaxed), 0x1000);
        let claimed = (1..=200usize).filter(|k| find(&T, k * 8 + 0x2000).is_some()).count();
        assert!(claimed <= 127, "no more records than slots: {claimed}");
        assert!(find(&T, 0x99_0000).is_none() || claimed < 127);
    }
}
