//! Load 10 M items on every core with rayon, save the filter, restore it, and
//! merge in a filter built "on another machine" and shipped as bytes.
//!
//! ```text
//! cargo run --release --example bulk_load [items]
//! ```

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use lockfree_cuckoo_filter::CuckooFilter;
use rayon::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let items: u64 = match std::env::args().nth(1) {
        Some(arg) => arg
            .parse()
            .map_err(|e| format!("items must be a number: {e}"))?,
        None => 10_000_000,
    };
    // Both machines build with one seed, so that their filters merge. A
    // real deployment would keep it secret (and out of the source) if the
    // keys come from untrusted clients; filters otherwise get a random seed.
    let seed: u64 = 0x0b5e_55ed_5eed;
    let build = || {
        CuckooFilter::builder()
            .capacity(items as usize)
            .false_positive_rate(0.001)
            .seed(seed)
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
        "merged filter: {} items, load {:.3}, false-positive rate {:.4} % (expected {:.4} %), {:.2} bits per item",
        restored.len(),
        restored.load_factor(),
        100.0 * false_positives as f64 / probes as f64,
        100.0 * restored.false_positive_rate(),
        8.0 * restored.memory_usage() as f64 / items as f64
    );
    Ok(())
}

/// Loads `range` into `filter` with one `par_insert_all` call, which sweeps
/// the table in table order once per pass of its scratch budget, drawing a
/// progress bar on stderr.
///
/// The bar counts the items as `par_insert_all` takes them from the iterator;
/// it inserts them a pass at a time, so the bar runs ahead of the inserts by
/// at most a pass per thread (the budget: 16 M items of this size), and the
/// last passes are inserted with the bar full.
fn load(
    filter: &CuckooFilter,
    range: std::ops::Range<u64>,
    name: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let total = range.end - range.start;
    let style =
        ProgressStyle::with_template("{prefix:>5} [{bar:40}] {percent:>3}% {elapsed:>3} {msg}")?
            .progress_chars("#>-");
    let bar = ProgressBar::new(total)
        .with_style(style)
        .with_prefix(name.to_string())
        .with_message("loading");
    bar.enable_steady_tick(Duration::from_millis(100));
    let items = range.into_par_iter().map_init(
        || Counter::new(&bar),
        |counter, item| {
            counter.add_one();
            item
        },
    );
    let start = Instant::now();
    filter.par_insert_all(items)?;
    let rate = total as f64 / start.elapsed().as_secs_f64() / 1e6;
    bar.finish_with_message(format!("inserted, {rate:.1} M items/s"));
    Ok(())
}

/// Counts the items one rayon job passes on and adds them to the bar in
/// batches: an update of the bar's shared counter per item would have every
/// thread contend for one cache line.
struct Counter<'a> {
    bar: &'a ProgressBar,
    pending: u64,
}

impl<'a> Counter<'a> {
    const BATCH: u64 = 4096;

    fn new(bar: &'a ProgressBar) -> Self {
        Self { bar, pending: 0 }
    }

    fn add_one(&mut self) {
        self.pending += 1;
        if self.pending == Self::BATCH {
            self.flush();
        }
    }

    fn flush(&mut self) {
        self.bar.inc(std::mem::take(&mut self.pending));
        if Some(self.bar.position()) == self.bar.length() {
            self.bar.set_message("sorting into table order, inserting");
        }
    }
}

impl Drop for Counter<'_> {
    /// A job's last items, fewer than a batch.
    fn drop(&mut self) {
        self.flush();
    }
}
