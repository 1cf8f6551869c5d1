//! The bits sweep: for each false-positive rate asked, the layout the builder
//! picks, the load its capacity fills it to (the load it was sized for, less
//! the slack of small tables), the memory per item of a filter built for
//! 10^6 items and filled to that capacity, and the rate measured there, beside an optimal Bloom
//! filter's bits at the rate asked (`1.44 · log2(1/ε)`).
//!
//! ```text
//! cargo run --release -p benchmarks --example sweep
//! ```
//!
//! The rate is measured with 4 · 10^7 lookups of items never inserted; where
//! fewer than 20 false positives are expected at the rate asked, the count
//! says little and is shown as `-`.

use benchmarks::splitmix as mix;
use lockfree_cuckoo_filter::CuckooFilter;

/// Items the filters are built for and filled with.
const ITEMS: usize = 1_000_000;
/// Lookups of absent items per rate.
const PROBES: u64 = 40_000_000;
/// The rates of the sweep.
const RATES: [f64; 16] = [
    0.03, 0.02, 0.01, 0.005, 0.003, 0.002, 0.001, 5e-4, 2e-4, 1e-4, 5e-5, 2e-5, 1e-5, 1e-6, 1e-7,
    1e-8,
];

fn main() {
    println!("| rate asked | layout | load at capacity | bits/item | measured rate | ÷ Bloom |");
    println!("|--:|--|--:|--:|--:|--:|");
    for rate in RATES {
        let f = CuckooFilter::builder()
            .capacity(ITEMS)
            .false_positive_rate(rate)
            .seed(7)
            .build()
            .expect("a layout reaches every rate of the sweep");
        let n = f.capacity() as u64;
        for i in 0..n {
            f.insert_hash(mix(i)).expect("a filter takes its capacity");
        }
        let bits = 8.0 * f.memory_usage() as f64 / n as f64;
        let bloom = (1.0 / rate).log2() / std::f64::consts::LN_2;
        let measured = if rate * PROBES as f64 >= 20.0 {
            let hits = (0..PROBES)
                .filter(|&i| f.contains_hash(mix(i + (1 << 62))))
                .count();
            format!("{:.3e}", hits as f64 / PROBES as f64)
        } else {
            "-".into()
        };
        println!(
            "| {rate:.0e} | {} | {:.1} % | {bits:.2} | {measured} | {:.3} |",
            benchmarks::long_name(f.fingerprint_bits()),
            100.0 * n as f64 / f.slots() as f64,
            bits / bloom
        );
    }
}
