//! Where each layout first refuses an insert: the load at which a table
//! filled with distinct well-mixed keys answers its first
//! `InsertError::Full`, for several table sizes and seeds. What each
//! layout's highest sizing load (`FingerprintBits::max_load`, documented
//! with these figures) is chosen below.
//!
//! ```text
//! cargo run --release -p benchmarks --example first_refusal                 # 2^10, 2^14, 2^20 slots, 5 seeds
//! cargo run --release -p benchmarks --example first_refusal -- 2 24         # 2^24 slots, 2 seeds
//! ```
//!
//! Arguments: seeds (default 5), then the table sizes as powers of two of
//! slots, comma-separated (default `10,14,20`). A table gets the most slots
//! up to that size the builder makes (its slack included); the load is the
//! items held at the first refusal over the table's slots. Prints the
//! lowest, median and highest load over the seeds.

use benchmarks::splitmix as mix;
use lockfree_cuckoo_filter::{CuckooFilter, FingerprintBits};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seeds: u64 = args
        .get(1)
        .map_or(5, |s| s.parse().expect("seeds: a number"));
    let sizes: Vec<u32> = args.get(2).map_or(vec![10, 14, 20], |s| {
        s.split(',')
            .map(|x| x.parse().expect("sizes: numbers"))
            .collect()
    });
    println!("| layout | slots | lowest | median | highest |");
    println!("|---|--:|--:|--:|--:|");
    for bits in FingerprintBits::ALL {
        for &log in &sizes {
            let mut loads = Vec::new();
            for seed in 0..seeds {
                let f = table_of(bits, 1 << log, seed);
                let mut n = 0u64;
                while f.insert_hash(mix(n ^ (seed << 40))).is_ok() {
                    n += 1;
                }
                loads.push(n as f64 / f.slots() as f64);
            }
            loads.sort_by(f64::total_cmp);
            println!(
                "| {bits:?} | 2^{log} | {:.2} % | {:.2} % | {:.2} % |",
                100.0 * loads[0],
                100.0 * loads[loads.len() / 2],
                100.0 * loads[loads.len() - 1]
            );
        }
    }
}

/// A filter of `bits`' layout with at most `slots` slots (and nearly that
/// many), seeded with `seed`.
fn table_of(bits: FingerprintBits, slots: usize, seed: u64) -> CuckooFilter {
    let build = |capacity: usize| {
        CuckooFilter::builder()
            .capacity(capacity)
            .fingerprint_bits(bits)
            .seed(mix(seed))
            .build()
            .expect("a table of at most 2^30 slots")
    };
    // The capacity at which the table's slots reach `slots`: search down
    // from the layout's own sizing.
    let (mut low, mut high) = (1, slots);
    while low < high {
        let mid = low + (high - low).div_ceil(2);
        if build(mid).slots() <= slots {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    build(low)
}
