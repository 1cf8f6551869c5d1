use super::*;

/// The item of `hash` as `(bucket pair, fingerprint)`: what a table holds
/// for it, whichever bucket of the pair its copy is in.
fn pair_of(f: &CuckooFilter, hash: u64) -> (u64, u64, u32) {
    let p = f.table.position(hash);
    (p.i1.min(p.i2), p.i1.max(p.i2), p.fp)
}

/// `n`, or a hundredth of it under Miri (whose bulk loading runs through
/// rayon take a few minutes at that size).
fn scaled(n: u64) -> u64 {
    if cfg!(miri) {
        n / 100
    } else {
        n
    }
}

/// The table's contents as a sorted multiset of [`pair_of`]s.
fn held(f: &CuckooFilter) -> Vec<(u64, u64, u32)> {
    let mut held: Vec<_> = f
        .table
        .fingerprints()
        .into_iter()
        .map(|(bucket, fp)| pair_of(f, f.table.hash_for(bucket, fp)))
        .collect();
    held.sort_unstable();
    held
}

#[test]
fn bulk_matches_one_by_one() {
    // One seed for both, so that an item has the same place in each.
    let n = scaled(200_000);
    let seeded = || {
        CuckooFilter::builder()
            .capacity(n as usize)
            .seed(crate::DEFAULT_SEED)
            .build()
            .unwrap()
    };
    let (a, b) = (seeded(), seeded());
    assert_eq!(a.par_insert_all((0..n).into_par_iter()), Ok(n as usize));
    for i in 0..n {
        b.insert(&i).unwrap();
    }
    assert_eq!(a.len(), b.len());
    assert!((0..n).all(|i| a.contains(&i)));
    // Same multiset of fingerprints, read as (bucket pair, fingerprint).
    assert_eq!(held(&a), held(&b));
}

#[test]
fn full_filter_gives_back_exactly_the_rest() {
    let f = CuckooFilter::builder()
        .capacity(scaled(10_000) as usize)
        .seed(crate::DEFAULT_SEED)
        .build()
        .unwrap();
    let n = scaled(20_000);
    let err = f.par_insert_all((0..n).into_par_iter()).unwrap_err();
    assert_eq!(err.inserted(), f.len());
    let all = err.failed();
    assert_eq!(err.inserted() + all.len(), n as usize);
    // Every item is either in the table or given back, none is both, none
    // is lost: the table holds exactly the items not given back, read as
    // (bucket pair, fingerprint).
    let back: std::collections::HashSet<u64> = all.iter().copied().collect();
    assert_eq!(back.len(), all.len());
    let mut rest: Vec<_> = (0..n)
        .filter(|i| !back.contains(i))
        .map(|i| pair_of(&f, f.hasher.hash_one(i)))
        .collect();
    rest.sort_unstable();
    assert_eq!(held(&f), rest);
}

#[test]
fn sorted_path_on_a_table_larger_than_the_caches() {
    // A 4 MiB table (40 KiB under Miri) is loaded in table order.
    let f = CuckooFilter::with_capacity(scaled(2_000_000) as usize);
    assert!(f.memory_usage() >= SORT_MIN_TABLE_BYTES);
    let n = scaled(1_000_000);
    assert!(n as usize >= SORT_MIN_ITEMS);
    assert_eq!(f.par_insert_all((0..n).into_par_iter()), Ok(n as usize));
    assert_eq!(f.len(), n as usize);
    assert!((0..n).all(|i| f.contains(&i)));
    // Filling it up: everything is inserted or given back, exactly once.
    let m = scaled(2_080_000);
    let err = f.par_insert_all((n..m).into_par_iter()).unwrap_err();
    assert_eq!(f.len(), n as usize + err.inserted());
    assert!(f.load_factor() > 0.95, "{}", f.load_factor());
    let back: std::collections::HashSet<u64> = err.failed().iter().copied().collect();
    assert_eq!(back.len() + err.inserted(), (m - n) as usize);
    assert!((0..m).all(|i| back.contains(&i) || f.contains(&i)));
    // par_extend takes the same path.
    let g = CuckooFilter::with_capacity(scaled(2_000_000) as usize);
    (&g).par_extend((0..n).into_par_iter());
    assert_eq!(g.len(), n as usize);
}

/// More tasks than threads asking for room: the shares handed out never
/// add up to more than the budget, and what is given back is handed out
/// again.
#[test]
fn budget_hands_out_no_more_than_it_has() {
    let threads = rayon::current_num_threads();
    let budget = Budget::new(1000 * threads + 7);
    let taken: Vec<usize> = (0..threads + 3).map(|_| budget.take()).collect();
    assert_eq!(taken.iter().sum::<usize>(), 1000 * threads + 7);
    assert!(taken.iter().all(|&t| t <= 1000 + 7 / threads));
    assert_eq!(budget.take(), 0);
    budget.give_back(taken[0]);
    assert_eq!(budget.take(), taken[0]);
    assert_eq!(budget.take(), 0);
}

#[test]
fn passes_sort_into_bucket_order_in_place() {
    let mut rng = crate::test_rng::xorshift(7);
    let mut hashes: Vec<u64> = (0..scaled(100_000)).map(|_| rng()).collect();
    hashes.extend([u64::MAX, 0, 1 << 31, 5 << 20, u64::from(u32::MAX) << 32]);
    let mut expected = hashes.clone();
    let (mut starts, mut next) = (Vec::new(), Vec::new());
    sort_into_partitions(&mut hashes, &mut starts, &mut next);
    let parts = starts.clone();
    for p in 0..1 << FIRST_BITS {
        let part = &mut hashes[parts[p]..parts[p + 1]];
        assert!(part.iter().all(|&h| first_key(h) == p));
        sort_partition(part, &mut starts, &mut next);
    }
    // Ordered by the top FIRST_BITS + SECOND_BITS bits of the low half,
    // which order the first buckets; nothing lost or duplicated.
    let top = |h: u64| (h as u32) >> (32 - FIRST_BITS - SECOND_BITS);
    assert!(hashes.windows(2).all(|w| top(w[0]) <= top(w[1])));
    hashes.sort_unstable();
    expected.sort_unstable();
    assert_eq!(hashes, expected);
    let below = 32 - FIRST_BITS - SECOND_BITS;
    assert_eq!(second_key(5 << 20), 5 << (20 - below));
}

#[test]
fn par_extend_panics_when_full_keeping_what_fit() {
    let f = CuckooFilter::with_capacity(1000);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        (&f).par_extend((0..5000u64).into_par_iter());
    }));
    assert!(r.is_err());
    assert!(f.len() >= 950);
    let present = (0..5000u64).filter(|i| f.contains(i)).count();
    assert!(present >= f.len());
}

#[test]
fn growable_bulk_load_grows_and_gives_back_what_cannot_go_in() {
    let n = scaled(50_000);
    let f = GrowableCuckooFilter::with_capacity(100);
    assert_eq!(f.par_insert_all((0..n).into_par_iter()), Ok(n as usize));
    assert_eq!(f.len(), n as usize);
    assert!(f.table_count() > 1);
    assert!((0..n).all(|i| f.contains(&i)));
    // Copies of one item beyond what its buckets hold in a large table.
    let g = GrowableCuckooFilter::with_capacity(100_000);
    let err = g.par_insert_all(vec![7u32; 20]).unwrap_err();
    assert_eq!(err.reason(), InsertError::TooManyCopies);
    assert_eq!(err.inserted(), 8);
    assert_eq!(err.failed(), &[7u32; 12][..]);
    assert_eq!(g.len(), 8);
}

/// Guarantee 1 while a bulk load runs: the items in the filter before it
/// are found by every lookup during it, although its inserts relocate
/// them (it fills the table to its capacity, where most inserts move
/// items). A lookup misses only if a move it races is unannounced, a
/// window of nanoseconds, so a small set of held items is looked up over
/// and over, in rounds of fresh filters.
#[test]
fn lookups_during_a_bulk_load_find_the_items_already_in() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let capacity = scaled(200_000);
    let held: Vec<u64> = (0..scaled(2_000)).map(|i| i | 1 << 40).collect();
    let bulk = capacity - held.len() as u64;
    for round in 0..4 {
        let f = CuckooFilter::with_capacity(capacity as usize);
        for k in &held {
            f.insert(k).unwrap();
        }
        let done = AtomicBool::new(false);
        let (misses, lookups) = std::thread::scope(|s| {
            let reader = s.spawn(|| {
                let (mut misses, mut lookups) = (0, 0);
                while !done.load(Ordering::Relaxed) {
                    misses += held.iter().filter(|k| !f.contains(k)).count();
                    lookups += held.len();
                }
                (misses, lookups)
            });
            let loaded = f.par_insert_all((0..bulk).into_par_iter());
            done.store(true, Ordering::Relaxed);
            assert_eq!(loaded, Ok(bulk as usize));
            reader.join().unwrap()
        });
        assert_eq!(
            misses, 0,
            "round {round}: {misses} of {lookups} lookups missed a held item"
        );
        assert!(held.iter().all(|k| f.contains(k)));
    }
}

#[test]
fn concurrent_with_other_threads() {
    let (bulk, one_by_one) = (scaled(300_000), scaled(100_000));
    let f = CuckooFilter::with_capacity((bulk + one_by_one) as usize);
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..one_by_one {
                f.insert(&(i + (1 << 40))).unwrap();
            }
        });
        assert_eq!(
            f.par_insert_all((0..bulk).into_par_iter()),
            Ok(bulk as usize)
        );
    });
    assert_eq!(f.len(), (bulk + one_by_one) as usize);
    assert!((0..bulk).all(|i| f.contains(&i)));
    assert!((0..one_by_one).all(|i| f.contains(&(i + (1 << 40)))));
}
