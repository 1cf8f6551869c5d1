//! What growth costs: a `GrowableCuckooFilter` grown from a first table of
//! 1000 items to N items (default 4 M), against a `CuckooFilter` sized for N at
//! the same false-positive rate. Prints, for each: tables, memory, bits per
//! item, the false-positive rate measured over N absent keys, and the speed of
//! lookups of absent keys (plain `contains` and `contains_batch`) and of
//! present ones (`contains` and `contains_batch`), then the growable filter's
//! figures as ratios of the sized one's.
//!
//! ```text
//! cargo run --release -p benchmarks --example growth                  # 4 M items, rate 10^-3
//! cargo run --release -p benchmarks --example growth -- --items 1000000 --rate 1e-4
//! ```
//!
//! One thread, keys from a fixed-seed generator, filters built with a fixed
//! seed: the counts and rates are reproducible, the speeds are one run's.
//!
//! The figures of a run, with the machine it ran on, are in BENCHMARKS.md
//! ("Growth").

use std::hint::black_box;
use std::time::Instant;

use lockfree_cuckoo_filter::{CuckooFilter, GrowableCuckooFilter, DEFAULT_SEED};

const USAGE: &str = "usage: growth [--items N] [--rate R] [--initial N]";

struct Args {
    items: usize,
    rate: f64,
    initial: usize,
}

fn parse_args() -> Result<Args, lexopt::Error> {
    use lexopt::prelude::*;

    let mut args = Args {
        items: 4_000_000,
        rate: 1e-3,
        initial: 1000,
    };
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("items") => args.items = parser.value()?.parse()?,
            Long("rate") => args.rate = parser.value()?.parse()?,
            Long("initial") => args.initial = parser.value()?.parse()?,
            Short('h') | Long("help") => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            _ => return Err(arg.unexpected()),
        }
    }
    Ok(args)
}

/// splitmix64: the key stream (present keys are `mix(i)`, absent ones
/// `mix(i | 1 << 63)`).
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// One filter's figures.
struct Figures {
    tables: usize,
    bytes: usize,
    measured_rate: f64,
    plain_mops: f64,
    batch_mops: f64,
    hit_mops: f64,
    hit_batch_mops: f64,
}

/// Measures a filter through its `contains` and its `contains_batch` (in
/// slices of 4096), each on the absent and on the present keys.
fn measure(
    tables: usize,
    bytes: usize,
    absent: &[u64],
    present: &[u64],
    contains: impl Fn(&u64) -> bool,
    batch: impl Fn(&[u64], &mut [bool]),
) -> Figures {
    // The best of PASSES timed passes each: the keys answered yes, and M
    // lookups/s. (One pass each varied by 3x from run to run on the CI
    // machine: the sized filter's misses at 30 to 104 M/s.)
    const PASSES: usize = 5;
    let mops = |keys: &[u64], secs: f64| keys.len() as f64 / secs / 1e6;
    let best = |pass: &mut dyn FnMut() -> (usize, f64)| {
        let (found, mut fastest) = pass();
        for _ in 1..PASSES {
            let (again, mops) = pass();
            assert_eq!(again, found, "the same answers on every pass");
            fastest = fastest.max(mops);
        }
        (found, fastest)
    };
    let plain = |keys: &[u64]| {
        best(&mut || {
            let start = Instant::now();
            let found = keys.iter().filter(|k| contains(black_box(k))).count();
            (found, mops(keys, start.elapsed().as_secs_f64()))
        })
    };
    let batched = |keys: &[u64]| {
        let mut out = vec![false; keys.len()];
        best(&mut || {
            let start = Instant::now();
            for (keys, out) in keys.chunks(4096).zip(out.chunks_mut(4096)) {
                batch(keys, out);
            }
            let secs = start.elapsed().as_secs_f64();
            (out.iter().filter(|&&o| o).count(), mops(keys, secs))
        })
    };
    let (hits, plain_mops) = plain(absent);
    let (batch_hits, batch_mops) = batched(absent);
    assert_eq!(batch_hits, hits);
    let (found, hit_mops) = plain(present);
    assert_eq!(found, present.len(), "no false negatives");
    let (found, hit_batch_mops) = batched(present);
    assert_eq!(found, present.len(), "no false negatives");
    let n = absent.len() as f64;
    Figures {
        tables,
        bytes,
        measured_rate: hits as f64 / n,
        plain_mops,
        batch_mops,
        hit_mops,
        hit_batch_mops,
    }
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("growth: {e}\n{USAGE}");
            std::process::exit(2);
        }
    };
    let n = args.items;
    let present: Vec<u64> = (0..n as u64).map(mix).collect();
    let absent: Vec<u64> = (0..n as u64).map(|i| mix(i | 1 << 63)).collect();

    let grown = GrowableCuckooFilter::builder()
        .initial_capacity(args.initial)
        .false_positive_rate(args.rate)
        .seed(DEFAULT_SEED)
        .build()
        .expect("growable filter");
    let start = Instant::now();
    for k in &present {
        grown.insert(k).expect("growth never fails here");
    }
    let grow_secs = start.elapsed().as_secs_f64();

    let sized = CuckooFilter::builder()
        .capacity(n)
        .false_positive_rate(args.rate)
        .seed(DEFAULT_SEED)
        .build()
        .expect("sized filter");
    let start = Instant::now();
    for k in &present {
        sized.insert(k).expect("sized for n");
    }
    let sized_secs = start.elapsed().as_secs_f64();

    let widths: Vec<u32> = grown.fingerprint_bits().iter().map(|b| b.bits()).collect();
    println!(
        "{n} items, rate {:e}; growable from {} items: {} tables, widths {widths:?}",
        args.rate,
        args.initial,
        grown.table_count()
    );
    let g = measure(
        grown.table_count(),
        grown.memory_usage(),
        &absent,
        &present,
        |k| grown.contains(k),
        |keys, out| {
            grown.contains_batch(keys, out);
        },
    );
    let s = measure(
        1,
        sized.memory_usage(),
        &absent,
        &present,
        |k| sized.contains(k),
        |keys, out| {
            sized.contains_batch(keys, out);
        },
    );
    println!();
    println!("| filter | tables | MiB | bits/item | measured rate | inserts M/s | miss contains M/s | miss contains_batch M/s | hit contains M/s | hit contains_batch M/s |");
    println!("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    for (name, f, secs) in [("growable", &g, grow_secs), ("sized for n", &s, sized_secs)] {
        println!(
            "| {name} | {} | {:.1} | {:.2} | {:.4} % | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
            f.tables,
            f.bytes as f64 / (1 << 20) as f64,
            f.bytes as f64 * 8.0 / n as f64,
            f.measured_rate * 100.0,
            n as f64 / secs / 1e6,
            f.plain_mops,
            f.batch_mops,
            f.hit_mops,
            f.hit_batch_mops,
        );
    }
    println!();
    println!(
        "growable / sized: memory {:.2}x, miss contains {:.2}x, miss contains_batch {:.2}x, hit contains {:.2}x, hit contains_batch {:.2}x, inserts {:.2}x",
        g.bytes as f64 / s.bytes as f64,
        g.plain_mops / s.plain_mops,
        g.batch_mops / s.batch_mops,
        g.hit_mops / s.hit_mops,
        g.hit_batch_mops / s.hit_batch_mops,
        sized_secs / grow_secs,
    );
}
