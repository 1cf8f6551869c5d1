//! Exhaustive checks of the prefix code, and randomized checks of the bucket
//! operations against a multiset model (a deterministic xorshift: the root
//! crate has no proptest).

use super::*;

/// xorshift64*: deterministic, seeded per test.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One codec width under test, so that every check runs on both layouts.
#[derive(Clone, Copy, Debug)]
struct Codec {
    suffix_bits: u32,
    max: u32,
}

const WIDE: Codec = Codec {
    suffix_bits: SUFFIX_BITS,
    max: MAX,
};
const HALF: Codec = Codec {
    suffix_bits: half::SUFFIX_BITS,
    max: half::MAX,
};

/// A bucket value and its operations, through the public functions of the
/// layout: the wide word, or bucket `half` of a word whose other bucket holds
/// `other` (which no operation may change).
#[derive(Clone, Copy, Debug)]
enum Layout {
    Wide,
    Half { half: u32, other: u32 },
}

impl Layout {
    fn codec(self) -> Codec {
        match self {
            Layout::Wide => WIDE,
            Layout::Half { .. } => HALF,
        }
    }

    fn encode(self, fps: [u32; 4]) -> u64 {
        match self {
            Layout::Wide => encode(fps),
            Layout::Half { half: h, other } => {
                let w = half::with_bucket(0, 1 - h, other);
                half::with_bucket(w, h, half::encode(fps))
            }
        }
    }

    fn check_other(self, word: u64) {
        if let Layout::Half { half: h, other } = self {
            assert_eq!(half::bucket(word, 1 - h), other, "{word:#x}");
        }
    }

    fn holds(self, word: u64, fp: u32) -> bool {
        match self {
            Layout::Wide => holds(word, fp),
            Layout::Half { half: h, .. } => half::holds(word, h, fp),
        }
    }

    fn fingerprints(self, word: u64) -> [u32; 4] {
        match self {
            Layout::Wide => fingerprints(word),
            Layout::Half { half: h, .. } => half::fingerprints(word, h),
        }
    }

    fn with(self, word: u64, fp: u32) -> Option<u64> {
        let r = match self {
            Layout::Wide => with(word, fp),
            Layout::Half { half: h, .. } => half::with(word, h, fp),
        };
        r.inspect(|&w| self.check_other(w))
    }

    fn without(self, word: u64, fp: u32) -> Option<u64> {
        let r = match self {
            Layout::Wide => without(word, fp),
            Layout::Half { half: h, .. } => half::without(word, h, fp),
        };
        r.inspect(|&w| self.check_other(w))
    }

    fn replace(self, word: u64, old: u32, new: u32) -> Option<u64> {
        let r = match self {
            Layout::Wide => replace(word, old, new),
            Layout::Half { half: h, .. } => half::replace(word, h, old, new),
        };
        r.inspect(|&w| self.check_other(w))
    }

    fn len(self, word: u64) -> u32 {
        match self {
            Layout::Wide => len(word),
            Layout::Half { half: h, .. } => half::len(word, h),
        }
    }

    fn is_canonical(self, word: u64) -> bool {
        match self {
            Layout::Wide => is_canonical(word),
            Layout::Half { .. } => half::is_canonical(word),
        }
    }

    /// The wide layout and both halves, beside empty, full and random buckets.
    fn all(rng: &mut Rng) -> Vec<Layout> {
        let mut v = vec![Layout::Wide];
        for h in 0..2 {
            v.push(Layout::Half { half: h, other: 0 });
            let full = half::encode([1, half::MAX, 0x1f, 0x20]);
            v.push(Layout::Half {
                half: h,
                other: full,
            });
            let fps = [0; 4].map(|_| fingerprint(rng, HALF, 0));
            v.push(Layout::Half {
                half: h,
                other: half::encode(fps),
            });
        }
        v
    }
}

/// A fingerprint or an empty slot (0), biased to collide with `anchor`'s
/// prefix or suffix, with `anchor` itself, with the extremes and with the
/// prefix and suffix boundaries.
fn slot(rng: &mut Rng, c: Codec, anchor: u32) -> u32 {
    let s = c.suffix_bits;
    let suffix_max = (1 << s) - 1;
    let prefix = match rng.below(6) {
        0 => 0,
        1 => 15,
        2 | 3 => anchor >> s,
        _ => rng.below(16) as u32,
    };
    let suffix = match rng.below(7) {
        0 => 0,
        1 => 1,
        2 => suffix_max,
        3 | 4 => anchor & suffix_max,
        _ => rng.below(1 << s) as u32,
    };
    match rng.below(8) {
        0 => anchor,
        1 => c.max,
        2 => 1,
        _ => prefix << s | suffix,
    }
}

/// A fingerprint (never 0), biased like [`slot`]; `anchor` 0 picks one.
fn fingerprint(rng: &mut Rng, c: Codec, anchor: u32) -> u32 {
    let anchor = if anchor == 0 {
        1 + rng.below(u64::from(c.max)) as u32
    } else {
        anchor
    };
    match slot(rng, c, anchor) {
        0 => anchor,
        fp => fp,
    }
}

/// A random multiset of up to four fingerprints, as four slots (0 = empty).
fn bucket(rng: &mut Rng, c: Codec) -> [u32; 4] {
    let anchor = fingerprint(rng, c, 0);
    let empties = rng.below(5) as usize;
    let mut fps = [0u32; 4];
    for (i, fp) in fps.iter_mut().enumerate() {
        if i >= empties {
            *fp = fingerprint(rng, c, anchor);
        }
    }
    // Shuffle, so that encode sees every order.
    for i in (1..4).rev() {
        fps.swap(i, rng.below(i as u64 + 1) as usize);
    }
    fps
}

fn sorted(mut v: [u32; 4]) -> [u32; 4] {
    v.sort_unstable();
    v
}

/// Every non-decreasing sequence of four prefixes.
fn prefix_sequences() -> Vec<[u32; 4]> {
    let mut v = Vec::new();
    for p0 in 0..16 {
        for p1 in p0..16 {
            for p2 in p1..16 {
                for p3 in p2..16 {
                    v.push([p0, p1, p2, p3]);
                }
            }
        }
    }
    v
}

#[test]
fn constants() {
    assert_eq!((BITS, SUFFIX_BITS, MAX), (17, 13, 0x1_ffff));
    assert_eq!((half::BITS, half::SUFFIX_BITS, half::MAX), (9, 5, 511));
    assert_eq!(codec::bucket_bits::<SUFFIX_BITS>(), 64);
    assert_eq!(codec::bucket_bits::<{ half::SUFFIX_BITS }>(), 32);
    assert_eq!(prefix_sequences().len(), CODES as usize);
    assert_eq!(EMPTY, 0);
    // The decoding table stays in L1.
    assert_eq!(std::mem::size_of_val(&DECODE), 8192);
}

#[test]
fn every_prefix_sequence_round_trips_through_a_distinct_code() {
    for c in [WIDE, HALF] {
        let s = c.suffix_bits;
        let mut seen = vec![false; 1 << CODE_BITS];
        for p in prefix_sequences() {
            // Suffixes that keep the order whatever the prefixes.
            let fps = [0, 1, 2, 3].map(|i| p[i] << s | i as u32);
            let word = codec::encode::<{ SUFFIX_BITS }>(fps);
            let half_word = codec::encode::<{ half::SUFFIX_BITS }>(fps.map(|f| {
                // The same prefixes at the half width.
                (f >> s) << half::SUFFIX_BITS | (f & ((1 << s) - 1))
            }));
            let (w, code) = if s == SUFFIX_BITS {
                (word, word >> 52)
            } else {
                (half_word, half_word >> 20)
            };
            let code = code as usize;
            assert!(code < CODES as usize, "{p:?} -> {code}");
            assert!(!seen[code], "{p:?}: code {code} taken twice");
            seen[code] = true;
            let packed = p[0] | p[1] << 4 | p[2] << 8 | p[3] << 12;
            assert_eq!(u32::from(DECODE[code]), packed, "{p:?}");
            let back = if s == SUFFIX_BITS {
                fingerprints(w)
            } else {
                half::fingerprints(w, 0)
            };
            let expect = [0, 1, 2, 3].map(|i| p[i] << s | i as u32);
            assert_eq!(back, expect);
        }
        assert!(seen[..CODES as usize].iter().all(|&b| b));
    }
    assert_eq!(DECODE[0], 0);
    assert!(DECODE[CODES as usize..].iter().all(|&d| d == 0));
    // The largest sequence takes the last code.
    assert_eq!(encode([MAX; 4]) >> 52, u64::from(CODES - 1));
}

#[test]
fn spread_is_exact() {
    fn check<const S: u32>() {
        let spread = codec::spread::<S>();
        let lane_flags: u64 = (0..4).map(|i| 1u64 << (S * i + S - 1)).sum();
        for flags in 0u64..16 {
            let nibble_flags: u64 = (0..4)
                .filter(|i| flags >> i & 1 != 0)
                .map(|i| 1 << (4 * i + 3))
                .sum();
            let want: u64 = (0..4)
                .filter(|i| flags >> i & 1 != 0)
                .map(|i| 1 << (S * i + S - 1))
                .sum();
            let got = nibble_flags.wrapping_mul(spread);
            assert_eq!(got & lane_flags, want, "S = {S}, flags {flags:04b}");
            // No carries: each term lands on its own bit.
            assert_eq!(
                got.count_ones(),
                nibble_flags.count_ones() * 4,
                "S = {S}, flags {flags:04b}"
            );
        }
    }
    check::<{ SUFFIX_BITS }>();
    check::<{ half::SUFFIX_BITS }>();
}

#[test]
fn the_empty_bucket_is_zero() {
    assert_eq!(encode([0; 4]), 0);
    assert_eq!(fingerprints(0), [0; 4]);
    assert_eq!(len(0), 0);
    assert!(holds(0, 0), "an empty bucket has an empty slot");
    assert!((1..=MAX).all(|fp| !holds(0, fp)));
    assert!(is_canonical(0));
    assert_eq!(without(0, 1), None);
    assert_eq!(half::encode([0; 4]), 0);
    for h in 0..2 {
        assert_eq!(half::fingerprints(0, h), [0; 4]);
        assert_eq!(half::len(0, h), 0);
        assert!((1..=half::MAX).all(|fp| !half::holds(0, h, fp)));
    }
    assert!(half::is_canonical(0));
    // Removing the last fingerprint gives the empty word back.
    for fp in [1, 2, 0x1fff, 0x2000, MAX] {
        assert_eq!(without(with(0, fp).unwrap(), fp), Some(0));
    }
}

#[test]
fn fingerprints_of_encode_is_the_sorted_multiset() {
    let mut rng = Rng(0x5eed_0001);
    for layout in Layout::all(&mut rng) {
        for _ in 0..20_000 {
            let fps = bucket(&mut rng, layout.codec());
            let word = layout.encode(fps);
            assert_eq!(layout.fingerprints(word), sorted(fps), "{layout:?} {fps:?}");
            assert!(layout.is_canonical(word), "{layout:?} {fps:?}");
            let occupied = fps.iter().filter(|&&f| f != 0).count() as u32;
            assert_eq!(layout.len(word), occupied, "{layout:?} {fps:?}");
            // Every order of the same multiset is the same word.
            let mut perm = fps;
            for _ in 0..4 {
                perm.swap(rng.below(4) as usize, rng.below(4) as usize);
                assert_eq!(layout.encode(perm), word);
            }
        }
    }
}

#[test]
fn word_equality_is_multiset_equality() {
    let mut rng = Rng(0x5eed_0002);
    for c in [WIDE, HALF] {
        for _ in 0..50_000 {
            let a = bucket(&mut rng, c);
            // b: a with one slot changed, often to a colliding value.
            let mut b = a;
            let i = rng.below(4) as usize;
            b[i] = slot(&mut rng, c, a[(i + 1) % 4].max(1));
            let (wa, wb) = if c.suffix_bits == SUFFIX_BITS {
                (encode(a), encode(b))
            } else {
                (u64::from(half::encode(a)), u64::from(half::encode(b)))
            };
            assert_eq!(wa == wb, sorted(a) == sorted(b), "{a:?} {b:?}");
        }
    }
}

#[test]
fn holds_agrees_with_membership() {
    let mut rng = Rng(0x5eed_0003);
    for layout in Layout::all(&mut rng) {
        let c = layout.codec();
        for _ in 0..20_000 {
            let fps = bucket(&mut rng, c);
            let word = layout.encode(fps);
            for &fp in &fps {
                assert!(layout.holds(word, fp), "{layout:?} {fps:?} {fp:#x}");
            }
            for _ in 0..8 {
                let near = fps[rng.below(4) as usize].max(1);
                let probe = fingerprint(&mut rng, c, near);
                assert_eq!(
                    layout.holds(word, probe),
                    fps.contains(&probe),
                    "{layout:?} {fps:?} {probe:#x}"
                );
            }
            assert_eq!(layout.holds(word, 0), fps.contains(&0));
        }
    }
}

#[test]
fn holds_agrees_with_membership_for_every_fingerprint() {
    let mut rng = Rng(0x5eed_0004);
    for layout in Layout::all(&mut rng) {
        let c = layout.codec();
        let words = if c.max == MAX { 40 } else { 400 };
        for _ in 0..words {
            let fps = bucket(&mut rng, c);
            let word = layout.encode(fps);
            for fp in 1..=c.max {
                assert_eq!(
                    layout.holds(word, fp),
                    fps.contains(&fp),
                    "{layout:?} {fps:?} {fp:#x}"
                );
            }
        }
    }
}

#[test]
fn with_and_without_follow_a_multiset_model() {
    let mut rng = Rng(0x5eed_0005);
    for layout in Layout::all(&mut rng) {
        let c = layout.codec();
        for _ in 0..500 {
            let mut model: Vec<u32> = Vec::new();
            let mut word = layout.encode([0; 4]);
            let anchor = fingerprint(&mut rng, c, 0);
            for _ in 0..200 {
                let fp = match rng.below(3) {
                    // Often one already present.
                    0 if !model.is_empty() => model[rng.below(model.len() as u64) as usize],
                    _ => fingerprint(&mut rng, c, anchor),
                };
                match rng.below(5) {
                    0 | 1 => {
                        let got = layout.with(word, fp);
                        if model.len() == 4 {
                            assert_eq!(got, None, "{layout:?} {model:?} + {fp:#x}");
                        } else {
                            model.push(fp);
                            word = got.expect("room left");
                        }
                    }
                    2 | 3 => {
                        let got = layout.without(word, fp);
                        match model.iter().position(|&f| f == fp) {
                            Some(i) => {
                                model.swap_remove(i);
                                word = got.expect("present");
                            }
                            None => assert_eq!(got, None, "{layout:?} {model:?} - {fp:#x}"),
                        }
                    }
                    _ => {
                        let new = fingerprint(&mut rng, c, anchor);
                        let got = layout.replace(word, fp, new);
                        match model.iter().position(|&f| f == fp) {
                            Some(i) => {
                                model[i] = new;
                                word = got.expect("present");
                            }
                            None => assert_eq!(got, None),
                        }
                    }
                }
                let mut slots = [0u32; 4];
                slots[4 - model.len()..].copy_from_slice(&model);
                let want = sorted(slots);
                assert_eq!(layout.fingerprints(word), want, "{layout:?}");
                assert_eq!(word, layout.encode(want), "canonical after each step");
                assert_eq!(layout.len(word), model.len() as u32);
                assert_eq!(layout.holds(word, fp), model.contains(&fp));
                assert!(layout.is_canonical(word));
            }
        }
    }
}

#[test]
fn a_full_bucket_takes_no_more_and_an_absent_fingerprint_is_not_removed() {
    let mut rng = Rng(0x5eed_0006);
    for layout in Layout::all(&mut rng) {
        let c = layout.codec();
        for _ in 0..5_000 {
            let mut fps = bucket(&mut rng, c);
            for f in fps.iter_mut().filter(|f| **f == 0) {
                *f = c.max;
            }
            let word = layout.encode(fps);
            assert_eq!(layout.len(word), 4);
            assert!(!layout.holds(word, 0), "a full bucket has no empty slot");
            let fp = fingerprint(&mut rng, c, fps[0]);
            assert_eq!(layout.with(word, fp), None);
            if !fps.contains(&fp) {
                assert_eq!(layout.without(word, fp), None);
                assert_eq!(layout.replace(word, fp, 1), None);
            }
            // Four copies of one value, then a fifth.
            let same = layout.encode([fp; 4]);
            assert_eq!(layout.with(same, fp), None);
            assert_eq!(layout.len(same), 4);
        }
    }
}

#[test]
fn non_canonical_words_are_rejected() {
    let mut rng = Rng(0x5eed_0007);
    // Unused codes.
    for code in CODES..1 << CODE_BITS {
        assert!(!is_canonical(u64::from(code) << 52));
        assert!(!half::is_canonical(u64::from(code) << 20));
        assert!(!half::is_canonical(u64::from(code) << 52));
    }
    // Suffixes out of order under equal prefixes: [0x2001, 0x2000] stored as is.
    let bad = encode([0, 0, 0x2000, 0x2001]) ^ (1 << 26) ^ (1 << 39);
    assert_eq!(fingerprints(bad), [0, 0, 0x2001, 0x2000]);
    assert!(!is_canonical(bad));
    // A non-empty slot below an empty one.
    assert!(!is_canonical(5));
    // Bits above the low bucket's 32 bits belong to the other one: fine; bits
    // above a half bucket's 32 are not part of it.
    assert!(half::is_canonical(
        u64::from(half::encode([1, 2, 3, 4])) << 32
    ));
    // Random words: canonical exactly when they re-encode to themselves.
    let mut canonical = 0;
    for _ in 0..200_000 {
        let w = rng.next();
        let c = is_canonical(w);
        assert_eq!(
            c,
            encode(fingerprints(w)) == w && (w >> 52) < u64::from(CODES)
        );
        canonical += u32::from(c);
        let hc = half::is_canonical(w);
        let hw = |h| u64::from(half::encode(half::fingerprints(w, h))) << (32 * h);
        assert_eq!(
            hc,
            hw(0) | hw(1) == w && (0..2).all(|h| half::bucket(w, h) >> 20 < CODES)
        );
    }
    // Most random words are canonical (distinct prefixes leave the suffixes
    // free); both kinds must have been seen.
    assert!(canonical > 0 && canonical < 200_000, "{canonical}");
}

#[test]
fn fingerprints_of_hashes_span_the_range_and_invert() {
    assert_eq!(of_hash(0), 1);
    assert_eq!(of_hash(u64::MAX), MAX);
    assert_eq!(half::of_hash(0), 1);
    assert_eq!(half::of_hash(u64::MAX), half::MAX);
    for fp in [1, 2, 3, 0x1fff, 0x2000, MAX / 2, MAX - 1, MAX] {
        let h = hash_with(fp, 12345);
        assert_eq!(of_hash(h), fp);
        assert_eq!(h as u32, 12345);
    }
    for fp in 1..=half::MAX {
        assert_eq!(half::of_hash(half::hash_with(fp, 7)), fp);
    }
    let mut rng = Rng(0x5eed_0008);
    for _ in 0..100_000 {
        let h = rng.next();
        let fp = of_hash(h);
        assert!((1..=MAX).contains(&fp));
        assert_eq!(of_hash(hash_with(fp, h as u32)), fp);
        assert!((1..=half::MAX).contains(&half::of_hash(h)));
    }
}

#[test]
fn halves_are_independent() {
    let mut rng = Rng(0x5eed_0009);
    for _ in 0..20_000 {
        let a = bucket(&mut rng, HALF);
        let b = bucket(&mut rng, HALF);
        let word = half::with_bucket(half::with_bucket(0, 0, half::encode(a)), 1, half::encode(b));
        assert_eq!(half::fingerprints(word, 0), sorted(a));
        assert_eq!(half::fingerprints(word, 1), sorted(b));
        for &fp in a.iter().filter(|&&f| f != 0) {
            assert!(half::holds(word, 0, fp));
            assert_eq!(half::holds(word, 1, fp), b.contains(&fp));
        }
    }
}
