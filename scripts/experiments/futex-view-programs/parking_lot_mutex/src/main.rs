//! parking_lot's Mutex, contended by four threads. parking_lot never
//! sleeps on the lock's own byte: a thread that must wait parks on a
//! futex word in its own per-thread data (parking_lot_core's ThreadData,
//! found through a hash table keyed by the lock's address), and the
//! unlocker wakes that thread's word. So the futex view finds one word
//! per waiting thread, in that thread's memory, and the lock is named by
//! the waiters' and wakers' stacks. The main thread holds the ledger
//! until every worker is about to lock it, and 10 ms more, so that every
//! execution has waits however the machine schedules it. Built by
//! scripts/experiments/futex-view-programs.py.
use parking_lot::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

static LEDGER: Mutex<u64> = Mutex::new(0);
static READY: AtomicUsize = AtomicUsize::new(0);

fn main() {
    let held = LEDGER.lock();
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            std::thread::spawn(move || {
                READY.fetch_add(1, Ordering::SeqCst);
                for i in 0..20_000u64 {
                    let mut total = LEDGER.lock();
                    for k in 0..200 {
                        *total = std::hint::black_box(total.wrapping_mul(31).wrapping_add(i ^ k ^ t));
                    }
                }
            })
        })
        .collect();
    while READY.load(Ordering::SeqCst) < 4 {
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
    std::thread::sleep(std::time::Duration::from_millis(10));
    drop(held);
    for t in threads {
        t.join().unwrap();
    }
    println!("ledger={}", *LEDGER.lock());
}
