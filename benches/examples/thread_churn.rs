//! What the item count costs threads that start after others have come and
//! gone: thirteen short-lived threads each insert and remove one item (one
//! thread more than the count has owned shards), then two threads run an
//! insert/remove mix (0/50/50, the concurrent driver of `compare`) on a
//! small table at half load, three half-second rounds.
//!
//! ```text
//! cargo run --release -p benchmarks --example thread_churn
//! ```
//!
//! Until the owned shards were handed back at thread exit, the thirteen took
//! them all for good, and the two workers counted every insert and remove by
//! `fetch_add` into shared shards. On the 2-core Xeon VM (2026-11-24, built
//! with native and LTO, four runs each, interleaved): 24.2 to 25.8 M
//! operations/s before (11 of 12 rounds; the first round of the first run
//! 47.6), 44.1 to 45.2 after.

use std::time::Duration;

use benchmarks::{fill, fresh_key, items_at, run_concurrent, Mix, Ours, RunLength, Subject};

fn main() {
    let ours = Ours::new(65536);
    let n = items_at(ours.slots(), 0.5);
    fill(&ours, 0, n, 1);
    for t in 0..13 {
        std::thread::scope(|s| {
            s.spawn(|| {
                assert!(ours.insert(fresh_key(t)), "room at half load");
                assert!(ours.remove(fresh_key(t)));
            });
        });
    }
    let churn = Mix {
        lookup: 0,
        insert: 50,
        remove: 50,
    };
    for round in 0..3 {
        let length = RunLength::Time(Duration::from_millis(500));
        let (ops, secs) = run_concurrent(&ours, n, 2, churn, round, length);
        println!(
            "round {round}: {:.1} M operations/s on 2 threads, len {}",
            ops as f64 / secs / 1e6,
            ours.0.len()
        );
        // The driver puts the initial keys back after each run.
        assert_eq!(ours.0.len() as u64, n, "the count drifted");
    }
}
