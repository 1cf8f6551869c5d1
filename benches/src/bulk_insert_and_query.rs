//! The workload of the C++ reference implementation's
//! `benchmarks/bulk-insert-and-query.cc` (efficient/cuckoofilter), so that our
//! figures can be set beside the ones published for it:
//!
//! 1. N random 64-bit keys are generated (untimed), and a filter is built for
//!    N items (`builder().capacity(N)`, 8- or 16-bit fingerprints);
//! 2. the N keys are inserted one after another (timed);
//! 3. for each share of present keys p in 0, 25, 50, 75 and 100 %, a list of
//!    1 M queries is built and shuffled (untimed): p of them drawn at random
//!    from the inserted keys, the rest keys that were never inserted; then
//!    one pass of `contains` over the list, summing the answers, is timed;
//!    then the list is built again, the same, and one `contains_batch` call
//!    over it is timed.
//!
//! Each timed pass follows its own build of the list, as the C++ benchmark's
//! one pass does: building and shuffling 8 MB of queries pushes much of the
//! table out of the core's cache. A second pass straight over the same list
//! found it warm, and ran 10 to 17 % faster (1 M keys, 16-bit).
//!
//! The false-positive rate is measured on the list with no present keys.
//!
//! The keys are `splitmix(i)` for distinct inputs: random-looking, and, as
//! splitmix is a bijection of `u64`, the absent keys are guaranteed never to
//! equal an inserted one (the C++ code draws both from one random stream).

use std::hint::black_box;
use std::time::Instant;

use lockfree_cuckoo_filter::{BuildError, CuckooFilter, FingerprintBits};

use crate::keys::splitmix;

/// Queries per lookup pass, as in the C++ benchmark (`SAMPLE_SIZE`).
pub const QUERIES: usize = 1_000_000;

/// The shares of present keys among the queries, in percent.
pub const FOUND_PERCENTS: [u32; 5] = [0, 25, 50, 75, 100];

/// Inputs of splitmix for keys that are never inserted: disjoint from the
/// inputs `0..n` of inserted keys for any n below 2^63.
const ABSENT: u64 = 1 << 63;

/// The `n` keys to insert, in insertion order.
pub fn added_keys(n: usize) -> Vec<u64> {
    (0..n as u64).map(splitmix).collect()
}

/// A shuffled list of `len` queries of which `percent` % are drawn at random
/// (with repetition, as in the C++ code) from `added`, the rest keys never
/// added. `round` picks the random draws and the absent keys, so that lists
/// of successive rounds differ.
pub fn query_list(added: &[u64], percent: u32, len: usize, round: u64) -> Vec<u64> {
    let present = if added.is_empty() {
        0
    } else {
        len * percent as usize / 100
    };
    // SplitMix64 over a counter, seeded by the round.
    let seed = splitmix(round ^ 0x5bd1_e995);
    let mut counter = 0u64;
    let mut next = || {
        counter += 1;
        splitmix(seed.wrapping_add(counter))
    };
    let first_absent = ABSENT | (round << 32);
    let mut list: Vec<u64> = (0..len)
        .map(|i| {
            if i < present {
                added[(next() % added.len() as u64) as usize]
            } else {
                splitmix(first_absent + i as u64)
            }
        })
        .collect();
    // Fisher–Yates.
    for i in (1..list.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        list.swap(i, j);
    }
    list
}

/// The filter the workload runs on: sized for `n` items, `bits`-bit fingerprints.
pub fn filter_for(n: usize, bits: FingerprintBits) -> Result<CuckooFilter, BuildError> {
    CuckooFilter::builder()
        .capacity(n)
        .fingerprint_bits(bits)
        .build()
}

/// Inserts `keys` in order. Returns the number of inserts that failed.
#[inline(never)]
pub fn insert_all(f: &CuckooFilter, keys: &[u64]) -> u64 {
    keys.iter().map(|k| u64::from(f.insert(k).is_err())).sum()
}

/// One pass of `contains` over `queries`; the number found.
#[inline(never)]
pub fn contains_each(f: &CuckooFilter, queries: &[u64]) -> u64 {
    queries.iter().map(|k| u64::from(f.contains(k))).sum()
}

/// One `contains_batch` call over `queries`, answers into `out` (as long as
/// `queries`), then the count of those found (timed with the call, as the
/// plain pass sums its answers as it goes).
#[inline(never)]
pub fn contains_batch(f: &CuckooFilter, queries: &[u64], out: &mut [bool]) -> u64 {
    f.contains_batch(queries, out);
    out.iter().map(|&b| u64::from(b)).sum()
}

/// The figures of one run.
#[derive(Clone, Debug)]
pub struct Report {
    pub items: usize,
    pub bits: FingerprintBits,
    /// Inserts per second, in millions.
    pub add_mops: f64,
    /// Inserts that returned an error.
    pub failed_adds: u64,
    /// `contains` per second, in millions, for each of [`FOUND_PERCENTS`].
    pub contains_mops: [f64; 5],
    /// The same with one `contains_batch` call over the list.
    pub batch_mops: [f64; 5],
    /// False positives per absent query, from the list with no present keys.
    pub false_positive_rate: f64,
    /// Bytes of the filter × 8 / items.
    pub bits_per_item: f64,
}

/// Runs the whole workload once: `n` keys, `bits`-bit fingerprints,
/// [`QUERIES`] queries per lookup pass.
pub fn run(n: usize, bits: FingerprintBits) -> Result<Report, BuildError> {
    let keys = added_keys(n);
    let f = filter_for(n, bits)?;

    let t = Instant::now();
    let failed_adds = insert_all(&f, &keys);
    let add_secs = t.elapsed().as_secs_f64();

    // Written (not `vec![false; ..]`, which maps zeroed pages lazily) so that
    // the first timed batch does not also pay for the page faults of its
    // output: the C++ benchmark has no output buffer.
    let mut out = vec![true; QUERIES];
    let mut contains_mops = [0.0; 5];
    let mut batch_mops = [0.0; 5];
    let mut false_positive_rate = 0.0;
    for (i, &percent) in FOUND_PERCENTS.iter().enumerate() {
        let queries = query_list(&keys, percent, QUERIES, i as u64);

        let t = Instant::now();
        let found = black_box(contains_each(&f, &queries));
        contains_mops[i] = mops(QUERIES, t);

        // The same list, built again (see the module documentation).
        drop(queries);
        let queries = query_list(&keys, percent, QUERIES, i as u64);
        let t = Instant::now();
        let found_batch = black_box(contains_batch(&f, &queries, &mut out));
        batch_mops[i] = mops(QUERIES, t);

        // Not a timing check: both forms must give the same answers.
        assert_eq!(found, found_batch, "contains and contains_batch disagree");
        if percent == 0 {
            false_positive_rate = found as f64 / QUERIES as f64;
        }
    }
    Ok(Report {
        items: n,
        bits,
        add_mops: n as f64 / add_secs / 1e6,
        failed_adds,
        contains_mops,
        batch_mops,
        false_positive_rate,
        bits_per_item: f.memory_usage() as f64 * 8.0 / n as f64,
    })
}

fn mops(ops: usize, since: Instant) -> f64 {
    ops as f64 / since.elapsed().as_secs_f64() / 1e6
}

impl Report {
    /// What the columns of the table hold, to print above it.
    pub const LEGEND: &'static str = "Millions of operations per second. A lookup \
        column is the share of present keys among the queries, and holds \
        `contains` / `contains_batch`.";

    /// The header of the markdown table [`Report::row`] writes rows of.
    pub fn header() -> String {
        let mut h = String::from("| items | fingerprint | adds |");
        let mut rule = String::from("|--:|--:|--:|");
        for p in FOUND_PERCENTS {
            h.push_str(&format!(" {p} % |"));
            rule.push_str("--:|");
        }
        h.push_str(" false positives | bits/item |");
        rule.push_str("--:|--:|");
        format!("{h}\n{rule}")
    }

    /// One markdown table row.
    pub fn row(&self) -> String {
        let mut r = format!(
            "| {} | {} bits | {:.1} |",
            self.items,
            self.bits.bits(),
            self.add_mops
        );
        for (c, b) in self.contains_mops.iter().zip(&self.batch_mops) {
            r.push_str(&format!(" {c:.1} / {b:.1} |"));
        }
        r.push_str(&format!(
            " {:.4} % | {:.2} |",
            100.0 * self.false_positive_rate,
            self.bits_per_item
        ));
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn query_lists_hold_the_asked_share_of_added_keys() {
        let added = added_keys(1000);
        let set: HashSet<u64> = added.iter().copied().collect();
        assert_eq!(set.len(), added.len(), "added keys are distinct");
        for (round, percent) in FOUND_PERCENTS.into_iter().enumerate() {
            let list = query_list(&added, percent, 10_000, round as u64);
            assert_eq!(list.len(), 10_000);
            let present = list.iter().filter(|k| set.contains(k)).count();
            assert_eq!(present, 10_000 * percent as usize / 100);
        }
    }

    #[test]
    fn query_lists_are_shuffled() {
        let added = added_keys(1000);
        let list = query_list(&added, 50, 1000, 0);
        let set: HashSet<u64> = added.iter().copied().collect();
        let present_in_first_half = list[..500].iter().filter(|k| set.contains(k)).count();
        assert!((150..350).contains(&present_in_first_half));
    }

    #[test]
    fn a_small_run_finds_every_added_key() {
        let keys = added_keys(5000);
        for bits in [FingerprintBits::Bits8, FingerprintBits::Bits16] {
            let f = filter_for(keys.len(), bits).unwrap();
            assert_eq!(insert_all(&f, &keys), 0);
            let mut out = vec![false; keys.len()];
            assert_eq!(contains_each(&f, &keys), keys.len() as u64);
            assert_eq!(contains_batch(&f, &keys, &mut out), keys.len() as u64);
        }
    }
}
