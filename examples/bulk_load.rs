//! Load 10 M items on every core with rayon, save the filter, restore it, and
//! merge in a filter built "on another machine" and shipped as bytes.
//!
//! ```text
//! cargo run --release --example bulk_load [items]
//! ```

use std::io::Write;
use std::time::Instant;

use lockfree_cuckoo_filter::CuckooFilter;

/// Items loaded per `par_insert_all` call: the progress bar moves once per chunk.
const CHUNK: u64 = 250_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let items: u64 = match std::env::args().nth(1) {
        Some(arg) => arg
            .parse()
            .map_err(|e| format!("items must be a number: {e}"))?,
        None => 10_000_000,
    };
    let build = || {
        CuckooFilter::builder()
            .capacity(items as usize)
            .false_positive_rate(0.001)
            .build()
    };
    println!(
        "{items} items on {} rayon threads",
        rayon::current_num_threads()
    );

    // This machine loads the first half; "another machine" the second half.
    let here = build()?;
    let start = Instant::now();
    load(&here, 0..items / 2, "here")?;
    let there = build()?;
    load(&there, items / 2..items, "there")?;
    let secs = start.elapsed().as_secs_f64();
    println!(
        "loaded {items} items in {secs:.2} s ({:.1} M items/s)",
        items as f64 / secs / 1e6
    );

    // Save both, as they would be written to disk or sent over the network.
    let start = Instant::now();
    let (here_bytes, there_bytes) = (here.to_bytes(), there.to_bytes());
    println!(
        "saved: 2 x {:.1} MiB in {:.0} ms",
        here_bytes.len() as f64 / (1 << 20) as f64,
        start.elapsed().as_secs_f64() * 1e3
    );

    // Restore: the restored filter answers exactly as the saved one.
    let start = Instant::now();
    let restored = CuckooFilter::from_bytes(&here_bytes)?;
    let shipped = CuckooFilter::from_bytes(&there_bytes)?;
    println!(
        "restored both in {:.0} ms",
        start.elapsed().as_secs_f64() * 1e3
    );
    assert_eq!(restored.len(), here.len());
    assert!((0..items)
        .step_by(97)
        .all(|i| restored.contains(&i) == here.contains(&i)));

    // Merge the shipped half in: every item of both halves is present.
    let start = Instant::now();
    restored.merge(&shipped)?;
    println!("merged in {:.0} ms", start.elapsed().as_secs_f64() * 1e3);
    assert_eq!(restored.len() as u64, items);
    assert!(
        (0..items).all(|i| restored.contains(&i)),
        "no false negatives"
    );

    let probes = 1_000_000u64;
    let false_positives = (items..items + probes)
        .filter(|i| restored.contains(i))
        .count();
    println!(
        "merged filter: {} items, load {:.3}, false-positive rate {:.4} % (bound {:.4} %), {:.2} bits per item",
        restored.len(),
        restored.load_factor(),
        100.0 * false_positives as f64 / probes as f64,
        100.0 * restored.false_positive_rate(),
        8.0 * restored.memory_usage() as f64 / items as f64
    );
    Ok(())
}

/// Loads `range` into `filter` in chunks, drawing a progress bar on stderr.
fn load(
    filter: &CuckooFilter,
    range: std::ops::Range<u64>,
    name: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let total = range.end - range.start;
    let start = Instant::now();
    let mut done = 0;
    while done < total {
        let chunk = range.start + done..range.start + (done + CHUNK).min(total);
        done += chunk.end - chunk.start;
        filter.par_insert_all(chunk)?;
        let width = 40;
        let filled = (width as u64 * done / total) as usize;
        eprint!(
            "\r{name:>5} [{}{}] {:3}% {:5.1} M items/s",
            "#".repeat(filled),
            " ".repeat(width - filled),
            100 * done / total,
            done as f64 / start.elapsed().as_secs_f64() / 1e6
        );
        std::io::stderr().flush()?;
    }
    eprintln!();
    Ok(())
}
