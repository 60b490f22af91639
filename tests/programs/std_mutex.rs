//! Rust's std::sync::Mutex, which is a futex lock of its own and never
//! calls pthread_mutex_lock: four threads add to a global ledger under
//! it, with some work inside, so they wait. The main thread holds the
//! ledger until every worker is about to lock it, and 10 ms more, so that
//! every execution has waits however the machine schedules it. The futex
//! view must find the word and name it by the static that holds it.
//! Built by tests/futex_view.rs with rustc.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

static LEDGER: Mutex<u64> = Mutex::new(0);
static READY: AtomicUsize = AtomicUsize::new(0);

fn main() {
    let held = LEDGER.lock().unwrap();
    let threads: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                READY.fetch_add(1, Ordering::SeqCst);
                for i in 0..20_000u64 {
                    let mut total = LEDGER.lock().unwrap();
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
    println!("ledger={}", LEDGER.lock().unwrap());
}
