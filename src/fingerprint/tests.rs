use super::lanes::any_lane_holds;
use super::*;

fn zero_lanes_naive<W: Width>(x: u64) -> u64 {
    (0..W::LANES)
        .filter(|&l| lane_value::<W>(x, l) == 0)
        .fold(0, |m, l| m | (1u64 << (l * W::BITS + W::BITS - 1)))
}

fn check_zero_lanes<W: Width>() {
    let mut next = crate::test_rng::xorshift(0x9e37_79b9_7f4a_7c15);
    for _ in 0..100_000 {
        let x = next();
        // Zero out some lanes and plant 1s above them, the borrow trap.
        let sparse = x & (x >> 3) & (x >> 5);
        let planted = sparse & W::LOW.wrapping_mul(1);
        for v in [x, sparse, planted, x & 0xffff_0000_ffff, 1, 0, u64::MAX] {
            assert_eq!(zero_lanes::<W>(v), zero_lanes_naive::<W>(v), "{v:#x}");
        }
    }
}

/// [`matches_in_either`] against [`Width::holds_in`] on each word, for
/// words that hold the fingerprint in chosen lanes, with the masks a
/// table asks about: whole words, one word only, and (for two buckets a
/// word) either half of each.
fn check_matches_in_either<W: Width>() {
    let mut next = crate::test_rng::xorshift(0x2545_f491_4f6c_dd1d);
    let halves = [W::HIGH & 0xffff_ffff, W::HIGH & !0xffff_ffff];
    let mut masks = vec![[W::HIGH, W::HIGH], [W::HIGH, 0], [0, W::HIGH], [0, 0]];
    for a in halves {
        for b in halves {
            masks.push([a, b]);
        }
    }
    // Fewer under Miri, which checks the intrinsics, not the arithmetic.
    let rounds = if cfg!(miri) { 100 } else { 20_000 };
    for _ in 0..rounds {
        let fp = (next() % W::MAX) as u32 + 1;
        let mut words = [next() & W::USED, next() & W::USED];
        // Plant the fingerprint in a lane or two, sometimes none.
        for _ in 0..next() % 3 {
            let (k, lane) = ((next() % 2) as usize, (next() % u64::from(W::LANES)) as u32);
            words[k] = with_lane::<W>(without_lane::<W>(words[k], lane), lane, fp);
        }
        for &m in &masks {
            let expected = W::holds_in(words[0], m[0], fp) | W::holds_in(words[1], m[1], fp);
            assert_eq!(
                matches_in_either::<W>(words, m, fp) != 0,
                expected,
                "{} bits: words {words:x?}, masks {m:x?}, fp {fp:#x}",
                W::BITS
            );
        }
    }
}

/// [`matches_in_halves`] against [`Width::holds_in`] on each word's half,
/// for pairs whose first bucket is even and odd.
#[test]
fn matches_in_halves_agrees_with_each_half() {
    let mut next = crate::test_rng::xorshift(0x6a09_e667_f3bc_c908);
    let rounds = if cfg!(miri) { 100 } else { 20_000 };
    for _ in 0..rounds {
        let fp = (next() % W8::MAX) as u32 + 1;
        let mut words = [next(), next()];
        for _ in 0..next() % 3 {
            let (k, lane) = ((next() % 2) as usize, (next() % 8) as u32);
            words[k] = with_lane::<W8>(without_lane::<W8>(words[k], lane), lane, fp);
        }
        for first in [0, 1, 6, 7, 1 << 40, (1 << 40) + 1] {
            let half = |bucket: u64| W8::HIGH & half_mask((bucket % 2) as u32);
            let expected = W8::holds_in(words[0], half(first), fp)
                | W8::holds_in(words[1], half(first + 1), fp);
            assert_eq!(
                matches_in_halves::<W8>(words, first, fp) != 0,
                expected,
                "words {words:x?}, first bucket {first}, fp {fp:#x}"
            );
        }
    }
}

#[test]
fn matches_in_either_agrees_with_each_word() {
    check_matches_in_either::<W8>();
    check_matches_in_either::<W16>();
    check_matches_in_either::<W32>();
    check_matches_in_either::<W10>();
    check_matches_in_either::<W12>();
    check_matches_in_either::<W21>();
}

/// [`any_lane_holds`] against each lane's value, on words with the
/// fingerprint planted in some lanes, lanes of the fingerprint's neighbours
/// (`fp ± 1`: after the XOR, the zero lanes and lanes of 1 above them, the
/// short formula's borrow trap), and the bits above the lanes set or not
/// (in the third word).
fn check_any_lane_holds<W: Width>() {
    let mut next = crate::test_rng::xorshift(0x3c6e_f372_fe94_f82b);
    let rounds = if cfg!(miri) { 100 } else { 20_000 };
    for _ in 0..rounds {
        let fp = (next() % W::MAX) as u32 + 1;
        let mut words = [next() & W::USED, next() & W::USED, next(), next() & W::USED];
        for _ in 0..next() % 6 {
            let (k, lane) = ((next() % 4) as usize, (next() % u64::from(W::LANES)) as u32);
            let v = match next() % 3 {
                0 => fp,
                1 => fp ^ 1,
                _ => (fp + 1) & W::MAX as u32,
            };
            words[k] = with_lane::<W>(without_lane::<W>(words[k], lane), lane, v);
        }
        let holds = |ws: &[u64]| {
            ws.iter()
                .any(|&w| (0..W::LANES).any(|l| lane_value::<W>(w, l) == fp))
        };
        for pair in [[words[0], words[1]], [words[2], words[3]]] {
            let found = any_lane_holds::<W>(pair, fp);
            assert!(found <= 1);
            assert_eq!(found == 1, holds(&pair), "{pair:x?} {fp:#x}");
        }
    }
}

#[test]
fn any_lane_holds_is_exact_for_whole_words() {
    check_any_lane_holds::<W10>();
    check_any_lane_holds::<W12>();
    check_any_lane_holds::<W21>();
    // The borrow trap: fp in the low lane, fp ^ 1 (a lane of 1 after the
    // XOR) above it, and fp nowhere else is still one match; fp ^ 1 alone
    // is none.
    let fp = 0x155;
    let trap = broadcast::<W12>(fp ^ 1) & W12::USED;
    assert_eq!(any_lane_holds::<W12>([trap, trap], fp), 0);
    let planted = with_lane::<W12>(without_lane::<W12>(trap, 0), 0, fp);
    assert_eq!(any_lane_holds::<W12>([planted, trap], fp), 1);
}

#[test]
fn zero_lanes_is_exact() {
    check_zero_lanes::<W8>();
    check_zero_lanes::<W10>();
    check_zero_lanes::<W12>();
    check_zero_lanes::<W16>();
    check_zero_lanes::<W21>();
    check_zero_lanes::<W32>();
    // The borrow trap of the short formula: a zero lane under a lane of 1.
    assert_eq!(zero_lanes::<W8>(0x0100), 0x8080_8080_8080_0080);
    // The unused top bits are never flagged, set or not.
    assert_eq!(zero_lanes::<W10>(0), W10::HIGH);
    assert_eq!(zero_lanes::<W12>(!W12::USED), W12::HIGH);
    assert_eq!(zero_lanes::<W21>(u64::MAX), 0);
    assert_eq!(zero_lanes::<W10>(W10::USED & !(W10::MAX << 50)), 1 << 59);
}

#[test]
fn layout_constants() {
    // (lanes a word, slots a bucket, words a bucket, bits in lanes)
    fn shape<W: Width>() -> (u32, u32, usize, u32) {
        (
            W::LANES,
            W::SLOTS,
            W::WORDS_PER_BUCKET,
            W::USED.count_ones(),
        )
    }
    assert_eq!(shape::<W8>(), (8, 4, 1, 64));
    assert_eq!(shape::<W10>(), (6, 6, 1, 60));
    assert_eq!(shape::<W12>(), (5, 5, 1, 60));
    assert_eq!(shape::<W16>(), (4, 4, 1, 64));
    assert_eq!(shape::<W21>(), (3, 6, 2, 63));
    assert_eq!(shape::<W32>(), (2, 4, 2, 64));
    assert_eq!(W8::LOW, 0x0101_0101_0101_0101);
    assert_eq!(W16::LOW, 0x0001_0001_0001_0001);
    assert_eq!(W16::HIGH, 0x8000_8000_8000_8000);
    assert_eq!(W12::HIGH, 0x0800_8008_0080_0800);
    for b in FingerprintBits::ALL {
        if b != FingerprintBits::Bits17 && b != FingerprintBits::Bits9 && !b.is_ranked() {
            assert_eq!(b.slots_per_word(), 64 / b.bits());
        }
    }
    // The public bucket sizes are the tables'.
    let slots = [
        W8::SLOTS,
        W9::SLOTS,
        R8::SLOTS,
        R7::SLOTS,
        W10::SLOTS,
        R6::SLOTS,
        W12::SLOTS,
        R5::SLOTS,
        W16::SLOTS,
        W17::SLOTS,
        W21::SLOTS,
        R3::SLOTS,
        W32::SLOTS,
    ];
    for (b, s) in FingerprintBits::ALL.into_iter().zip(slots) {
        assert_eq!(b.slots_per_bucket(), s, "{} bits", b.bits());
    }
    assert_eq!(
        (W17::LANES, W17::SLOTS, W17::WORDS_PER_BUCKET, W17::MAX),
        (4, 4, 1, (1 << 17) - 1)
    );
    assert_eq!(
        (W9::LANES, W9::SLOTS, W9::WORDS_PER_BUCKET, W9::MAX),
        (8, 4, 1, 511)
    );
    assert_eq!(FingerprintBits::Bits9.slots_per_word(), 8);
    // The ranked layouts: one bucket a word, fingerprints below 2^bits.
    assert_eq!(
        (R8::LANES, R8::SLOTS, R8::WORDS_PER_BUCKET, R8::MAX),
        (8, 8, 1, 703)
    );
    assert_eq!(
        (R7::LANES, R7::SLOTS, R7::WORDS_PER_BUCKET, R7::MAX),
        (7, 7, 1, 1535)
    );
    assert_eq!(
        (R6::LANES, R6::SLOTS, R6::WORDS_PER_BUCKET, R6::MAX),
        (6, 6, 1, 4095)
    );
    assert_eq!(
        (R5::LANES, R5::SLOTS, R5::WORDS_PER_BUCKET, R5::MAX),
        (5, 5, 1, 16383)
    );
    assert_eq!(
        (R3::LANES, R3::SLOTS, R3::WORDS_PER_BUCKET, R3::MAX),
        (3, 3, 1, 4_456_447)
    );
    // Their fingerprint counts, as the rate bounds take them, are the
    // codecs'.
    for (b, max) in [
        (FingerprintBits::Ranked8, R8::MAX),
        (FingerprintBits::Ranked7, R7::MAX),
        (FingerprintBits::Ranked6, R6::MAX),
        (FingerprintBits::Ranked5, R5::MAX),
        (FingerprintBits::Ranked3, R3::MAX),
    ] {
        assert_eq!(b.fingerprints(), max as f64, "{b:?}");
        assert!(max < 1 << b.bits());
    }
    // The most slots of any bucket, which sizes the bucket arrays.
    let most = FingerprintBits::ALL
        .map(|b| b.slots_per_bucket())
        .into_iter()
        .max();
    assert_eq!(most, Some(MAX_SLOTS as u32));
    for b in FingerprintBits::ALL {
        assert_eq!(
            FingerprintBits::from_layout(b.bits(), b.slots_per_bucket()),
            Some(b)
        );
        let ranked = [
            FingerprintBits::Ranked8,
            FingerprintBits::Ranked7,
            FingerprintBits::Ranked6,
            FingerprintBits::Ranked5,
            FingerprintBits::Ranked3,
        ];
        assert_eq!(b.is_ranked(), ranked.contains(&b));
    }
    // A half's mask names its half.
    assert_eq!((half_of(half_mask(0)), half_of(half_mask(1))), (0, 1));
}

#[test]
fn lanes_roundtrip() {
    let w = with_lane::<W16>(0, 2, 0xbeef);
    assert_eq!(lane_value::<W16>(w, 2), 0xbeef);
    assert_eq!(without_lane::<W16>(w, 2), 0);
    let b = broadcast::<W8>(0xab);
    assert_eq!(b, 0xabab_abab_abab_abab);
    assert_eq!(
        first_lane::<W8>(zero_lanes::<W8>(b ^ without_lane::<W8>(b, 0))),
        1
    );
}

fn check_fingerprint_range<W: Width>() {
    assert_eq!(of_hash::<W>(0), 1);
    assert_eq!(u64::from(of_hash::<W>(u64::MAX)), W::MAX);
    for fp in [
        1,
        2,
        3,
        (W::MAX / 2) as u32,
        W::MAX as u32 - 1,
        W::MAX as u32,
    ] {
        let h = hash_with::<W>(fp, 12345);
        assert_eq!(of_hash::<W>(h), fp);
        assert_eq!(h as u32, 12345);
    }
}

#[test]
fn fingerprints_are_never_zero_and_invertible() {
    check_fingerprint_range::<W8>();
    check_fingerprint_range::<W10>();
    check_fingerprint_range::<W12>();
    check_fingerprint_range::<W16>();
    check_fingerprint_range::<W9>();
    check_fingerprint_range::<W17>();
    check_fingerprint_range::<W21>();
    check_fingerprint_range::<R8>();
    check_fingerprint_range::<R7>();
    check_fingerprint_range::<R3>();
    // The table's fingerprint of a hash is the codec's.
    for h in [0, 1 << 40, u64::MAX, 0x9e37_79b9_7f4a_7c15] {
        assert_eq!(of_hash::<W17>(h), semisorted::of_hash(h));
        assert_eq!(of_hash::<W9>(h), semisorted::half::of_hash(h));
    }
    check_fingerprint_range::<W32>();
}

fn check_free_in<W: Width>() {
    let mut next = crate::test_rng::xorshift(0x5851_f42d_4c95_7f2d);
    for _ in 0..20_000 {
        // Random lanes, about half of them emptied.
        let mut word = next() & W::USED;
        let empty = next();
        for lane in 0..W::LANES {
            if empty >> lane & 1 == 1 {
                word = without_lane::<W>(word, lane);
            }
        }
        let mask = next() & W::HIGH;
        let naive = (0..W::LANES)
            .filter(|&l| mask >> (l * W::BITS + W::BITS - 1) & 1 == 1)
            .filter(|&l| lane_value::<W>(word, l) == 0)
            .count() as u32;
        assert_eq!(
            W::free_in(word, mask),
            naive,
            "{} bits, {word:#x} {mask:#x}",
            W::BITS
        );
    }
}

#[test]
fn free_in_counts_empty_lanes() {
    check_free_in::<W8>();
    check_free_in::<W10>();
    check_free_in::<W12>();
    check_free_in::<W16>();
    check_free_in::<W21>();
    check_free_in::<W32>();
}
