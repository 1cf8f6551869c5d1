//! One filter shared by every thread: parallel inserts, lookups and removes,
//! then the throughput, the false-positive rate and the bits per item.
//!
//! ```text
//! cargo run --release --example quickstart [items]
//! ```

use std::sync::Arc;
use std::thread;
use std::time::Instant;

use lockfree_cuckoo_filter::CuckooFilter;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let items: u64 = match std::env::args().nth(1) {
        Some(arg) => arg
            .parse()
            .map_err(|e| format!("items must be a number: {e}"))?,
        None => 10_000_000,
    };
    let threads = thread::available_parallelism().map_or(2, |n| n.get()) as u64;

    let filter = Arc::new(
        CuckooFilter::builder()
            .capacity(items as usize)
            .false_positive_rate(0.001)
            .build()?,
    );
    println!(
        "{items} items, {threads} threads, {}-bit fingerprints, capacity {} items in {} slots, {:.1} MiB",
        filter.fingerprint_bits().bits(),
        filter.capacity(),
        filter.slots(),
        filter.memory_usage() as f64 / (1 << 20) as f64,
    );

    // Each thread inserts its share of the items into the one shared filter.
    let rate = |ops: u64, start: Instant| ops as f64 / start.elapsed().as_secs_f64() / 1e6;
    let start = Instant::now();
    run_on_threads(threads, |t| {
        let filter = Arc::clone(&filter);
        move || {
            for i in (t..items).step_by(threads as usize) {
                filter.insert(&i).expect("with_capacity(n) holds n items");
            }
        }
    });
    println!("insert:             {:6.1} M ops/s", rate(items, start));

    // Every inserted item is found, whichever thread inserted it.
    let start = Instant::now();
    run_on_threads(threads, |t| {
        let filter = Arc::clone(&filter);
        move || {
            for i in (t..items).step_by(threads as usize) {
                assert!(filter.contains(&i), "no false negatives");
            }
        }
    });
    println!("contains (present): {:6.1} M ops/s", rate(items, start));

    // Items never inserted: the ones reported present are false positives.
    let probes = items.min(10_000_000);
    let false_positives = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let start = Instant::now();
    run_on_threads(threads, |t| {
        let (filter, fps) = (Arc::clone(&filter), Arc::clone(&false_positives));
        move || {
            let hits = (items + t..items + probes)
                .step_by(threads as usize)
                .filter(|i| filter.contains(i))
                .count() as u64;
            fps.fetch_add(hits, std::sync::atomic::Ordering::Relaxed);
        }
    });
    println!("contains (absent):  {:6.1} M ops/s", rate(probes, start));
    let measured =
        false_positives.load(std::sync::atomic::Ordering::Relaxed) as f64 / probes as f64;

    // Batched lookups overlap their cache misses.
    let keys: Vec<u64> = (0..items.min(4_000_000)).collect();
    let mut out = vec![false; keys.len()];
    let start = Instant::now();
    filter.contains_batch(&keys, &mut out);
    assert!(out.iter().all(|&hit| hit));
    println!(
        "contains_batch (1 thread): {:6.1} M ops/s",
        rate(keys.len() as u64, start)
    );

    // `false_positive_rate()` is `1 - (1 - 2^-f)^(8·load)`: the rate expected
    // at this load (each of the 8·load fingerprints in an item's two buckets
    // matches with probability 2^-f), which the measured rate scatters around.
    println!(
        "load factor {:.3}; false-positive rate {:.4} % (expected {:.4} %); {:.2} bits per item",
        filter.load_factor(),
        100.0 * measured,
        100.0 * filter.false_positive_rate(),
        8.0 * filter.memory_usage() as f64 / items as f64,
    );

    // Remove half: they are gone, the other half is still there.
    let start = Instant::now();
    run_on_threads(threads, |t| {
        let filter = Arc::clone(&filter);
        move || {
            for i in (t..items).step_by(threads as usize).filter(|i| i % 2 == 0) {
                assert!(filter.remove(&i));
            }
        }
    });
    println!("remove:             {:6.1} M ops/s", rate(items / 2, start));
    assert_eq!(filter.len() as u64, items - items.div_ceil(2));
    println!("len after removing half: {}", filter.len());
    Ok(())
}

/// Runs `make(t)` for `t` in `0..threads`, each on its own thread, and joins.
fn run_on_threads<F, G>(threads: u64, make: G)
where
    G: Fn(u64) -> F,
    F: FnOnce() + Send + 'static,
{
    let handles: Vec<_> = (0..threads).map(|t| thread::spawn(make(t))).collect();
    for h in handles {
        h.join().expect("worker panicked");
    }
}
