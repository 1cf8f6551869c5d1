//! Exhaustive checks of the rank code of every layout, and randomized checks
//! of the bucket operations against a multiset model.

use super::*;
use crate::test_rng::xorshift;

/// Runs `check` on every layout.
fn each_layout(check: impl Fn(&dyn Fn() -> Box<dyn LayoutCase>)) {
    check(&|| Box::new(Case::<Eight>(std::marker::PhantomData)));
    check(&|| Box::new(Case::<Seven>(std::marker::PhantomData)));
    check(&|| Box::new(Case::<Six>(std::marker::PhantomData)));
    check(&|| Box::new(Case::<Five>(std::marker::PhantomData)));
    check(&|| Box::new(Case::<Three>(std::marker::PhantomData)));
}

/// The codec of one layout behind a trait object, so that one test body
/// covers them all.
trait LayoutCase {
    fn slots(&self) -> usize;
    fn max(&self) -> u32;
    fn prefixes(&self) -> u32;
    fn ranks(&self) -> usize;
    fn suffix_bits(&self) -> u32;
    fn table(&self) -> &'static [u64];
    fn fingerprints(&self, word: u64) -> [u32; MAX_SLOTS];
    fn encode(&self, fps: [u32; MAX_SLOTS]) -> u64;
    fn with(&self, word: u64, fp: u32) -> Option<u64>;
    fn without(&self, word: u64, fp: u32) -> Option<u64>;
    fn holds(&self, word: u64, fp: u32) -> bool;
    fn holds_in_either(&self, words: [u64; 2], fp: u32) -> bool;
    fn copies(&self, word: u64, fp: u32) -> u32;
    fn len(&self, word: u64) -> u32;
    fn is_canonical(&self, word: u64) -> bool;
}

struct Case<L: Layout>(std::marker::PhantomData<L>);

impl<L: Layout> LayoutCase for Case<L> {
    fn slots(&self) -> usize {
        L::SLOTS
    }
    fn max(&self) -> u32 {
        L::MAX
    }
    fn prefixes(&self) -> u32 {
        L::PREFIXES
    }
    fn ranks(&self) -> usize {
        L::RANKS
    }
    fn suffix_bits(&self) -> u32 {
        L::SUFFIX_BITS
    }
    fn table(&self) -> &'static [u64] {
        L::decode_table()
    }
    fn fingerprints(&self, word: u64) -> [u32; MAX_SLOTS] {
        fingerprints::<L>(word)
    }
    fn encode(&self, fps: [u32; MAX_SLOTS]) -> u64 {
        encode::<L>(fps)
    }
    fn with(&self, word: u64, fp: u32) -> Option<u64> {
        with::<L>(word, fp)
    }
    fn without(&self, word: u64, fp: u32) -> Option<u64> {
        without::<L>(word, fp)
    }
    fn holds(&self, word: u64, fp: u32) -> bool {
        holds::<L>(word, fp)
    }
    fn holds_in_either(&self, words: [u64; 2], fp: u32) -> bool {
        holds_in_either::<L>(words, fp)
    }
    fn copies(&self, word: u64, fp: u32) -> u32 {
        copies::<L>(word, fp)
    }
    fn len(&self, word: u64) -> u32 {
        len::<L>(word)
    }
    fn is_canonical(&self, word: u64) -> bool {
        is_canonical::<L>(word)
    }
}

#[test]
fn every_rank_decodes_to_its_own_sorted_prefixes_and_back() {
    each_layout(|case| {
        let c = case();
        let s = c.suffix_bits();
        let mut seen = std::collections::HashSet::new();
        let mut next = xorshift(0x5eed);
        for (rank, &entry) in c.table().iter().enumerate() {
            let prefixes: Vec<u64> = (0..c.slots())
                .map(|i| (entry >> (s * i as u32)) & ((1 << s) - 1))
                .collect();
            assert!(prefixes.windows(2).all(|w| w[0] <= w[1]), "rank {rank}");
            assert!(
                prefixes.iter().all(|&p| p < u64::from(c.prefixes())),
                "rank {rank}"
            );
            assert!(seen.insert(entry), "two ranks decode to one multiset");
            // The word of these prefixes with random suffixes (in an order
            // that keeps the slots sorted: ascending within equal prefixes)
            // has this rank and is canonical.
            let mut fps = [0u32; MAX_SLOTS];
            for (i, &p) in prefixes.iter().enumerate() {
                fps[i] = (p as u32) << s | (next() as u32 & ((1 << s) - 1));
            }
            if fps[..c.slots()].contains(&0) {
                continue;
            }
            let word = c.encode(fps);
            assert_eq!((word >> (s * c.slots() as u32)) as usize, rank);
            assert!(c.is_canonical(word));
            let mut sorted = fps;
            sorted[..c.slots()].sort_unstable();
            assert_eq!(c.fingerprints(word), sorted);
        }
        assert_eq!(seen.len(), c.ranks());
    });
}

#[test]
fn the_empty_bucket_is_zero_and_ranks_past_the_table_are_refused() {
    each_layout(|case| {
        let c = case();
        assert_eq!(c.encode([0; MAX_SLOTS]), 0);
        assert_eq!(c.len(0), 0);
        assert!(c.is_canonical(0));
        let shift = c.suffix_bits() * c.slots() as u32;
        let rank_bits = 64 - shift;
        for rank in [c.ranks() as u64, (1 << rank_bits) - 1] {
            let word = rank << shift;
            assert!(!c.is_canonical(word), "rank {rank}");
            // Read safely all the same.
            let _ = (c.holds(word, 1), c.len(word), c.fingerprints(word));
        }
    });
}

#[test]
fn words_out_of_order_are_refused() {
    each_layout(|case| {
        let c = case();
        let s = c.suffix_bits();
        // Two full slots with one prefix and suffixes in descending order.
        let mut fps = [0u32; MAX_SLOTS];
        fps[c.slots() - 2] = 5;
        fps[c.slots() - 1] = 9;
        let word = c.encode(fps);
        assert!(c.is_canonical(word));
        let lane = (1u64 << s) - 1;
        let (a, b) = (s * (c.slots() as u32 - 2), s * (c.slots() as u32 - 1));
        let swapped = word & !(lane << a) & !(lane << b) | 9 << a | 5 << b;
        assert!(!c.is_canonical(swapped));
        // An empty slot (0) after a full one: the one fingerprint moved
        // from the last slot, where the codec puts it, to the first.
        let mut one = [0u32; MAX_SLOTS];
        one[0] = 7;
        let w = c.encode(one);
        let last = s * (c.slots() as u32 - 1);
        assert_eq!(w >> last & lane, 7);
        let moved = (w & !(lane << last)) | 7;
        assert!(!c.is_canonical(moved));
    });
}

#[test]
fn operations_agree_with_a_multiset_model() {
    each_layout(|case| {
        let c = case();
        let mut next = xorshift(0x1234_5678);
        for round in 0..20_000 {
            // Few distinct fingerprints, so that copies collide; sometimes
            // ones that differ only in the prefix or only in the suffix.
            let pool: Vec<u32> = (0..4)
                .map(|_| (next() % u64::from(c.max())) as u32 + 1)
                .chain([1, c.max(), 1 << c.suffix_bits(), (1 << c.suffix_bits()) - 1])
                .collect();
            let mut model: Vec<u32> = Vec::new();
            let mut word = 0u64;
            let mut before = 0u64;
            for _ in 0..40 {
                // A pair: this word and one it held before (sharing
                // fingerprints and suffixes with it, so that both words of
                // the pair often have a lane of the suffix asked about).
                for &p in &pool {
                    let either = c.holds(word, p) | c.holds(before, p);
                    assert_eq!(c.holds_in_either([word, before], p), either);
                    assert_eq!(c.holds_in_either([before, word], p), either);
                }
                if next() % 4 == 0 {
                    before = word;
                }
                let fp = pool[(next() % pool.len() as u64) as usize];
                if next() % 2 == 0 {
                    let got = c.with(word, fp);
                    if model.len() == c.slots() {
                        assert_eq!(got, None, "round {round}");
                    } else {
                        model.push(fp);
                        word = got.expect("room");
                    }
                } else {
                    let got = c.without(word, fp);
                    match model.iter().position(|&m| m == fp) {
                        Some(i) => {
                            model.swap_remove(i);
                            word = got.expect("a copy");
                        }
                        None => assert_eq!(got, None, "round {round}"),
                    }
                }
                let mut sorted = [0u32; MAX_SLOTS];
                let mut m = model.clone();
                m.sort_unstable();
                sorted[c.slots() - m.len()..c.slots()].copy_from_slice(&m);
                assert_eq!(c.fingerprints(word), sorted);
                assert!(c.is_canonical(word));
                assert_eq!(c.encode(sorted), word, "one word per multiset");
                assert_eq!(c.len(word) as usize, model.len());
                assert_eq!(c.holds(word, 0), model.len() < c.slots());
                for &p in &pool {
                    let n = model.iter().filter(|&&m| m == p).count();
                    assert_eq!(c.holds(word, p), n > 0);
                    assert_eq!(c.copies(word, p) as usize, n);
                }
            }
        }
    });
}

#[test]
fn each_layout_fills_its_word() {
    // (slots, suffix bits, prefixes, ranks, largest fingerprint): the rank
    // is below `C(P + B − 1, B)` and fits the bits above the suffixes, and
    // the number of ranks in each layout's bits is near that count (the
    // layouts waste little of the word).
    each_layout(|case| {
        let c = case();
        let n = binomial(
            u64::from(c.prefixes()) + c.slots() as u64 - 1,
            c.slots() as u64,
        );
        assert_eq!(c.ranks() as u64, n);
        assert_eq!(c.table().len(), c.ranks());
        let rank_bits = 64 - c.suffix_bits() * c.slots() as u32;
        assert!(n <= 1 << rank_bits && n > 1 << (rank_bits - 1));
        assert_eq!(c.max(), (c.prefixes() << c.suffix_bits()) - 1);
    });
    assert_eq!((Eight::SLOTS, Eight::MAX, Eight::RANKS), (8, 703, 43_758));
    assert_eq!(
        (Three::SLOTS, Three::MAX, Three::RANKS),
        (3, 4_456_447, 969)
    );
}
