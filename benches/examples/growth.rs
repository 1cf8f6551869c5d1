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
//! Measured on a 2-core Intel Xeon VM (three runs, 4 M items, rate 10^-3,
//! each figure the best of five passes, as one pass varies up to 3x from run
//! to run): the grown filter has 7 tables, all 16-bit, 1.46 times the sized
//! filter's memory (25.0 against 17.1 bits per item), and a measured rate of
//! 0.078 % (the bound is 0.1 %). As fractions of the sized filter's speed:
//! misses 0.18-0.20 (13.0-14.4 against 73.2-74.0 M/s), batched misses 0.27,
//! present keys 0.61-0.66 one at a time and 0.87-0.89 batched, inserts
//! 1.00-1.08. On a 2-core AMD EPYC VM, where the sized filter waits on memory
//! less, the chain's cost (the same seven probes) weighs more: misses
//! 0.06-0.10 (6.8-13.3 against 113-141 M/s), batched 0.14-0.16, present keys
//! 0.20-0.50 and 0.55-0.62 batched, inserts 0.88-1.28 (six runs).
//!
//! Why: a miss runs seven table probes of about 60 instructions each, and a
//! profile puts 80 % of the grown lookup's time on its bucket loads; the
//! out-of-order window holds about one such lookup, so the next lookup's cache
//! misses do not overlap this one's as they do for the single table. What any
//! chain grown by fours could reach is measured by `lookup_floor -- --chain`:
//! minimal code over the same seven tables, 0.16-0.19 of the sized filter;
//! only the three largest alone pass 0.3 (BENCHMARKS.md, "The floor of a
//! chain of tables").
//!
//! What the lookups do, and the measurements behind each choice:
//!
//! - The chain's tables are taken in runs of one width, one dispatch per run
//!   rather than one per table (callgrind, instructions per missed lookup 589
//!   -> 463), and each table's bucket pair is compared in one SSE2
//!   comparison (-> 435; per batched key 444 -> 352).
//! - `contains_batch` takes 1024 lookups through each table in one pipelined
//!   pass: 0.30 to 0.39 times the sized filter's batched misses on the AMD
//!   machine, where groups of 16 through every table reached 0.14 to 0.21.
//!   It does not skip the lookups found in later tables (moving the
//!   unanswered ones to the front after each pass that found some): that
//!   measured slower (misses 40-41 -> 36-37 M/s, present keys 133-145 ->
//!   116-130), since a block of 1024 already stops once all are found.
//! - Lookups do not pin the thread: the replaced chains are kept until the
//!   filter is dropped instead of collected, as a pin is a sequentially
//!   consistent read-modify-write per operation (against a build with the
//!   pin, five runs interleaved, 2026-11-23: inserts 25.9-28.2 -> 30.4-32.9
//!   M/s, misses 9.6-13.7 -> 8.0-18.9).
//! - Tables are probed newest first and one at a time, stopping at the first
//!   hit. Measured slower and not used: prefetching every table's buckets
//!   before comparing any (misses 5.0 against 6.4 M/s on the AMD machine;
//!   11.2-12.1 against 12.9-14.2 on the Xeon, present keys 19-21 against
//!   47-49); comparing all tables without stopping at the first hit (6.0
//!   against 6.4 M/s); prefetching the two newest tables' buckets, then
//!   probing oldest first (misses 14.7-15.1 against 11.1-13.1, but present
//!   keys 16.4-16.9 against 29.2-41.3, every hit probing all seven tables; the
//!   two newest probed first among themselves: misses 9.2-10.8); prefetching
//!   the second-newest table's buckets before probing the newest (misses
//!   5.1-6.9 against 5.2-11.7 M/s, present keys 11.5-18.2 against 13.8-36.1,
//!   four runs each, interleaved).

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
