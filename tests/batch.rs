//! Batched lookups answer exactly as one lookup at a time, whatever the
//! batch's length: the pipeline runs two groups ahead, and short batches,
//! ragged last groups and groups that end the pipeline must all come out
//! right.

mod common;
use common::mix;
use lockfree_cuckoo_filter::{CuckooFilter, FingerprintBits, GrowableCuckooFilter, DEFAULT_SEED};

/// Keys `0..n` inserted, keys `n..` absent; lookups interleave both.
fn lookups(n: u64, len: u64) -> Vec<u64> {
    (0..len)
        .map(|i| if i % 3 == 0 { mix(n + i) } else { mix(i % n) })
        .collect()
}

/// Answers `hashes` one at a time with `one` and as a batch with `batch`,
/// asserts they agree (and that the batch answers every hash), and returns the
/// answers.
fn agree(
    hashes: &[u64],
    one: impl Fn(u64) -> bool,
    batch: impl Fn(&[u64], &mut [bool]) -> usize,
    what: &str,
) -> Vec<bool> {
    let expected: Vec<bool> = hashes.iter().map(|&h| one(h)).collect();
    // Each answer must be written, whatever `out` held: try both.
    for stale in [false, true] {
        let mut out = vec![stale; hashes.len()];
        assert_eq!(batch(hashes, &mut out), hashes.len(), "{what}");
        assert_eq!(out, expected, "{what}, out filled with {stale}");
    }
    expected
}

/// Asserts that every inserted key of `keys`, made by [`lookups`] (those not
/// at a multiple of three), was answered present: no false negative.
fn all_inserted_found(keys: &[u64], answers: &[bool], what: &str) {
    for (k, (&key, &answer)) in keys.iter().zip(answers).enumerate() {
        if k % 3 != 0 {
            assert!(answer, "{what}: inserted key {key:#x} not found");
        }
    }
}

/// Inserts keys `0..n` into `f` twice, by hash (for the `_hash` lookups)
/// and as items (for `contains` / `contains_batch`, which hash them), then
/// checks both batched lookups against one at a time on [`lookups`] of each
/// length in `lens`, and that no inserted key is missed.
fn batches_agree(f: &CuckooFilter, n: u64, lens: impl IntoIterator<Item = u64>, what: &str) {
    for i in 0..n {
        f.insert_hash(mix(i)).unwrap();
        f.insert(&mix(i)).unwrap();
    }
    for len in lens {
        let hashes = lookups(n, len);
        let expected = agree(
            &hashes,
            |h| f.contains_hash(h),
            |hs, out| f.contains_hash_batch(hs, out),
            &format!("{what}, contains_hash_batch of {len}"),
        );
        let items = agree(
            &hashes,
            |h| f.contains(&h),
            |hs, out| f.contains_batch(hs, out),
            &format!("{what}, contains_batch of {len}"),
        );
        all_inserted_found(&hashes, &expected, what);
        all_inserted_found(&hashes, &items, &format!("{what}, items"));
    }
}

#[test]
fn contains_batch_agrees_with_contains_at_every_length_and_width() {
    let n = 2000;
    for bits in FingerprintBits::ALL {
        let f = CuckooFilter::builder()
            .capacity(2 * n as usize)
            .fingerprint_bits(bits)
            .seed(DEFAULT_SEED)
            .build()
            .unwrap();
        // Every length up to past five groups of 16, then a long one.
        batches_agree(&f, n, (0..=90).chain([1000]), &format!("{bits:?}"));
    }
}

#[test]
fn a_table_beyond_the_caches_batches_alike() {
    // The pipeline requests a large table's buckets into L2 only (a table
    // over 16 MiB, `batch::FAR_TABLE_BYTES`): its other monomorphisation.
    // 64 MiB of 16-bit buckets, mostly untouched (zeroed lazily).
    let f = CuckooFilter::builder()
        .capacity(30_000_000)
        .seed(DEFAULT_SEED)
        .build()
        .unwrap();
    assert!(f.memory_usage() > 32 << 20, "{} bytes", f.memory_usage());
    batches_agree(&f, 2000, (0..=40).chain([1000]), "large table");
}

#[test]
fn batches_answer_only_as_many_as_both_slices_hold() {
    let f = CuckooFilter::builder()
        .capacity(100)
        .seed(DEFAULT_SEED)
        .build()
        .unwrap();
    f.insert_hash(mix(1)).unwrap();
    let hashes = [mix(1); 40];
    let mut out = [false; 17];
    assert_eq!(f.contains_hash_batch(&hashes, &mut out), 17);
    assert!(out.iter().all(|&b| b));
    let mut out = [false; 40];
    assert_eq!(f.contains_hash_batch(&hashes[..33], &mut out), 33);
    assert!(out[..33].iter().all(|&b| b));
    assert!(out[33..].iter().all(|&b| !b), "answered past the items");
}

/// A growable filter built for 100 items, grown to 3000 keys of [`mix`] (each
/// added by `insert`), which spread over more than two tables.
fn grown(insert: impl Fn(&GrowableCuckooFilter, u64)) -> (GrowableCuckooFilter, u64) {
    let f = GrowableCuckooFilter::builder()
        .initial_capacity(100)
        .seed(DEFAULT_SEED)
        .build()
        .unwrap();
    let n = 3000;
    for i in 0..n {
        insert(&f, mix(i));
    }
    assert!(f.table_count() > 2, "items in several tables");
    (f, n)
}

/// [`agree`] on the lookups of `len` keys, then [`all_inserted_found`].
fn agree_finding_all(
    n: u64,
    len: u64,
    one: impl Fn(u64) -> bool,
    batch: impl Fn(&[u64], &mut [bool]) -> usize,
    what: &str,
) {
    let keys = lookups(n, len);
    let answers = agree(&keys, one, batch, &format!("{what} of {len}"));
    all_inserted_found(&keys, &answers, what);
}

#[test]
fn growable_contains_hash_batch_agrees_with_contains_hash() {
    let (f, n) = grown(|f, h| f.insert_hash(h).unwrap());
    // Batches shorter than one block of the table passes, one block, and
    // several with a ragged last one.
    for len in (0..=50).chain([1000, 1024, 1025, 2500]) {
        agree_finding_all(
            n,
            len,
            |h| f.contains_hash(h),
            |hs, out| f.contains_hash_batch(hs, out),
            "growable contains_hash_batch",
        );
    }
}

#[test]
fn growable_contains_batch_agrees_with_contains() {
    let (f, n) = grown(|f, k| f.insert(&k).unwrap());
    for len in [0, 1, 17, 1024, 2500] {
        agree_finding_all(
            n,
            len,
            |k| f.contains(&k),
            |ks, out| f.contains_batch(ks, out),
            "growable contains_batch",
        );
    }
}
