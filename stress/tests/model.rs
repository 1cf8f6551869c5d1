//! Property tests: random operation sequences against a sequential model, the
//! multiset of (bucket pair, fingerprint).
//!
//! The model is exact, not approximate: `contains` of an item is true iff the
//! multiset holds its (pair, fingerprint), and after every operation the table's
//! occupied slots, read as (pair, fingerprint), must equal the multiset. That
//! catches a relocation that loses or duplicates a fingerprint, a failed insert
//! that changes anything, and a remove that takes the wrong fingerprint.
//!
//! Keys are drawn two ways: well-mixed hashes, and colliding ones (a few
//! fingerprints, each with first buckets all over a tiny table), so that items
//! sharing a fingerprint and a bucket pair, with the same or opposite first
//! buckets, meet all the time.

mod common;
use common::mix;
use std::collections::BTreeMap;

use lockfree_cuckoo_filter::test_hooks::{self, TableHooks};
use lockfree_cuckoo_filter::{CuckooFilter, DefaultHashBuilder, FingerprintBits, DEFAULT_SEED};
use proptest::prelude::*;

type Key = (u64, u64, u32);

#[derive(Clone, Debug)]
enum Op {
    Insert(u64),
    Remove(u64),
    Contains(u64),
}

fn op(keys: u64) -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0..keys).prop_map(Op::Insert),
        3 => (0..keys).prop_map(Op::Remove),
        2 => (0..keys * 2).prop_map(Op::Contains),
    ]
}

fn bits() -> impl Strategy<Value = FingerprintBits> {
    prop_oneof![
        Just(FingerprintBits::Bits8),
        Just(FingerprintBits::Bits9),
        Just(FingerprintBits::Bits10),
        Just(FingerprintBits::Bits12),
        Just(FingerprintBits::Bits16),
        Just(FingerprintBits::Bits17),
        Just(FingerprintBits::Bits21),
        Just(FingerprintBits::Bits32),
    ]
}

fn model_key(f: &CuckooFilter, h: u64) -> Key {
    let (i1, i2, fp) = f.position(h);
    (i1.min(i2), i1.max(i2), fp)
}

/// The table's contents as a multiset of (pair, fingerprint).
fn table_multiset(f: &CuckooFilter) -> BTreeMap<Key, usize> {
    let mut m = BTreeMap::new();
    for (bucket, fp) in f.fingerprints() {
        let (_, alt, _) = f.position(f.hash_for(bucket, fp));
        *m.entry((bucket.min(alt), bucket.max(alt), fp)).or_insert(0) += 1;
    }
    m
}

/// Fewest displacements that free a slot in `roots`, following the table's
/// actual contents (a fingerprint in bucket `b` can move to its alternate).
fn distance_to_free_slot(f: &CuckooFilter, roots: [u64; 2]) -> Option<usize> {
    let mut occupants: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
    for (b, fp) in f.fingerprints() {
        occupants.entry(b).or_default().push(fp);
    }
    let mut seen: Vec<u64> = roots.to_vec();
    let mut frontier = roots.to_vec();
    for distance in 0.. {
        if frontier.is_empty() {
            return None;
        }
        if frontier
            .iter()
            .any(|b| occupants.get(b).map_or(0, Vec::len) < 4)
        {
            return Some(distance);
        }
        let mut next = Vec::new();
        for b in frontier {
            for &fp in occupants.get(&b).into_iter().flatten() {
                let (_, alt, _) = f.position(f.hash_for(b, fp));
                if !seen.contains(&alt) {
                    seen.push(alt);
                    next.push(alt);
                }
            }
        }
        frontier = next;
    }
    unreachable!()
}

/// How a key number becomes a 64-bit hash.
type Hash = fn(u64) -> u64;

/// Colliding hashes: key `k` has one of three high halves (so one of three
/// fingerprints, at any width) and a low half, hence a first bucket, spread over
/// the table: keys `k` and `k + 3` share a fingerprint and, in a small table,
/// often a bucket pair, from the same or the other side.
fn colliding(k: u64) -> u64 {
    const HIGH: [u64; 3] = [0x1234_5678, 0x9abc_def0, 0x0f0f_0f0f];
    (HIGH[(k % 3) as usize] << 32) | ((k / 3) << 29 & 0xffff_ffff)
}

fn run(buckets: u64, bits: FingerprintBits, ops: &[Op]) -> Result<(), TestCaseError> {
    run_with(mix, buckets, bits, ops)
}

fn run_with(
    mix: Hash,
    buckets: u64,
    bits: FingerprintBits,
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let f = test_hooks::with_buckets(buckets, bits, DefaultHashBuilder::with_seed(DEFAULT_SEED))
        .unwrap();
    let mut model: BTreeMap<Key, usize> = BTreeMap::new();
    let mut len = 0usize;
    for op in ops {
        match *op {
            Op::Insert(k) => {
                let key = model_key(&f, mix(k));
                let copies = model.get(&key).copied().unwrap_or(0);
                match f.insert_hash(mix(k)) {
                    Ok(()) => {
                        *model.entry(key).or_insert(0) += 1;
                        len += 1;
                    }
                    // The breadth-first search reads every bucket within four
                    // displacements before any at five: failing with a free slot
                    // that close would be a search bug.
                    Err(_) => {
                        let (i1, i2, _) = f.position(mix(k));
                        let distance = distance_to_free_slot(&f, [i1, i2]);
                        prop_assert!(
                            distance.is_none_or(|d| d > 4),
                            "insert failed with a free slot {:?} moves away ({} copies)",
                            distance,
                            copies
                        );
                    }
                }
            }
            Op::Remove(k) => {
                let key = model_key(&f, mix(k));
                let had = model.get(&key).copied().unwrap_or(0);
                prop_assert_eq!(f.remove_hash(mix(k)), had > 0);
                if had > 0 {
                    len -= 1;
                    if had == 1 {
                        model.remove(&key);
                    } else {
                        model.insert(key, had - 1);
                    }
                }
            }
            Op::Contains(k) => {
                let key = model_key(&f, mix(k));
                prop_assert_eq!(f.contains_hash(mix(k)), model.contains_key(&key));
            }
        }
        prop_assert_eq!(f.len(), len);
        prop_assert_eq!(&table_multiset(&f), &model, "after {:?}", op);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Tiny tables: full most of the time, every insert relocates.
    #[test]
    fn tiny_tables_match_the_model(
        buckets in (1u64..4).prop_map(|t| 2 * t),
        bits in bits(),
        ops in prop::collection::vec(op(24), 1..120),
    ) {
        run(buckets, bits, &ops)?;
    }

    /// Colliding keys on tables of 2 to 8 buckets: twins with opposite first
    /// buckets, inserted and removed in any order.
    #[test]
    fn colliding_keys_match_the_model(
        buckets in (1u64..=4).prop_map(|t| 2 * t),
        bits in bits(),
        ops in prop::collection::vec(op(24), 1..160),
    ) {
        run_with(colliding, buckets, bits, &ops)?;
    }

    /// Larger tables with long sequences: deep paths, odd bucket counts.
    #[test]
    fn small_tables_match_the_model(
        buckets in (4u64..20).prop_map(|t| 2 * t),
        bits in bits(),
        ops in prop::collection::vec(op(200), 1..400),
    ) {
        run(buckets, bits, &ops)?;
    }

    /// Duplicates: one item inserted k <= 8 times can be removed k times.
    #[test]
    fn duplicates_insert_and_remove_k_times(k in 1usize..=8, key in any::<u64>(), bits in bits()) {
        let f = test_hooks::with_buckets(64, bits, DefaultHashBuilder::with_seed(DEFAULT_SEED)).unwrap();
        for _ in 0..k {
            prop_assert!(f.insert(&key).is_ok());
        }
        for _ in 0..k {
            prop_assert!(f.contains(&key));
            prop_assert!(f.remove(&key));
        }
        prop_assert!(!f.remove(&key));
        prop_assert!(f.is_empty());
    }
}

/// The colliding keys really collide: in a 2-bucket table every key shares its
/// fingerprint with seven others, some with the opposite first bucket.
#[test]
fn colliding_keys_collide() {
    let f = test_hooks::with_buckets(
        2,
        FingerprintBits::Bits16,
        DefaultHashBuilder::with_seed(DEFAULT_SEED),
    )
    .unwrap();
    let positions: Vec<_> = (0..24).map(|k| f.position(colliding(k))).collect();
    for (k, &(i1, _, fp)) in positions.iter().enumerate() {
        let twins = positions.iter().filter(|&&(_, _, g)| g == fp).count();
        assert_eq!(twins, 8, "key {k}");
        assert!(positions.iter().any(|&(j1, _, g)| g == fp && j1 != i1));
    }
}
