use super::chain::Covering;
use super::summary::Summary;
use super::*;
use crate::builder::buckets_for;
use crate::error::{BuildError, InsertError};
use crate::fingerprint::FingerprintBits;
use std::cell::RefCell;
use std::hash::BuildHasher;

thread_local! {
    /// The tables (indices in the chain) whose readings by a covering on
    /// this thread are to fail, one entry a failed try.
    static DISBELIEVED: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// Makes the next readings of these tables (one entry a try) by a
/// covering on this thread fail without reading, as readings during
/// which something moved or was taken do.
fn disbelieve(tries: &[usize]) {
    DISBELIEVED.with(|d| *d.borrow_mut() = tries.to_vec());
}

/// Whether this try at reading table `k` is to fail (see
/// [`disbelieve`]); takes one entry for `k`.
pub(super) fn disbelieved(k: usize) -> bool {
    DISBELIEVED.with(|d| {
        let mut d = d.borrow_mut();
        let at = d.iter().position(|&t| t == k);
        at.map(|i| d.remove(i)).is_some()
    })
}

/// splitmix64: distinct, well-mixed 64-bit hashes from a counter.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The budget's bounds are the same bits on every platform (the decoder
/// of a chain recomputes them), and what `false_positive_rate(1.0)` says
/// through the platform's `powf`, nearly: `1 - x^8` with `x` near 1
/// magnifies the last bit of `x^8` (by 10^8 at 32 bits), so one ulp of
/// libm difference moves that bound in its eighth digit. (With glibc the
/// two agree to the bit; Miri, which perturbs `powf`, moved the 16-bit
/// one by 3·10^-12.)
#[test]
fn bounds_are_pinned() {
    let pinned = [
        (FingerprintBits::Bits8, 0x3f9f_90de_e8df_9020),
        (FingerprintBits::Bits16, 0x3f1f_ff90_00e0_0000),
        (FingerprintBits::Bits32, 0x3e20_0000_0000_0000),
    ];
    for (b, bits) in pinned {
        assert_eq!(bound(b).to_bits(), bits, "{b:?}");
    }
    // Every plain or semi-sorted width, buckets of five and six slots
    // included (the ranked ones, which growth never uses, take their
    // fingerprints from other than `2^bits` values).
    for b in FingerprintBits::ALL.into_iter().filter(|b| !b.is_ranked()) {
        let libm = b.false_positive_rate(1.0);
        assert!((bound(b) - libm).abs() <= 1e-6 * libm, "{b:?}: {libm}");
    }
}

#[test]
fn budget_never_exceeds_the_rate() {
    for rate in [0.5, 0.1, 0.01, 1e-3, 1e-4, 1e-6, 1e-8, 4e-9] {
        let mut spent = 0.0;
        let mut widths = Vec::new();
        while let Some(bits) = width_for(rate, spent) {
            spent += bound(bits);
            widths.push(bits.bits());
            assert!(spent < rate, "{rate}: {widths:?}");
            if widths.len() == 40 {
                break;
            }
        }
        assert!(!widths.is_empty(), "{rate}");
        assert!(
            widths.windows(2).all(|w| w[0] <= w[1]),
            "{rate}: {widths:?}"
        );
    }
    // The default rate: seven 16-bit tables, then 32-bit ones.
    let mut spent = 0.0;
    let widths: Vec<u32> = (0..10)
        .map(|_| {
            let b = width_for(DEFAULT_RATE, spent).unwrap();
            spent += bound(b);
            b.bits()
        })
        .collect();
    assert_eq!(widths, [16, 16, 16, 16, 16, 16, 16, 32, 32, 32]);
    // Near the 32-bit floor only a few tables fit.
    let mut spent = 0.0;
    let mut n = 0;
    while let Some(b) = width_for(1e-8, spent) {
        spent += bound(b);
        n += 1;
    }
    assert_eq!(n, 4);
}

#[test]
fn grows_and_keeps_everything() {
    let f = GrowableCuckooFilter::builder()
        .initial_capacity(100)
        .false_positive_rate(0.1)
        .build()
        .unwrap();
    let n = 100_000u64;
    for i in 0..n {
        f.insert_hash(mix(i)).unwrap();
    }
    assert_eq!(f.len() as u64, n);
    assert!(f.table_count() >= 5, "{f:?}");
    assert!((0..n).all(|i| f.contains_hash(mix(i))));
    let bits = f.fingerprint_bits();
    assert_eq!(bits[0], FingerprintBits::Bits8);
    assert!(bits.windows(2).all(|w| w[0] <= w[1]));
    // Two runs of widths, so lookups and removes also take the path for
    // the runs after the newest (`chain::any_of`).
    assert_eq!(bits.last(), Some(&FingerprintBits::Bits16));
    // Removing an inserted item may take another's copy from a newer table
    // (see `remove_hash`): that item's own remove then finds nothing, and
    // it reads as absent. At most the false-positive rate of the removes,
    // in either case.
    let allowed = (n / 2) as f64 * f.max_false_positive_rate();
    let failed = (0..n)
        .step_by(2)
        .filter(|&i| !f.remove_hash(mix(i)))
        .count();
    assert!((failed as f64) <= allowed, "{failed}");
    assert_eq!(f.len(), (n / 2) as usize + failed);
    let missing = (1..n)
        .step_by(2)
        .filter(|&i| !f.contains_hash(mix(i)))
        .count();
    assert!((missing as f64) <= allowed, "{missing}");
}

#[test]
fn a_built_filter_never_runs_out_of_budget() {
    let floor = chain::smallest_rate();
    assert!(floor > 3e-8 && floor < 4e-8, "{floor}");
    // Every rate the builder accepts gives a width to all the tables growth
    // can add; just below the floor, the builder says no.
    for rate in [0.5, 0.1, 0.03, 0.01, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, floor] {
        let f = GrowableCuckooFilter::builder()
            .false_positive_rate(rate)
            .build();
        assert!(f.is_ok(), "{rate}");
        assert_eq!(
            chain::widths(rate, chain::GROWN_TABLES).len(),
            chain::GROWN_TABLES as usize,
            "{rate}"
        );
    }
    for rate in [floor * 0.99, 1e-8, 1e-9] {
        assert!(
            matches!(
                GrowableCuckooFilter::builder()
                    .false_positive_rate(rate)
                    .build(),
                Err(BuildError::UnreachableGrowableRate { .. })
            ),
            "{rate}"
        );
    }
}

#[test]
fn layouts_are_the_tables_growth_makes() {
    // From a chain decoded with a doubled table (growth goes on by
    // four), at a rate whose budget gives three more 8-bit tables, then
    // 16-bit ones.
    let tables = vec![
        AnyTable::new(FingerprintBits::Bits8, 4).unwrap(),
        AnyTable::new(FingerprintBits::Bits8, 8).unwrap(),
    ];
    let rate = 0.2;
    let mut chain = Chain::from_tables(tables, rate).unwrap();
    let planned = chain.layouts(rate, 7).unwrap();
    assert_eq!(
        chain.layouts(rate, 1).unwrap(),
        planned[..2],
        "fewer than it has"
    );
    for _ in 2..7 {
        chain = chain.grown(rate).unwrap();
    }
    let grown: Vec<_> = chain.tables().iter().map(|t| t.layout()).collect();
    assert_eq!(planned, grown);
    assert_eq!(grown[4], (FingerprintBits::Bits8, 512), "{grown:?}");
    assert_eq!(grown[5], (FingerprintBits::Bits16, 2048), "{grown:?}");
    // Where growth would stop, `layouts` stops with the same error.
    let tables = (0..4)
        .map(|k| AnyTable::new(FingerprintBits::Bits32, 2 << k).unwrap())
        .collect();
    let chain = Chain::from_tables(tables, 1e-8).unwrap();
    assert_eq!(chain.layouts(1e-8, 5).err(), chain.grown(1e-8).err());
    assert!(chain.layouts(1e-8, 4).is_ok());
}

#[test]
fn rate_exhaustion_is_an_error_that_changes_nothing() {
    // A chain decoded from a version that doubled may be longer than
    // growth by four makes: four 32-bit tables spend all of 1e-8.
    let tables = (0..4)
        .map(|k| AnyTable::new(FingerprintBits::Bits32, 2 << k).unwrap())
        .collect();
    let chain = Chain::from_tables(tables, 1e-8).unwrap();
    assert_eq!(
        chain.grown(1e-8).err(),
        Some(InsertError::RateExhausted {
            rate: 1e-8,
            tables: 4
        })
    );
    assert_eq!(chain.tables().len(), 4);
}

#[test]
fn grown_from_1000_to_4m_items_at_the_default_rate() {
    // The sizes and widths growth gives (no items needed): seven 16-bit
    // tables hold 4 M items, and their memory is within twice that of one
    // 16-bit table sized for 4 M.
    let first = buckets_for(DEFAULT_INITIAL_CAPACITY, FingerprintBits::Bits16).unwrap();
    let widths = chain::widths(DEFAULT_RATE, 7);
    assert!(
        widths.iter().all(|&b| b == FingerprintBits::Bits16),
        "{widths:?}"
    );
    let buckets: Vec<u64> = (0..7).map(|k| first * chain::GROWTH.pow(k)).collect();
    let capacity: usize = buckets
        .iter()
        .map(|&b| crate::builder::capacity_for(b, FingerprintBits::Bits16))
        .sum();
    assert!(capacity >= 4_000_000, "{capacity}");
    let sized = buckets_for(4_000_000, FingerprintBits::Bits16).unwrap();
    let chain_buckets: u64 = buckets.iter().sum();
    assert!(chain_buckets <= 2 * sized, "{chain_buckets} vs {sized}");
}

/// A filter grown from 100 items to seven tables, its five oldest behind
/// the summary, and its items.
fn covered_filter() -> (GrowableCuckooFilter, u64) {
    let f = GrowableCuckooFilter::builder()
        .initial_capacity(100)
        .seed(7)
        .build()
        .unwrap();
    let mut n = 0u64;
    while f.table_count() < 7 || n % 1000 != 0 {
        f.insert(&n).unwrap();
        n += 1;
    }
    assert_eq!(f.covered_tables(), 5);
    (f, n)
}

#[test]
fn count_adds_the_copies_of_every_table() {
    let (f, n) = covered_filter();
    // Item 0 is in the oldest table, behind the summary; a copy of it in
    // the newest table too.
    f.insert(&0u64).unwrap();
    assert_eq!(f.count(&0u64), 2);
    assert!((1..n).all(|i| f.count(&i) >= 1));
    assert!(f.remove(&0u64));
    assert_eq!(f.count(&0u64), 1);
    // Items never inserted: as many copies as false positives.
    let counted: usize = (n..n + 10_000).map(|i| f.count(&i)).sum();
    assert!(counted < 10, "{counted} copies of 10 000 absent items");
}

#[test]
fn older_tables_behind_the_summary_miss_nothing() {
    let (f, n) = covered_filter();
    assert!((0..n).all(|i| f.contains(&i)));
    // Batched lookups agree, present and absent items alike.
    let items: Vec<u64> = (0..2 * n).collect();
    let mut out = vec![false; items.len()];
    f.contains_batch(&items, &mut out);
    assert!(items.iter().zip(&out).all(|(i, &o)| o == f.contains(i)));
    // Most absent items are answered by the summary alone.
    let chain = f.chain();
    let Covering {
        summary,
        tables: covered,
    } = chain.covered().unwrap();
    let hasher = f.hasher();
    let passing = (n..2 * n)
        .filter(|i| summary.may_hold(hasher.hash_one(i)))
        .count();
    assert!(passing < n as usize / 5, "{passing} of {n} pass");
    // The first 100 items are in the first table, behind the summary:
    // removes find them.
    assert_eq!(*covered, 5);
    assert!((0..100u64).all(|i| f.remove(&i)));
    // Gone (seed 7: none of them reads present as a false positive).
    assert!(
        (0..100u64).all(|i| !f.contains(&i)),
        "a removed item still found"
    );
    assert_eq!(f.len() as u64, n - 100);
    // A decoded filter covers the same tables.
    let g = GrowableCuckooFilter::from_bytes_with_hasher(&f.to_bytes(), *hasher).unwrap();
    assert_eq!(g.covered_tables(), 5);
    assert!((100..n).all(|i| g.contains(&i)));
}

#[test]
fn an_insert_into_a_covered_table_records_its_item() {
    let (f, n) = covered_filter();
    // An item whose bit is clear, so that only its own insert can set it.
    let clear = |f: &GrowableCuckooFilter, i: &u64| {
        let chain = f.chain();
        !chain
            .covered()
            .unwrap()
            .summary
            .may_hold(f.hasher().hash_one(i))
    };
    let x = (n..).find(|i| clear(&f, i)).unwrap();
    // The newest table is far from half full, so copies of one item past
    // its pair's eight slots go into older tables, down to covered ones.
    let copies = (0..100).take_while(|_| f.insert(&x).is_ok()).count();
    assert!(copies > 16, "{copies}");
    // Take the copies of the two uncovered tables: those left are in
    // covered tables, and only the summary can send a lookup there.
    for _ in 0..16 {
        assert!(f.remove(&x));
    }
    assert!(f.contains(&x));
    // Merged entries too, into the first table once it has room.
    assert!((0..100u64).all(|i| f.remove(&i)));
    let g = GrowableCuckooFilter::builder()
        .initial_capacity(100)
        .seed(7)
        .build()
        .unwrap();
    let y = (x + 1..).find(|i| clear(&f, i)).unwrap();
    g.insert(&y).unwrap();
    f.merge(&g).unwrap();
    assert!(f.contains(&y));
}

#[test]
fn copies_of_one_item_do_not_double_a_large_table() {
    let f = GrowableCuckooFilter::with_capacity(10_000);
    let copies = (0..100).take_while(|_| f.insert("same").is_ok()).count();
    assert_eq!(copies, 8);
    assert_eq!(f.table_count(), 1);
    assert_eq!(f.insert("same"), Err(InsertError::TooManyCopies));
    // A small table grows instead, until it is large.
    let f = GrowableCuckooFilter::with_capacity(0);
    let copies = (0..1000).take_while(|_| f.insert("same").is_ok()).count();
    assert!(copies > 8 && f.table_count() <= 12, "{copies} {f:?}");
    assert_eq!(f.len(), copies);
}

/// Nine distinct items whose fingerprints share a bucket pair, as someone
/// who knows the seed can choose them: the ninth is refused as
/// `TooManyCopies` (what its docs say), the filter does not grow for it,
/// and nothing else changes.
#[test]
fn nine_items_aimed_at_one_pair_do_not_grow_a_large_table() {
    let f = GrowableCuckooFilter::with_capacity(10_000);
    // Nine fingerprints of bucket 7 with the alternate of the first.
    let bucket = 7;
    let aimed: Vec<u64> = f.with_tables(|tables| {
        let t = &tables[0];
        let alternate = t.position(t.hash_for(bucket, 1)).i2;
        (1..=u32::from(u16::MAX))
            .map(|fp| t.hash_for(bucket, fp))
            .filter(|&h| t.position(h).i2 == alternate)
            .take(9)
            .collect()
    });
    assert_eq!(aimed.len(), 9);
    for &h in &aimed[..8] {
        f.insert_hash(h).unwrap();
    }
    let before = f.to_bytes();
    assert_eq!(f.insert_hash(aimed[8]), Err(InsertError::TooManyCopies));
    assert_eq!(f.table_count(), 1);
    assert_eq!(f.to_bytes(), before);
    assert!(aimed[..8].iter().all(|&h| f.contains_hash(h)));
}

#[test]
fn concurrent_growth_loses_nothing_and_keeps_the_rate() {
    let rate = 0.02;
    let f = GrowableCuckooFilter::builder()
        .initial_capacity(64)
        .false_positive_rate(rate)
        .build()
        .unwrap();
    let per_thread = 100_000u64;
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let f = &f;
            s.spawn(move || {
                for i in 0..per_thread {
                    let key = t << 40 | i;
                    f.insert_hash(mix(key)).unwrap();
                    // Items inserted earlier by this thread stay visible
                    // while other threads grow the chain.
                    if i % 64 == 0 {
                        let j = i / 2;
                        assert!(f.contains_hash(mix(t << 40 | j)), "lost {t}/{j}");
                    }
                }
            });
        }
        // A reader of the chain racing the growths.
        s.spawn(|| {
            for _ in 0..50 {
                assert!(f.len() <= 4 * per_thread as usize);
                let _ = f.contains_hash(mix(1 << 62));
            }
        });
    });
    assert_eq!(f.len() as u64, 4 * per_thread);
    for t in 0..4u64 {
        assert!((0..per_thread).all(|i| f.contains_hash(mix(t << 40 | i))));
    }
    assert!(f.table_count() >= 7, "{f:?}");
    assert!(f.covered_tables() > 0, "{f:?}");
    let bound = f.false_positive_rate();
    assert!(bound <= rate);
    let probes = 1_000_000u64;
    let hits = (0..probes)
        .filter(|&i| f.contains_hash(mix(i | 1 << 62)))
        .count();
    let measured = hits as f64 / probes as f64;
    // The measured rate is under the bound (plus six standard deviations
    // of sampling noise: which table holds an item depends on the
    // threads' interleaving, and at four about one run in 10^5 failed),
    // which is under the rate asked for.
    let slack = 6.0 * (bound / probes as f64).sqrt();
    assert!(
        measured <= bound + slack,
        "measured {measured}, bound {bound}"
    );
    assert!(
        measured > 0.0,
        "16-bit tables: about 10^-4 per table expected"
    );
}

/// A chain of six tables (the four oldest to be covered), grown without
/// covering, and the 40 items inserted into each, by table.
fn six_uncovered_tables() -> (GrowableCuckooFilter, Vec<Vec<u64>>) {
    let f = GrowableCuckooFilter::builder()
        .initial_capacity(100)
        .seed(7)
        .build()
        .unwrap();
    let mut items = Vec::new();
    for k in 0..6 {
        if k > 0 {
            f.grow_without_covering();
        }
        let hashes: Vec<u64> = (0..40).map(|i| mix((k as u64) << 32 | i)).collect();
        assert!(hashes.iter().all(|&h| f.insert_hash_into_table(k, h)));
        items.push(hashes);
    }
    assert_eq!((f.table_count(), f.covered_tables()), (6, 0));
    (f, items)
}

/// A covering whose reading of one table cannot be believed covers the
/// tables before it, and only those; one that would cover no more than
/// the chain does is dropped; later coverings read the rest.
#[test]
fn a_reading_that_cannot_be_believed_ends_the_covering_there() {
    let (f, items) = six_uncovered_tables();
    let all_found = |f: &GrowableCuckooFilter| items.iter().flatten().all(|&h| f.contains_hash(h));
    let summary = |f: &GrowableCuckooFilter| f.chain().covered().unwrap().summary.clone();
    // Items of a table whose bits the summary lacks: a table not read.
    let unread = |s: &Summary, k: usize| items[k].iter().filter(|&&h| !s.may_hold(h)).count();
    let left = || DISBELIEVED.with(|d| d.borrow().len());

    // The oldest table failed: nothing to cover, nothing pending.
    disbelieve(&[0, 0, 0]);
    f.cover();
    assert_eq!((f.covered_tables(), left()), (0, 0));
    assert!(f.chain().pending().is_none());

    // A new summary: table 1 held still at the third try, table 2 never.
    disbelieve(&[1, 1, 2, 2, 2]);
    f.cover();
    assert_eq!((f.covered_tables(), left()), (2, 0));
    assert!(f.chain().pending().is_none());
    let s = summary(&f);
    // Tables 2 and 3 were not read (the reading stopped at 2): a covering
    // of either would hide their items.
    assert!(unread(&s, 2) > 30 && unread(&s, 3) > 30);
    assert!(all_found(&f), "an item missed");
    // An insert into a covered table records its item in the summary.
    let x = (1u64 << 40..).map(mix).find(|&h| !s.may_hold(h)).unwrap();
    assert!(f.insert_hash_into_table(1, x));
    assert!(s.may_hold(x) && f.contains_hash(x));

    // Extending it: the first table to read (2) failed, so the covering
    // would cover no more; dropped, the current one kept.
    disbelieve(&[2, 2, 2]);
    f.cover();
    assert_eq!((f.covered_tables(), left()), (2, 0));
    assert!(f.chain().pending().is_none());
    assert!(Arc::ptr_eq(&summary(&f), &s));

    // Extending it by one table (2): the reading of table 3 failed.
    disbelieve(&[3, 3, 3]);
    f.cover();
    assert_eq!((f.covered_tables(), left()), (3, 0));
    assert!(Arc::ptr_eq(&summary(&f), &s));
    assert!(unread(&s, 3) > 30);
    assert!(all_found(&f) && f.contains_hash(x), "an item missed");

    // The next growth's covering (of five tables) has a new summary, whose
    // reading failed below the current covering's tables: dropped, the
    // current covering kept.
    disbelieve(&[1, 1, 1]);
    f.grow_to(7).unwrap();
    assert_eq!((f.covered_tables(), left()), (3, 0));
    assert!(f.chain().pending().is_none());
    assert!(Arc::ptr_eq(&summary(&f), &s));
    // The next one's (of six tables) failed past them: it covers more, and
    // replaces the current one.
    disbelieve(&[4, 4, 4]);
    f.grow_to(8).unwrap();
    assert_eq!((f.covered_tables(), left()), (4, 0));
    let new = summary(&f);
    assert!(!Arc::ptr_eq(&new, &s) && unread(&new, 4) > 30);
    assert!(all_found(&f) && f.contains_hash(x), "an item missed");
    // The next growth covers the rest (all seven 16-bit tables).
    f.grow_to(9).unwrap();
    assert_eq!(f.covered_tables(), 7);
    assert!(f.chain().pending().is_none());
    assert!(all_found(&f) && f.contains_hash(x), "an item missed");
}
