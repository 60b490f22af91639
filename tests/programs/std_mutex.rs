//! Rust's std::sync::Mutex, which is a futex lock of its own and never
//! calls pthread_mutex_lock: four threads add to a global ledger under
//! it, with some work inside, so they wait. The futex view must find the
//! word and name it by the static that holds it. Built by
//! tests/futex_view.rs with rustc.
use std::sync::Mutex;

static LEDGER: Mutex<u64> = Mutex::new(0);

fn main() {
    let threads: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                for i in 0..20_000u64 {
                    let mut total = LEDGER.lock().unwrap();
                    for k in 0..200 {
                        *total = std::hint::black_box(total.wrapping_mul(31).wrapping_add(i ^ k ^ t));
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    println!("ledger={}", LEDGER.lock().unwrap());
}
