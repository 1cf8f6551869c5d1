//! The cuckoo filter paper's Table 3 (Fan et al., CoNEXT 2014, §7.1) on this
//! machine: for each layout, a filter of 192 MiB filled on one thread until
//! its first failed insert, then its false-positive rate over absent keys.
//! Prints one markdown table: items, bits per item, measured false-positive
//! rate and construction rate of our layouts, beside the paper's figures.
//!
//! ```text
//! cargo run --release -p benchmarks --example table3                   # 192 MiB, 8/12/16/17 bits
//! cargo run --release -p benchmarks --example table3 -- --mib 4 --widths 12,17
//! ```
//!
//! The paper's "192MB" is 2^25 buckets of four 12-bit entries, 192 MiB. Each
//! layout gets the largest table whose `memory_usage()` is at most `--mib`
//! MiB. Keys are splitmix64 of a counter (present: `i`, absent: `i | 2^63`;
//! splitmix64 is a bijection, so none repeats and none of the absent keys was
//! inserted), hashed by the filter's default hasher inside the timed loop, as
//! the paper's timings include CityHash. Filters are built with the fixed seed,
//! so the counts and rates are reproducible; the rates of construction are one
//! run's.

use std::time::Instant;

use benchmarks::{capacity_for_bytes, filter_with, splitmix};
use lockfree_cuckoo_filter::{CuckooFilter, FingerprintBits};

const USAGE: &str = "usage: table3 [--mib N] [--widths 8,12,16,17,r8,r7,r6,r5,r3] [--absent N]";

/// The paper's Table 3: (filter, items in millions, bits per item,
/// false-positive rate, construction in million keys/s).
const PAPER: [(&str, &str, &str, &str, &str); 6] = [
    ("CF (12-bit)", "127.78", "12.60", "0.19 %", "5.00"),
    (
        "ss-CF (13-bit, semi-sorted)",
        "128.04",
        "12.58",
        "0.09 %",
        "3.13",
    ),
    ("Bloom, k = 9", "123.89", "13.00", "0.19 %", "3.91"),
    ("blocked Bloom", "123.89", "13.00", "0.43 %", "7.64"),
    ("quotient filter", "120.80", "13.33", "0.18 %", "1.91"),
    ("d-left counting Bloom", "103.82", "15.51", "0.76 %", "4.78"),
];

struct Args {
    mib: f64,
    widths: Vec<FingerprintBits>,
    absent: u64,
}

fn parse_widths(spec: &str) -> Result<Vec<FingerprintBits>, String> {
    spec.split(',')
        .map(|w| benchmarks::parse_layout(w).ok_or_else(|| format!("not a layout: {w:?}")))
        .collect()
}

fn parse_args() -> Result<Args, lexopt::Error> {
    use lexopt::prelude::*;

    let mut args = Args {
        mib: 192.0,
        widths: vec![
            FingerprintBits::Bits8,
            FingerprintBits::Bits12,
            FingerprintBits::Bits16,
            FingerprintBits::Bits17,
        ],
        absent: 10_000_000,
    };
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("mib") => args.mib = parser.value()?.parse()?,
            Long("widths") => args.widths = parser.value()?.parse_with(parse_widths)?,
            Long("absent") => args.absent = parser.value()?.parse()?,
            Short('h') | Long("help") => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            _ => return Err(arg.unexpected()),
        }
    }
    Ok(args)
}

/// One layout's row.
struct Row {
    bits: FingerprintBits,
    bytes: usize,
    slots: usize,
    items: u64,
    secs: f64,
    false_positives: u64,
}

/// Inserts keys until the first failure; returns the items inserted and the
/// seconds it took.
#[inline(never)]
fn fill_until_failure(f: &CuckooFilter) -> (u64, f64) {
    let start = Instant::now();
    let mut i = 0u64;
    while f.insert(&splitmix(i)).is_ok() {
        i += 1;
    }
    (i, start.elapsed().as_secs_f64())
}

#[inline(never)]
fn count_false_positives(f: &CuckooFilter, absent: u64) -> u64 {
    (0..absent)
        .filter(|&i| f.contains(&splitmix(i | 1 << 63)))
        .count() as u64
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("table3: {e}\n{USAGE}");
            std::process::exit(2);
        }
    };
    let bytes = (args.mib * (1u64 << 20) as f64) as usize;
    let mut rows = Vec::new();
    for &bits in &args.widths {
        let Some(capacity) = capacity_for_bytes(bits, bytes) else {
            eprintln!(
                "table3: no {}-bit filter fits in {} MiB",
                bits.bits(),
                args.mib
            );
            std::process::exit(2);
        };
        let f = filter_with(capacity, bits);
        eprintln!(
            "{}: {:.2} MiB, {} slots; filling",
            benchmarks::long_name(bits),
            f.memory_usage() as f64 / (1u64 << 20) as f64,
            f.slots()
        );
        let (items, secs) = fill_until_failure(&f);
        eprintln!(
            "  {items} items in {secs:.1} s; {} absent keys",
            args.absent
        );
        rows.push(Row {
            bits,
            bytes: f.memory_usage(),
            slots: f.slots(),
            items,
            secs,
            false_positives: count_false_positives(&f, args.absent),
        });
    }

    println!(
        "Filters of at most {} MiB, filled on one thread until the first failed insert; \
         false-positive rate over {} absent keys.",
        args.mib, args.absent
    );
    println!();
    println!("| filter | MiB | load at failure | items (million) | bits per item | false-positive rate | construction (million keys/s) |");
    println!("|---|--:|--:|--:|--:|--:|--:|");
    for r in &rows {
        println!(
            "| this crate, {} | {:.2} | {:.1} % | {:.2} | {:.2} | {:.4} % | {:.2} |",
            benchmarks::long_name(r.bits),
            r.bytes as f64 / (1u64 << 20) as f64,
            100.0 * r.items as f64 / r.slots as f64,
            r.items as f64 / 1e6,
            r.bytes as f64 * 8.0 / r.items as f64,
            100.0 * r.false_positives as f64 / args.absent as f64,
            r.items as f64 / r.secs / 1e6,
        );
    }
    for (name, items, bpi, fpr, rate) in PAPER {
        println!("| paper: {name} | 192 | – | {items} | {bpi} | {fpr} | {rate} |");
    }
    println!();
    println!(
        "Paper: two Intel Xeon L5640 (2.27 GHz, 12 MB L3), 32 GB DRAM; CityHash, timed \
         with the inserts; the Bloom, blocked Bloom and quotient filters are filled to a \
         target capacity, the cuckoo filters until their first failure."
    );
}
