use super::*;
use crate::fingerprint::{W10, W12, W16, W17, W21, W32, W8, W9};

fn involution<W: Width>(buckets: u64) {
    let t = Table::<W>::new(buckets).unwrap();
    for b in 0..buckets.min(300) {
        for fp in [1u32, 2, 3, 77, 255, W::MAX as u32] {
            let a = t.alternate(b, fp);
            assert!(a < buckets);
            assert_ne!(a, b, "no fingerprint is its own alternate");
            assert_eq!(t.alternate(a, fp), b);
        }
    }
}

#[test]
fn alternate_is_an_involution_for_any_size() {
    for n in [2, 4, 6, 14, 64, 1000, 1022] {
        involution::<W8>(n);
        involution::<W9>(n);
        involution::<W10>(n);
        involution::<W12>(n);
        involution::<W16>(n);
        involution::<W17>(n);
        involution::<W21>(n);
        involution::<W32>(n);
    }
}

/// The alternate as the twin reflection its documentation describes,
/// spelled out: `2 · ((h(fp) - s) mod n/2) + (1 - e)` for bucket `2s + e`.
fn twin_reflection(buckets: u64, bucket: u64, fp: u32) -> u64 {
    let twins = buckets / 2;
    let h = ((u64::from(fp).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) * twins) >> 32;
    let s = bucket / 2;
    let reflected = if h >= s { h - s } else { h + twins - s };
    (2 * reflected) | ((bucket & 1) ^ 1)
}

/// `alternate` is the twin reflection (which the byte format fixes) for
/// every bucket of small tables and sampled buckets of large ones, up to
/// the largest table, with every kind of fingerprint.
#[test]
fn alternate_is_the_twin_reflection() {
    let mut next = crate::test_rng::xorshift(0x2545_f491_4f6c_dd1d);
    let mut sizes: Vec<u64> = (1..=64).map(|t| 2 * t).collect();
    sizes.extend([
        1 << 20,
        1_000_002,
        (1 << 31) - 2,
        MAX_BUCKETS - 2,
        MAX_BUCKETS,
    ]);
    sizes.extend((0..200).map(|_| 2 * (1 + next() % (MAX_BUCKETS / 2))));
    for n in sizes {
        let t = Table::<W8> {
            buckets: n,
            ..Table::new(2).unwrap()
        };
        let fps = [1, 2, 0xff, 0xffff, 0x1_0000, u32::MAX - 1, u32::MAX];
        for k in 0..2000 {
            let bucket = if n <= 128 { k % n } else { next() % n };
            let fp = if k < fps.len() as u64 {
                fps[k as usize]
            } else {
                next() as u32 | 1
            };
            assert_eq!(
                t.alternate(bucket, fp),
                twin_reflection(n, bucket, fp),
                "{n} buckets, bucket {bucket}, fingerprint {fp}"
            );
        }
    }
}

fn buckets_are_independent<W: Width>() {
    // Fill every slot of every bucket with a distinct value and read back.
    let buckets = 12;
    let slots = u64::from(W::SLOTS);
    let t = Table::<W>::new(buckets).unwrap();
    for b in 0..buckets {
        for s in 0..W::SLOTS {
            assert!(t.put(b, (b * slots + u64::from(s) + 1) as u32));
        }
        assert!(!t.put(b, 99));
    }
    for b in 0..buckets {
        let words = t.load_bucket(b);
        let fps = t.bucket_fingerprints(&words, b);
        for s in 0..W::SLOTS {
            // Put in ascending order: a sorted bucket keeps that order.
            assert_eq!(fps[s as usize], (b * slots + u64::from(s) + 1) as u32);
        }
        assert!(fps[W::SLOTS as usize..].iter().all(|&fp| fp == 0));
        assert!(t.holds(&words, b, (b * slots + 1) as u32));
        assert!(
            !t.holds(&words, b, ((b + 1) * slots + 1) as u32),
            "neighbour's lane leaked"
        );
    }
    let fp = (3 * slots + 2) as u32;
    assert!(t.take(3, fp));
    assert!(!t.take(3, fp));
    assert!(t.put(3, fp));
}

#[test]
fn buckets_do_not_overlap() {
    for bits in crate::FingerprintBits::ALL {
        with_width!(bits, W, _variant => buckets_are_independent::<W>());
    }
}

fn buckets_lie_in_whole_words<W: Width>() {
    for buckets in [2, 6, 10, 1000] {
        let t = Table::<W>::new(buckets).unwrap();
        let mut lanes = 0;
        for b in 0..buckets {
            let l = t.locus(b);
            assert!(l.second < t.word_count(), "{b}");
            assert_eq!(l.second - l.first, W::WORDS_PER_BUCKET - 1);
            let flagged = l.mask[..W::WORDS_PER_BUCKET]
                .iter()
                .map(|m| m.count_ones())
                .sum::<u32>();
            if !W::SORTED {
                assert_eq!(flagged, W::SLOTS, "{} bits, bucket {b}", W::BITS);
                lanes += flagged;
            }
        }
        if !W::SORTED {
            // Every lane of every word belongs to exactly one bucket.
            assert_eq!(
                u64::from(lanes),
                t.word_count() as u64 * u64::from(W::LANES)
            );
        }
        assert_eq!(
            t.memory_usage() - size_of_val(&*t.blocks),
            t.relocations.memory_usage() + t.stash.memory_usage() + t.count.memory_usage()
        );
        assert_eq!(
            size_of_val(&*t.blocks) as u64,
            Table::<W>::blocks_for(buckets) * 16
        );
    }
}

#[test]
fn buckets_never_cross_a_word() {
    for bits in crate::FingerprintBits::ALL {
        with_width!(bits, W, _variant => buckets_lie_in_whole_words::<W>());
    }
    assert_eq!(words_for(6, 6, 3), 3);
    assert_eq!(words_for(5, 5, 10), 10);
    assert_eq!(words_for(4, 4, 10), 10);
    assert_eq!(words_for(4, 8, 10), 5);
    assert_eq!(words_for(4, 2, 10), 20);
    assert_eq!(words_for(6, 3, 10), 20);
    assert_eq!(Table::<W12>::blocks_for(10), 5);
    assert_eq!(Table::<W8>::blocks_for(2), 1);
}

#[test]
fn relocate_moves_exactly_one_copy() {
    let t = Table::<W16>::new(64).unwrap();
    let fp = 1234;
    let src = 5;
    let dst = t.alternate(src, fp);
    assert!(t.put(src, fp));
    // Another fingerprint beside it stays.
    assert!(t.put(src, 77));
    assert!(t.relocate(src, fp, dst));
    assert!(!t.holds(&t.load_bucket(src), src, fp));
    assert!(t.holds(&t.load_bucket(src), src, 77));
    assert!(t.holds(&t.load_bucket(dst), dst, fp));
    // A stale path (the source holds no copy now) changes nothing.
    assert!(!t.relocate(src, fp, dst));
    // And back: moves are by value, any copy of the pair's bucket will do.
    assert!(t.relocate(dst, fp, src));
    let mut n = 0;
    t.for_each_fingerprint(|_, _| n += 1);
    assert_eq!(n, 2);
    // Of two copies in the source, one moves and one stays.
    assert!(t.put(src, fp));
    assert!(t.relocate(src, fp, dst));
    let mut held = Vec::new();
    t.for_each_fingerprint(|bucket, f| held.push((bucket, f)));
    held.sort_unstable();
    let mut expected = vec![(src, fp), (src, 77), (dst, fp)];
    expected.sort_unstable();
    assert_eq!(held, expected);
}

/// Every writer of a pair marks the stripe that the pair's readers
/// validate against, in a table of many stripes (loom's tables have one,
/// so no model can tell stripes apart, and random keys on a large table
/// almost never race on one pair): a move and a remove bump the counter
/// of the item's lookup, and the stripe of an entry's bucket and its
/// alternate (which `clear`'s sweep asks) is the one that movers and
/// `insert_if_absent` enter, from either bucket of the pair.
fn writers_mark_the_readers_stripe<W: Width>() {
    // The smallest table with the most stripes.
    let buckets = relocation::BUCKETS_PER_STRIPE * relocation::MAX_STRIPES as u64;
    let t = Table::<W>::new(buckets).unwrap();
    let stripe_size = std::mem::size_of::<crossbeam_utils::CachePadded<relocation::Stripe>>();
    assert_eq!(
        t.relocations.memory_usage(),
        256 * stripe_size,
        "256 stripes"
    );
    let mut next = crate::test_rng::xorshift(0x5eed);
    // Under Miri, which interprets every step, a few items still cross
    // stripes (any item would show a writer on another stripe).
    let items = if cfg!(miri) { 4 } else { 300 };
    for _ in 0..items {
        let pos = t.position(next());
        let counter = t.relocations.for_pair(pos.i1, pos.i2);
        let stripe = t.relocations.stripe(pos.i1, pos.i2);
        for (src, dst) in [(pos.i1, pos.i2), (pos.i2, pos.i1)] {
            assert!(t.put(src, pos.fp));
            let seen = Snapshot::take(counter);
            assert!(t.relocate(src, pos.fp, dst));
            assert!(!seen.unchanged(), "{} bits: a move {src} -> {dst}", W::BITS);
            let seen = Snapshot::take(counter);
            assert!(t.remove_copy(pos));
            assert!(!seen.unchanged(), "{} bits: a remove", W::BITS);
            let swept = t.relocations.stripe(src, t.alternate(src, pos.fp));
            assert!(std::ptr::eq(swept, stripe));
        }
    }
}

#[test]
fn writers_mark_the_readers_stripe_at_every_width() {
    for bits in crate::FingerprintBits::ALL {
        with_width!(bits, W, _variant => writers_mark_the_readers_stripe::<W>());
    }
}

fn copies_are_counted_in_both_buckets_and_the_stash<W: Width>() {
    let t = Table::<W>::new(64).unwrap();
    let pos = t.position(0x9e37_79b9_7f4a_7c15);
    let other = t.position(0x3c6e_f372_fe94_f82b).fp;
    assert_ne!(other, pos.fp);
    assert_eq!(t.copies(pos), 0);
    assert!(t.put(pos.i1, pos.fp) && t.put(pos.i1, pos.fp) && t.put(pos.i2, pos.fp));
    // Another fingerprint in the pair, and this one in the bucket that shares
    // a word with the first (two buckets a word) or in the next: not counted.
    assert!(t.put(pos.i1, other) && t.put(pos.i2, other));
    let beside = if pos.i1 ^ 1 == pos.i2 {
        pos.i1 ^ 2
    } else {
        pos.i1 ^ 1
    };
    assert!(t.put(beside, pos.fp));
    assert_eq!(t.copies(pos), 3, "{} bits", W::BITS);
    t.stash_position(pos);
    assert_eq!(t.copies(pos), 4, "{} bits", W::BITS);
    assert!(t.remove(pos));
    assert_eq!(t.copies(pos), 3, "{} bits", W::BITS);
}

#[test]
fn copies_counts_every_copy_of_the_pair() {
    for bits in crate::FingerprintBits::ALL {
        with_width!(bits, W, _variant => copies_are_counted_in_both_buckets_and_the_stash::<W>());
    }
}
