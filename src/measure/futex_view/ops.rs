//! What a futex syscall asks, read from its tracepoint record: the op of
//! futex(2) and its word(s), or futex2's futex_wait / futex_wake /
//! futex_waitv, or the return of any of them. Where each field sits in a
//! record is read from the tracepoint's `format` file, not assumed; a
//! futex_waitv's words come after its record, where the in-kernel
//! filter's router puts the array it copied from the caller.

use std::collections::HashMap;

/// A futex call, as far as the view needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    /// May sleep on its word (FUTEX_WAIT, WAIT_BITSET, LOCK_PI, LOCK_PI2,
    /// WAIT_REQUEUE_PI; futex_wait).
    Wait {
        /// The word.
        uaddr: u64,
    },
    /// Wakes waiters of a word.
    Wake {
        /// The word.
        uaddr: u64,
        /// A second word: WAKE_OP wakes on both; a requeue moves waiters
        /// there, and returns them with the woken.
        also: Option<u64>,
        /// Whether the call returns how many it woke (UNLOCK_PI does not).
        counts: bool,
    },
    /// futex_waitv: may sleep on every one of its words, in the order of
    /// the caller's array (its return is the index of the one woken).
    /// Empty when the array was not read: the record came from a
    /// per-thread event, which has only the array's address, or the
    /// router could not copy it.
    WaitV {
        /// The words.
        words: Vec<u64>,
    },
    /// Anything else (FUTEX_TRYLOCK_PI, FUTEX_FD).
    Other,
}

impl Call {
    /// The words the call may sleep on (a futex_waitv's in its array's
    /// order, repeats and all); none for a wake.
    pub fn sleeps_on(&self) -> &[u64] {
        match self {
            Call::Wait { uaddr } => std::slice::from_ref(uaddr),
            Call::WaitV { words } => words,
            _ => &[],
        }
    }
}

/// futex(2)'s op: its command, without FUTEX_PRIVATE_FLAG (128) and
/// FUTEX_CLOCK_REALTIME (256).
pub fn futex_call(op: u64, uaddr: u64, uaddr2: u64) -> Call {
    match op & 127 {
        // WAIT, LOCK_PI, WAIT_BITSET, WAIT_REQUEUE_PI, LOCK_PI2
        0 | 6 | 9 | 11 | 13 => Call::Wait { uaddr },
        // WAKE, WAKE_BITSET
        1 | 10 => Call::Wake { uaddr, also: None, counts: true },
        // REQUEUE, CMP_REQUEUE, WAKE_OP, CMP_REQUEUE_PI
        3 | 4 | 5 | 12 => Call::Wake { uaddr, also: Some(uaddr2), counts: true },
        // UNLOCK_PI returns 0, not a count
        7 => Call::Wake { uaddr, also: None, counts: false },
        _ => Call::Other,
    }
}

/// Which tracepoint a record came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// sys_enter_futex, with the offsets of its fields.
    EnterFutex {
        /// uaddr's offset.
        uaddr: usize,
        /// op's.
        op: usize,
        /// uaddr2's.
        uaddr2: usize,
    },
    /// sys_enter_futex_wait (futex2).
    EnterWait {
        /// uaddr's offset.
        uaddr: usize,
    },
    /// sys_enter_futex_wake (futex2).
    EnterWake {
        /// uaddr's offset.
        uaddr: usize,
    },
    /// sys_enter_futex_waitv.
    EnterWaitV {
        /// nr_futexes's offset.
        nr: usize,
        /// Where the copied array begins, when the router copied it: the
        /// record's length rounded up to 8.
        array: usize,
    },
    /// Any sys_exit_futex*.
    Exit {
        /// ret's offset.
        ret: usize,
    },
}

/// What a record says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Said {
    /// A call began.
    Enter(Call),
    /// The thread's call returned this.
    Exit(i64),
}

/// The tracepoints by id (a record's first two bytes, `common_type`).
#[derive(Debug, Clone, Default)]
pub struct Points(pub HashMap<u16, Point>);

impl Points {
    /// What `raw` says, if it is a record of one of these tracepoints.
    pub fn read(&self, raw: &[u8]) -> Option<Said> {
        let id = u16::from_ne_bytes(raw.get(0..2)?.try_into().ok()?);
        let word = |o: usize| Some(u64::from_ne_bytes(raw.get(o..o + 8)?.try_into().ok()?));
        Some(match *self.0.get(&id)? {
            Point::EnterFutex { uaddr, op, uaddr2 } => {
                Said::Enter(futex_call(word(op)?, word(uaddr)?, word(uaddr2)?))
            }
            Point::EnterWait { uaddr } => Said::Enter(Call::Wait { uaddr: word(uaddr)? }),
            Point::EnterWake { uaddr } => {
                Said::Enter(Call::Wake { uaddr: word(uaddr)?, also: None, counts: true })
            }
            Point::EnterWaitV { nr, array } => {
                Said::Enter(Call::WaitV { words: waitv_words(raw, nr, array) })
            }
            Point::Exit { ret } => Said::Exit(word(ret)? as i64),
        })
    }
}

/// The words of a futex_waitv record: each entry's address (its second
/// u64), when all `nr_futexes` entries follow the record at `array`.
fn waitv_words(raw: &[u8], nr: usize, array: usize) -> Vec<u64> {
    use locks::sys::task_filter::WAITV_ENTRY;
    let entry = WAITV_ENTRY as usize;
    let Some(n) = raw.get(nr..nr + 4).map(|b| u32::from_ne_bytes(b.try_into().unwrap()) as usize) else {
        return Vec::new();
    };
    let Some(entries) = raw.get(array..).and_then(|r| r.get(..n.checked_mul(entry)?)) else {
        return Vec::new();
    };
    entries.chunks_exact(entry).map(|e| u64::from_ne_bytes(e[8..16].try_into().unwrap())).collect()
}

/// Where `field` sits in a record, from a tracepoint's `format` file.
pub fn offset(format: &str, field: &str) -> Option<usize> {
    let line = format.lines().find(|l| {
        l.split(';').next().and_then(|decl| decl.split_whitespace().last()).map(|n| n.trim_start_matches('*'))
            == Some(field)
    })?;
    line.split("offset:").nth(1)?.split(';').next()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_are_read_without_their_flags() {
        assert_eq!(futex_call(128, 0x10, 0), Call::Wait { uaddr: 0x10 }, "FUTEX_WAIT_PRIVATE");
        assert_eq!(futex_call(9 | 256, 0x10, 0), Call::Wait { uaddr: 0x10 }, "WAIT_BITSET, realtime");
        assert_eq!(futex_call(6, 0x10, 0), Call::Wait { uaddr: 0x10 }, "LOCK_PI");
        assert_eq!(futex_call(129, 0x10, 0), Call::Wake { uaddr: 0x10, also: None, counts: true });
        assert_eq!(
            futex_call(4 | 128, 0x10, 0x20),
            Call::Wake { uaddr: 0x10, also: Some(0x20), counts: true }
        );
        assert_eq!(futex_call(7, 0x10, 0), Call::Wake { uaddr: 0x10, also: None, counts: false });
        assert_eq!(futex_call(8, 0x10, 0), Call::Other, "TRYLOCK_PI does not sleep");
    }

    #[test]
    fn fields_are_found_by_name_in_the_format() {
        let format = "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
                      \tfield:u32 * uaddr;\toffset:16;\tsize:8;\tsigned:0;\n\
                      \tfield:int op;\toffset:24;\tsize:8;\tsigned:0;\n\
                      \tfield:u32 * uaddr2;\toffset:48;\tsize:8;\tsigned:0;\n\
                      \tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n";
        assert_eq!(offset(format, "uaddr"), Some(16));
        assert_eq!(offset(format, "uaddr2"), Some(48));
        assert_eq!(offset(format, "op"), Some(24));
        assert_eq!(offset(format, "val"), None);
    }

    #[test]
    fn a_record_says_its_call_by_its_tracepoint() {
        let mut points = Points::default();
        points.0.insert(7, Point::EnterFutex { uaddr: 8, op: 16, uaddr2: 24 });
        points.0.insert(8, Point::Exit { ret: 8 });
        let mut raw = vec![0u8; 32];
        raw[0..2].copy_from_slice(&7u16.to_ne_bytes());
        raw[8..16].copy_from_slice(&0x1000u64.to_ne_bytes());
        raw[16..24].copy_from_slice(&128u64.to_ne_bytes());
        assert_eq!(points.read(&raw), Some(Said::Enter(Call::Wait { uaddr: 0x1000 })));
        raw[0..2].copy_from_slice(&8u16.to_ne_bytes());
        raw[8..16].copy_from_slice(&(-110i64).to_ne_bytes());
        assert_eq!(points.read(&raw), Some(Said::Exit(-110)));
        raw[0..2].copy_from_slice(&9u16.to_ne_bytes());
        assert_eq!(points.read(&raw), None, "another tracepoint");
    }

    #[test]
    fn a_waitv_record_has_its_words_when_the_array_follows_it() {
        let mut points = Points::default();
        points.0.insert(5, Point::EnterWaitV { nr: 24, array: 56 });
        let mut raw = vec![0u8; 56];
        raw[0..2].copy_from_slice(&5u16.to_ne_bytes());
        raw[24..32].copy_from_slice(&2u64.to_ne_bytes());
        // A per-thread event's record: the address only.
        assert_eq!(points.read(&raw), Some(Said::Enter(Call::WaitV { words: vec![] })));
        for (value, word) in [(7u64, 0x1000u64), (9, 0x2008)] {
            raw.extend(value.to_ne_bytes());
            raw.extend(word.to_ne_bytes());
            raw.extend(2u64.to_ne_bytes()); // FUTEX2_SIZE_U32, reserved 0
        }
        raw.extend([0u8; 4]); // the sample's padding
        assert_eq!(points.read(&raw), Some(Said::Enter(Call::WaitV { words: vec![0x1000, 0x2008] })));
        // One entry short (the copy failed): none, not half.
        raw.truncate(56 + 24);
        assert_eq!(points.read(&raw), Some(Said::Enter(Call::WaitV { words: vec![] })));
    }
}
