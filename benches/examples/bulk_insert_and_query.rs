//! The workload of the C++ reference's `benchmarks/bulk-insert-and-query.cc`
//! (efficient/cuckoofilter): N random keys inserted in order, then passes of
//! 1 M lookups with 0, 25, 50, 75 and 100 % of them present, by `contains`
//! one at a time and by one `contains_batch` call. See
//! `src/bulk_insert_and_query.rs` for exactly what is timed.
//!
//! ```text
//! cargo run --release -p benchmarks --example bulk_insert_and_query                  # 1 M items, 16 then 8 bits
//! cargo run --release -p benchmarks --example bulk_insert_and_query -- --items 30000000 --bits 16
//! ```
//!
//! Prints a markdown table, one row per configuration: millions of inserts
//! per second, millions of lookups per second at each share of present keys
//! ("`contains` / `contains_batch`"), the measured false-positive rate and
//! the bits per item.

use benchmarks::bulk_insert_and_query::{run, Report};
use lockfree_cuckoo_filter::FingerprintBits;

const USAGE: &str = "\
usage: bulk_insert_and_query [--items N] [--bits 8|16|32]

  --items N     keys inserted (default 1000000)
  --bits B      fingerprint width; without it, 16 then 8";

struct Args {
    items: usize,
    bits: Vec<FingerprintBits>,
}

fn parse_bits(s: &str) -> Result<FingerprintBits, String> {
    FingerprintBits::ALL
        .into_iter()
        .find(|b| b.bits().to_string() == s)
        .ok_or_else(|| format!("not a fingerprint width: {s:?} (8, 16 or 32)"))
}

fn parse_args() -> Result<Args, lexopt::Error> {
    use lexopt::prelude::*;

    let mut args = Args {
        items: 1_000_000,
        bits: vec![FingerprintBits::Bits16, FingerprintBits::Bits8],
    };
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("items") => args.items = parser.value()?.parse()?,
            Long("bits") => args.bits = vec![parser.value()?.parse_with(parse_bits)?],
            Short('h') | Long("help") => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            _ => return Err(arg.unexpected()),
        }
    }
    if args.items == 0 {
        return Err("--items must be at least 1".into());
    }
    Ok(args)
}

fn main() {
    let args = parse_args().unwrap_or_else(|e| {
        eprintln!("bulk_insert_and_query: {e}\n{USAGE}");
        std::process::exit(2);
    });
    println!("{}\n", Report::LEGEND);
    println!("{}", Report::header());
    for bits in args.bits {
        let report = match run(args.items, bits) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("bulk_insert_and_query: cannot build the filter: {e}");
                std::process::exit(1);
            }
        };
        println!("{}", report.row());
        if report.failed_adds > 0 {
            eprintln!(
                "note: {} of {} inserts failed ({} bits)",
                report.failed_adds,
                args.items,
                bits.bits()
            );
        }
    }
}
