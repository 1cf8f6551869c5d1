//! The bulk load's scratch budget: the items held at once never exceed it,
//! counted in items (whatever the threads and rayon's splitting), and passes
//! lose nothing: every item inserted is found, the table holds what a loop of
//! `insert` would, and the items that do not fit come back exactly, having
//! changed nothing.
#![cfg(feature = "rayon")]

use std::collections::HashSet;
use std::hash::BuildHasher;

use lockfree_cuckoo_filter::test_hooks::{self, TableHooks};
use lockfree_cuckoo_filter::{BulkOptions, CuckooFilter, DEFAULT_SEED};
use rayon::prelude::*;

/// A table of 4 MiB or more, so that passes are sorted into table order.
const CAPACITY: usize = 2_000_000;

fn seeded(capacity: usize) -> CuckooFilter {
    CuckooFilter::builder()
        .capacity(capacity)
        .seed(DEFAULT_SEED)
        .build()
        .unwrap()
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

/// The table's contents as a sorted multiset of (bucket pair, fingerprint).
fn held(f: &CuckooFilter) -> Vec<(u64, u64, u32)> {
    let mut held: Vec<_> = f
        .fingerprints()
        .into_iter()
        .map(|(bucket, fp)| pair_of(f, f.hash_for(bucket, fp)))
        .collect();
    held.sort_unstable();
    held
}

fn pair_of(f: &CuckooFilter, hash: u64) -> (u64, u64, u32) {
    let (i1, i2, fp) = f.position(hash);
    (i1.min(i2), i1.max(i2), fp)
}

/// `u64` keys held by `par_insert_all`: a hash and the key, 16 bytes each.
const HELD_U64: usize = 16;

#[test]
fn scratch_never_exceeds_the_budget() {
    let n = 1_000_000u64;
    for threads in [1, 2, 4] {
        for budget in [1_000, 50_000, 300_000] {
            let f = CuckooFilter::with_capacity(CAPACITY);
            let options = BulkOptions::new().scratch_bytes(budget * HELD_U64);
            let (loaded, scratch) = pool(threads).install(|| {
                test_hooks::par_insert_all_scratch(&f, (0..n).into_par_iter(), options)
            });
            assert_eq!(loaded, Ok(n as usize));
            assert!(
                scratch.peak_items <= budget,
                "{threads} threads: {} items held, budget {budget}",
                scratch.peak_items
            );
            // The load streamed: it held items, in passes of at most its
            // share, and needed several.
            let share = budget / threads;
            assert!(scratch.peak_items >= share, "{scratch:?}");
            assert!(scratch.largest_pass <= share, "{scratch:?}");
            assert!(scratch.passes as u64 >= n / share as u64, "{scratch:?}");
            assert_eq!(f.len(), n as usize);
            assert!((0..n).all(|i| f.contains(&i)));
        }
    }
}

/// Items made by parallel work of their own: a task waiting for that work
/// may run other tasks meanwhile, so more tasks than threads can hold passes
/// at once (those that find the budget spent insert with no scratch; the unit
/// test `budget_hands_out_no_more_than_it_has` checks that part on its own,
/// since rayon decides whether it happens here).
#[test]
fn nested_parallel_work_stays_within_the_budget() {
    let n = 300_000u64;
    let budget = 20_000;
    let options = BulkOptions::new().scratch_bytes(budget * HELD_U64);
    for _ in 0..4 {
        let f = CuckooFilter::with_capacity(CAPACITY);
        let items = (0..n).into_par_iter().map(|i| {
            let zero: u64 = (0..8u64).into_par_iter().map(|j| j & !j).sum();
            i + zero
        });
        let (loaded, scratch) =
            pool(4).install(|| test_hooks::par_insert_all_scratch(&f, items, options));
        assert_eq!(loaded, Ok(n as usize));
        assert!(scratch.peak_items <= budget, "{scratch:?}");
        assert!((0..n).all(|i| f.contains(&i)));
    }
}

#[test]
fn par_extend_stays_within_the_budget_and_keeps_no_items() {
    let f = CuckooFilter::with_capacity(CAPACITY);
    let n = 1_000_000u64;
    // `par_extend` holds hashes only: 8 bytes each.
    let budget = 40_000;
    let options = BulkOptions::new().scratch_bytes(budget * 8);
    let (inserted, failed, scratch) =
        pool(2).install(|| test_hooks::par_extend_scratch(&f, (0..n).into_par_iter(), options));
    assert_eq!((inserted, failed), (n as usize, 0));
    assert!(scratch.peak_items <= budget, "{scratch:?}");
    assert!(scratch.passes >= 25, "{scratch:?}");
    assert_eq!(f.len(), n as usize);
    assert!((0..n).all(|i| f.contains(&i)));
}

/// Many small passes leave the table as one `insert` per item would: the
/// same multiset of (bucket pair, fingerprint).
#[test]
fn passes_lose_nothing() {
    let n = 1_000_000u64;
    let (a, b) = (seeded(CAPACITY), seeded(CAPACITY));
    let options = BulkOptions::new().scratch_bytes(70_000 * HELD_U64);
    let (loaded, scratch) =
        pool(3).install(|| test_hooks::par_insert_all_scratch(&a, (0..n).into_par_iter(), options));
    assert_eq!(loaded, Ok(n as usize));
    assert!(scratch.passes >= 14, "{scratch:?}");
    for i in 0..n {
        b.insert(&i).unwrap();
    }
    assert_eq!(a.len(), b.len());
    assert!((0..n).all(|i| a.contains(&i)));
    assert_eq!(held(&a), held(&b));
}

/// Filling the table through small passes: every item is inserted or given
/// back, exactly once, and the table holds exactly the items not given back
/// (an item that did not fit changed nothing, nor evicted anything).
#[test]
fn items_that_do_not_fit_come_back_exactly() {
    let f = seeded(CAPACITY);
    let before: Vec<u64> = (0..1000u64).map(|i| i | 1 << 50).collect();
    for k in &before {
        f.insert(k).unwrap();
    }
    let n = 2_300_000u64;
    let budget = 60_000;
    let options = BulkOptions::new().scratch_bytes(budget * HELD_U64);
    let (loaded, scratch) =
        pool(2).install(|| test_hooks::par_insert_all_scratch(&f, (0..n).into_par_iter(), options));
    let err = loaded.unwrap_err();
    assert!(scratch.peak_items <= budget, "{scratch:?}");
    assert!(f.load_factor() > 0.95, "{}", f.load_factor());
    assert_eq!(f.len(), before.len() + err.inserted());
    let back: HashSet<u64> = err.failed().iter().copied().collect();
    assert_eq!(back.len(), err.failed().len());
    assert_eq!(err.inserted() + back.len(), n as usize);
    assert!(back.len() > 100_000, "{}", back.len());
    assert!(before.iter().all(|k| f.contains(k)));
    let mut rest: Vec<_> = (0..n)
        .filter(|i| !back.contains(i))
        .chain(before.iter().copied())
        .map(|i| pair_of(&f, f.hasher().hash_one(i)))
        .collect();
    rest.sort_unstable();
    assert_eq!(held(&f), rest);
}

/// A budget smaller than one item: every item is inserted as it comes, with
/// nothing held.
#[test]
fn a_budget_below_one_item_holds_nothing() {
    let f = CuckooFilter::with_capacity(CAPACITY);
    let options = BulkOptions::new().scratch_bytes(HELD_U64 - 1);
    let (loaded, scratch) =
        test_hooks::par_insert_all_scratch(&f, (0..100_000u64).into_par_iter(), options);
    assert_eq!(loaded, Ok(100_000));
    assert_eq!((scratch.peak_items, scratch.passes), (0, 0));
    assert!((0..100_000u64).all(|i| f.contains(&i)));
}
