//! The byte format and merging: round trips answer exactly as the original,
//! every damaged input is refused without a panic, merges are multiset sums.

use std::collections::BTreeMap;
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};

use lockfree_cuckoo_filter::test_hooks::{self, TableHooks};
use lockfree_cuckoo_filter::{
    CuckooFilter, DecodeError, DefaultHashBuilder, FingerprintBits, GrowableCuckooFilter,
    HasherIdentity, MergeError, DEFAULT_SEED,
};
use proptest::prelude::*;

const HEADER: usize = 56;

/// Bytes after the table of an encoding with an empty moved list: the
/// list's length, the item count, the checksum.
const TRAILER: usize = 20;

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

/// A filter of `bits`. Every filter here has the fixed seed `DEFAULT_SEED`,
/// so that any two of one size merge, and encodings can be pinned (filters
/// get a random seed each by default).
fn filter(bits: FingerprintBits, capacity: usize) -> CuckooFilter {
    CuckooFilter::builder()
        .capacity(capacity)
        .fingerprint_bits(bits)
        .seed(DEFAULT_SEED)
        .build()
        .unwrap()
}

/// A filter of `bits` with some items in it.
fn small(bits: FingerprintBits, buckets: u64, items: u64) -> CuckooFilter {
    let f = test_hooks::with_buckets(buckets, bits, DefaultHashBuilder::with_seed(DEFAULT_SEED))
        .unwrap();
    for i in 0..items {
        f.insert(&i).unwrap();
    }
    f
}

/// Rewrites the checksum so that the content is what gets checked.
fn fix_crc(bytes: &mut [u8]) {
    let n = bytes.len() - 4;
    let crc = crc32c::crc32c(&bytes[..n]);
    bytes[n..].copy_from_slice(&crc.to_le_bytes());
}

/// Decodes; an accepted input must be canonical (re-encodes to itself).
fn decode(bytes: &[u8]) -> Result<CuckooFilter, DecodeError> {
    let r = CuckooFilter::from_bytes(bytes);
    if let Ok(f) = &r {
        assert_eq!(f.to_bytes(), bytes, "accepted a non-canonical encoding");
    }
    r
}

/// Asserts that `g` answers every query exactly as `f` does.
fn assert_same(f: &CuckooFilter, g: &CuckooFilter, probes: u64) {
    assert_eq!(g.len(), f.len());
    assert_eq!(g.capacity(), f.capacity());
    assert_eq!(g.bucket_count(), f.bucket_count());
    assert_eq!(g.fingerprint_bits(), f.fingerprint_bits());
    assert_eq!(g.hasher(), f.hasher());
    assert_eq!(g.fingerprints(), f.fingerprints());
    for k in 0..probes {
        assert_eq!(g.contains(&k), f.contains(&k), "key {k}");
    }
}

#[derive(Clone, Debug)]
enum Op {
    Insert(u16),
    Remove(u16),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            3 => any::<u16>().prop_map(|k| Op::Insert(k % 2048)),
            1 => any::<u16>().prop_map(|k| Op::Remove(k % 2048)),
        ],
        0..600,
    )
}

fn apply(f: &CuckooFilter, ops: &[Op]) {
    for op in ops {
        match *op {
            Op::Insert(k) => {
                let _ = f.insert(&k);
            }
            Op::Remove(k) => {
                f.remove(&k);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn restored_filter_answers_exactly_as_the_original(
        bits in bits(), capacity in 0usize..1500, ops in ops(), seed in any::<u64>(),
    ) {
        let f = CuckooFilter::builder()
            .capacity(capacity)
            .fingerprint_bits(bits)
            .hasher(DefaultHashBuilder::with_seed(seed))
            .build()
            .unwrap();
        apply(&f, &ops);
        let bytes = f.to_bytes();
        let g = decode(&bytes).unwrap();
        assert_same(&f, &g, 4096);
        // The restored filter goes on working like the original.
        for k in 5000..5050u32 {
            prop_assert_eq!(f.insert(&k).is_ok(), g.insert(&k).is_ok());
        }
        prop_assert!(f.remove(&5000u32) == g.remove(&5000u32));
        assert_same(&f, &g, 6000);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = decode(&bytes);
        let mut with_magic = b"LFCUCKOO".to_vec();
        with_magic.extend_from_slice(&bytes);
        let _ = decode(&with_magic);
    }

    #[test]
    fn valid_header_and_garbage_never_panics(
        bits in bits(),
        buckets in (1u64..40).prop_map(|b| 2 * b),
        garbage in prop::collection::vec(any::<u8>(), 0..2500),
        fix_checksum in any::<bool>(),
        fix_count in any::<bool>(),
    ) {
        let mut bytes = small(bits, buckets, 0).to_bytes();
        // The table's words: after the header, before the moved list's
        // length (0), the item count and the checksum.
        let body = HEADER..bytes.len() - TRAILER;
        let n = garbage.len().min(body.len());
        bytes[body.start..body.start + n].copy_from_slice(&garbage[..n]);
        // Semi-sorted words: garbage is mostly not a bucket the codec writes
        // (refused, `InvalidBucket`), and there are no lanes to count.
        let sorted = matches!(bits, FingerprintBits::Bits9 | FingerprintBits::Bits17);
        if fix_count && !sorted {
            // Clear the bits outside every slot (the top bits of a word of
            // 10, 12 or 21-bit slots, slots past the last bucket), then count
            // the nonzero slots.
            let f_bits = bits.bits();
            let lanes = bits.slots_per_word() as usize;
            let slots = buckets as usize * bits.slots_per_bucket() as usize;
            prop_assert_eq!(body.len() / 8, slots.div_ceil(lanes));
            let mut count = 0u64;
            for (i, chunk) in bytes[body.clone()].chunks_exact_mut(8).enumerate() {
                let mut word = u64::from_le_bytes(chunk.try_into().unwrap());
                let mut kept = 0;
                for lane in 0..lanes.min(slots - i * lanes) {
                    let v = (word >> (lane as u32 * f_bits)) & ((1 << f_bits) - 1);
                    count += u64::from(v != 0);
                    kept |= v << (lane as u32 * f_bits);
                }
                word = kept;
                chunk.copy_from_slice(&word.to_le_bytes());
            }
            let at = bytes.len() - 12;
            bytes[at..at + 8].copy_from_slice(&count.to_le_bytes());
        }
        if fix_checksum {
            fix_crc(&mut bytes);
        }
        let changed = bytes != small(bits, buckets, 0).to_bytes();
        match decode(&bytes) {
            Ok(f) => {
                prop_assert!(fix_checksum || !changed, "damage passed the checksum");
                // Any slot contents are a valid table: use it.
                for k in 0..100u32 {
                    if f.insert(&k).is_ok() {
                        prop_assert!(f.contains(&k));
                    }
                }
                for k in 0..100u32 {
                    f.remove(&k);
                }
            }
            Err(e) => prop_assert!(
                !(fix_checksum && fix_count && !sorted),
                "a consistent table was refused: {}", e
            ),
        }
    }

    #[test]
    fn any_single_damaged_byte_is_refused(
        bits in bits(), items in 0u64..20, at in any::<prop::sample::Index>(), xor in 1u8..,
    ) {
        let mut bytes = small(bits, 8, items).to_bytes();
        let i = at.index(bytes.len());
        bytes[i] ^= xor;
        prop_assert!(decode(&bytes).is_err());
    }

    #[test]
    fn merge_is_a_multiset_sum(
        bits in bits(), capacity in 1usize..800,
        a_keys in prop::collection::vec(0u32..3000, 0..300),
        b_keys in prop::collection::vec(0u32..3000, 0..300),
    ) {
        let a = filter(bits, capacity * 2);
        let b = filter(bits, capacity * 2);
        let a_in: Vec<u32> = a_keys.into_iter().filter(|k| a.insert(k).is_ok()).collect();
        let b_in: Vec<u32> = b_keys.into_iter().filter(|k| b.insert(k).is_ok()).collect();
        let before = multiset(&a);
        let a_copy = CuckooFilter::from_bytes(&a.to_bytes()).unwrap();
        match a.merge(&b) {
            Ok(()) => {
                let mut sum = before.clone();
                for (k, n) in multiset(&b) {
                    *sum.entry(k).or_insert(0) += n;
                }
                prop_assert_eq!(multiset(&a), sum);
                prop_assert_eq!(a.len(), a_in.len() + b_in.len());
                for k in 0..4000u32 {
                    prop_assert_eq!(a.contains(&k), a_copy.contains(&k) || b.contains(&k));
                }
                for k in a_in.iter().chain(&b_in) {
                    prop_assert!(a.remove(k));
                }
                prop_assert!(a.is_empty());
            }
            Err(MergeError::Full { merged, total }) => {
                prop_assert_eq!(total, b.len());
                prop_assert_eq!(a.len(), a_in.len() + merged);
                let after = multiset(&a);
                for (k, n) in before {
                    prop_assert!(after.get(&k).copied().unwrap_or(0) >= n, "lost an item");
                }
            }
            Err(e) => prop_assert!(false, "{}", e),
        }
    }
}

/// The table's contents as a multiset of (bucket pair, fingerprint).
fn multiset(f: &CuckooFilter) -> BTreeMap<(u64, u64, u32), usize> {
    let mut m = BTreeMap::new();
    for (bucket, fp) in f.fingerprints() {
        let (_, alt, _) = f.position(f.hash_for(bucket, fp));
        *m.entry((bucket.min(alt), bucket.max(alt), fp)).or_insert(0) += 1;
    }
    m
}

#[test]
fn every_truncation_and_extension_is_refused() {
    for bits in FingerprintBits::ALL {
        let bytes = small(bits, 6, 10).to_bytes();
        for n in 0..bytes.len() {
            let err = decode(&bytes[..n]).unwrap_err();
            assert!(
                matches!(err, DecodeError::Truncated { .. }),
                "{bits:?} {n}: {err}"
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(matches!(
            decode(&longer),
            Err(DecodeError::TrailingBytes { .. })
        ));
        assert!(decode(&bytes).is_ok());
    }
}

#[test]
fn every_single_byte_error_is_refused() {
    // CRC-32C detects every error burst of up to 32 bits: exhaustively, every
    // value of every byte of a small filter.
    for bits in FingerprintBits::ALL {
        let bytes = small(bits, 2, 5).to_bytes();
        for i in 0..bytes.len() {
            for x in 1..=255u8 {
                let mut damaged = bytes.clone();
                damaged[i] ^= x;
                assert!(
                    decode(&damaged).is_err(),
                    "{bits:?}: byte {i} ^ {x:#x} accepted"
                );
            }
        }
    }
}

#[test]
fn encoding_is_pinned() {
    // Byte-for-byte what docs/FORMAT.md describes.
    let f = small(FingerprintBits::Bits16, 2, 0);
    f.insert_hash(f.hash_for(1, 0xbeef)).unwrap();
    let bytes = f.to_bytes();
    let mut expected = Vec::new();
    expected.extend_from_slice(b"LFCUCKOO");
    expected.extend_from_slice(&[2, 0, 16, 4, 0, 0, 0, 0]);
    expected.extend_from_slice(&1u64.to_le_bytes()); // hasher id
    expected.extend_from_slice(&DEFAULT_SEED.to_le_bytes());
    expected.extend_from_slice(&2u64.to_le_bytes()); // buckets
    expected.extend_from_slice(&0u64.to_le_bytes()); // reserved
    expected.extend_from_slice(&2u64.to_le_bytes()); // words
    expected.extend_from_slice(&[0; 8]); // bucket 0
    expected.extend_from_slice(&[0xef, 0xbe, 0, 0, 0, 0, 0, 0]); // bucket 1
    expected.extend_from_slice(&0u64.to_le_bytes()); // moved entries
    expected.extend_from_slice(&1u64.to_le_bytes()); // items
    let crc = crc32c::crc32c(&expected);
    expected.extend_from_slice(&crc.to_le_bytes());
    assert_eq!(bytes, expected);
    assert_eq!(
        crc32c::crc32c(b"123456789"),
        0xe306_9283,
        "CRC-32C check value"
    );
}

#[test]
fn packed_encoding_is_pinned() {
    // 12-bit slots, five to a word from bit 0 up, a bucket of five slots
    // being one word: bucket 1 is word 1, filled from its lowest slot; the
    // top four bits of each word are 0.
    let f = small(FingerprintBits::Bits12, 2, 0);
    f.insert_hash(f.hash_for(1, 0xabc)).unwrap();
    f.insert_hash(f.hash_for(1, 0x123)).unwrap();
    let bytes = f.to_bytes();
    let mut expected = Vec::new();
    expected.extend_from_slice(b"LFCUCKOO");
    expected.extend_from_slice(&[2, 0, 12, 5, 0, 0, 0, 0]);
    expected.extend_from_slice(&1u64.to_le_bytes()); // hasher id
    expected.extend_from_slice(&DEFAULT_SEED.to_le_bytes());
    expected.extend_from_slice(&2u64.to_le_bytes()); // buckets
    expected.extend_from_slice(&0u64.to_le_bytes()); // reserved
    expected.extend_from_slice(&2u64.to_le_bytes()); // words
    expected.extend_from_slice(&0u64.to_le_bytes()); // bucket 0
    expected.extend_from_slice(&(0xabc_u64 | 0x123 << 12).to_le_bytes()); // bucket 1
    expected.extend_from_slice(&0u64.to_le_bytes()); // moved entries
    expected.extend_from_slice(&2u64.to_le_bytes()); // items
    let crc = crc32c::crc32c(&expected);
    expected.extend_from_slice(&crc.to_le_bytes());
    assert_eq!(bytes, expected);
    assert_eq!(decode(&bytes).unwrap().to_bytes(), bytes);
}

/// Sets a little-endian field of a valid encoding and fixes the checksum.
fn with_field(bytes: &[u8], at: usize, value: &[u8]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at..at + value.len()].copy_from_slice(value);
    fix_crc(&mut b);
    b
}

#[test]
fn each_error_names_what_is_wrong() {
    let f = small(FingerprintBits::Bits16, 4, 3);
    let bytes = f.to_bytes();
    let e = |b: &[u8]| decode(b).unwrap_err();

    assert_eq!(
        e(b""),
        DecodeError::Truncated {
            expected: 60,
            actual: 0
        }
    );
    assert_eq!(
        e(b"LFCU"),
        DecodeError::Truncated {
            expected: 60,
            actual: 4
        }
    );
    assert_eq!(e(b"LFCX"), DecodeError::BadMagic);
    assert_eq!(e(&with_field(&bytes, 0, b"X")), DecodeError::BadMagic);
    assert_eq!(
        e(&with_field(&bytes, 8, &[3, 0])),
        DecodeError::UnsupportedVersion { version: 3 }
    );
    assert_eq!(
        e(&with_field(&bytes, 10, &[13])),
        DecodeError::UnknownFingerprintBits { bits: 13 }
    );
    // 12-bit fingerprints come in buckets of five: a header that says 12
    // bits and four slots is not one this version writes.
    assert_eq!(
        e(&with_field(&bytes, 10, &[12])),
        DecodeError::UnsupportedBucketSize { bits: 12, slots: 4 }
    );
    assert_eq!(
        e(&with_field(&bytes, 11, &[8])),
        DecodeError::UnsupportedBucketSize { bits: 16, slots: 8 }
    );
    assert_eq!(
        e(&with_field(&bytes, 12, &[2])),
        DecodeError::UnsupportedFlags { flags: 2 }
    );
    // Flag bit 0: bytes 40 to 48 hold the load the table was sized for, in
    // thousandths, from 500 to below the layout's full load (940 here).
    let sized = |flags: u8, load: u64| {
        with_field(&with_field(&bytes, 12, &[flags]), 40, &load.to_le_bytes())
    };
    for load in [0, 3, 499, 940, 970, 1 << 32] {
        assert_eq!(
            e(&sized(1, load)),
            DecodeError::InvalidSizingLoad { load },
            "{load}"
        );
    }
    for load in [500, 809, 939] {
        let g = decode(&sized(1, load)).unwrap();
        assert!(g.capacity() <= f.capacity(), "{load}");
        assert_eq!(g.to_bytes(), sized(1, load));
    }
    assert_eq!(
        e(&sized(3, 809)),
        DecodeError::UnsupportedFlags { flags: 3 }
    );
    // A growable filter's tables are sized for their layout's full load.
    let chain = GrowableCuckooFilter::builder()
        .initial_capacity(10)
        .seed(DEFAULT_SEED)
        .build()
        .unwrap()
        .to_bytes();
    let end = chain.len() - 4;
    let mut table = with_field(&chain[24..end], 12, &[1]);
    table = with_field(&table, 40, &809u64.to_le_bytes());
    let mut sized_chain = chain[..24].to_vec();
    sized_chain.extend_from_slice(&table);
    sized_chain.extend_from_slice(&[0; 4]);
    fix_crc(&mut sized_chain);
    assert!(matches!(
        GrowableCuckooFilter::from_bytes(&sized_chain),
        Err(DecodeError::InvalidChain { reason }) if reason.contains("sized for a load")
    ));
    for buckets in [0u64, 3, (1 << 32) + 2, u64::MAX] {
        assert_eq!(
            e(&with_field(&bytes, 32, &buckets.to_le_bytes())),
            DecodeError::InvalidBucketCount { buckets }
        );
    }
    assert_eq!(
        e(&with_field(&bytes, 32, &6u64.to_le_bytes())),
        DecodeError::WordCountMismatch {
            expected: 6,
            found: 4
        }
    );
    assert_eq!(
        e(&with_field(&bytes, bytes.len() - 12, &4u64.to_le_bytes())),
        DecodeError::ItemCountMismatch {
            recorded: 4,
            found: 3
        }
    );
    assert_eq!(
        e(&with_field(&bytes, 40, &3u64.to_le_bytes())),
        DecodeError::ReservedNotZero
    );
    // A moved list of one entry whose bucket is past the table's four.
    let mut moved = bytes[..bytes.len() - TRAILER].to_vec();
    moved.extend_from_slice(&1u64.to_le_bytes());
    moved.extend_from_slice(&4u32.to_le_bytes());
    moved.extend_from_slice(&7u32.to_le_bytes());
    moved.extend_from_slice(&4u64.to_le_bytes());
    moved.extend_from_slice(&[0; 4]);
    fix_crc(&mut moved);
    assert_eq!(e(&moved), DecodeError::InvalidMovedEntry { index: 0 });
    let mut flipped = bytes.clone();
    flipped[HEADER] ^= 0x10;
    assert!(matches!(e(&flipped), DecodeError::ChecksumMismatch { .. }));
    assert!(matches!(
        e(&with_field(&bytes, 16, &[9])),
        DecodeError::HasherMismatch {
            found_id: 9,
            expected_id: 1,
            ..
        }
    ));
    for err in [e(b""), e(&flipped), e(&with_field(&bytes, 16, &[9]))] {
        let _: &dyn std::error::Error = &err;
        assert!(!err.to_string().is_empty());
    }
}

#[test]
fn huge_claims_are_refused_before_allocating() {
    // 2^32 buckets of 32-bit slots claim 128 GiB: refused from the length.
    let f = small(FingerprintBits::Bits32, 2, 0);
    let mut b = f.to_bytes();
    b[32..40].copy_from_slice(&(1u64 << 32).to_le_bytes());
    b[48..56].copy_from_slice(&(1u64 << 33).to_le_bytes());
    assert_eq!(
        decode(&b).unwrap_err(),
        DecodeError::Truncated {
            expected: 76 + (1 << 36),
            actual: b.len() as u64
        }
    );
}

#[test]
fn the_seed_and_the_hasher_travel_with_the_bytes() {
    let seeded = DefaultHashBuilder::with_seed(99);
    let f = CuckooFilter::builder()
        .capacity(100)
        .hasher(seeded)
        .build()
        .unwrap();
    f.insert("x").unwrap();
    let bytes = f.to_bytes();
    let g = CuckooFilter::from_bytes(&bytes).unwrap();
    assert_eq!(*g.hasher(), seeded);
    assert!(g.contains("x"));
    assert!(CuckooFilter::from_bytes_with_hasher(&bytes, seeded).is_ok());
    assert_eq!(
        CuckooFilter::from_bytes_with_hasher(&bytes, DefaultHashBuilder::with_seed(98))
            .unwrap_err(),
        DecodeError::HasherMismatch {
            expected_id: 1,
            expected_seed: 98,
            found_id: 1,
            found_seed: 99
        }
    );
}

#[derive(Clone, Default, PartialEq)]
struct Custom(BuildHasherDefault<DefaultHasher>);

impl BuildHasher for Custom {
    type Hasher = DefaultHasher;
    fn build_hasher(&self) -> DefaultHasher {
        self.0.build_hasher()
    }
}

impl HasherIdentity for Custom {
    const ID: u64 = 0xc057_0000;
    fn seed(&self) -> u64 {
        7
    }
}

#[test]
fn custom_hashers_round_trip_and_merge() {
    let f = CuckooFilter::builder()
        .capacity(500)
        .hasher(Custom::default())
        .build()
        .unwrap();
    let g = CuckooFilter::builder()
        .capacity(500)
        .hasher(Custom::default())
        .build()
        .unwrap();
    for i in 0..200u32 {
        f.insert(&i).unwrap();
        g.insert(&(i + 200)).unwrap();
    }
    let g = CuckooFilter::from_bytes_with_hasher(&g.to_bytes(), Custom::default()).unwrap();
    f.merge(&g).unwrap();
    assert!((0..400u32).all(|i| f.contains(&i)));
    assert_eq!(f.len(), 400);
    assert!(matches!(
        CuckooFilter::from_bytes(&f.to_bytes()),
        Err(DecodeError::HasherMismatch {
            found_id: 0xc057_0000,
            found_seed: 7,
            ..
        })
    ));
}

#[test]
fn merge_refuses_filters_that_place_items_differently() {
    let f = filter(FingerprintBits::Bits16, 1000);
    let narrow = filter(FingerprintBits::Bits8, 1000);
    let smaller = filter(FingerprintBits::Bits16, 500);
    let reseeded = CuckooFilter::builder()
        .capacity(1000)
        .hasher(DefaultHashBuilder::with_seed(1))
        .build()
        .unwrap();
    for other in [&narrow, &smaller, &reseeded] {
        other.insert("x").unwrap();
    }
    assert_eq!(
        f.merge(&narrow),
        Err(MergeError::FingerprintBitsMismatch {
            ours: FingerprintBits::Bits16,
            theirs: FingerprintBits::Bits8
        })
    );
    assert!(matches!(
        f.merge(&smaller),
        Err(MergeError::BucketCountMismatch { .. })
    ));
    assert_eq!(f.merge(&reseeded), Err(MergeError::HasherMismatch));
    assert!(f.is_empty(), "a refused merge merged something");
}

#[test]
fn growable_merge_checks_every_table_before_it_merges_any() {
    // Chains built for different rates agree on their first seven tables
    // (16-bit) and differ from the eighth on: 32-bit at 1e-3, 16-bit at 2e-3.
    let build = |rate| {
        GrowableCuckooFilter::builder()
            .initial_capacity(1)
            .false_positive_rate(rate)
            .seed(7)
            .build()
            .unwrap()
    };
    let (a, b) = (build(1e-3), build(2e-3));
    let mut n = 0u64;
    while b.table_count() < 8 {
        b.insert(&n).unwrap();
        n += 1;
    }
    a.insert(&u64::MAX).unwrap();
    let tables = a.table_count();
    assert_eq!(a.fingerprint_bits(), b.fingerprint_bits()[..tables]);
    assert_eq!(
        a.merge(&b),
        Err(MergeError::FingerprintBitsMismatch {
            ours: FingerprintBits::Bits32,
            theirs: FingerprintBits::Bits16
        })
    );
    assert_eq!(a.len(), 1, "a refused merge merged something");
    assert_eq!(a.table_count(), tables, "a refused merge grew the filter");
}

#[test]
fn filters_built_on_separate_machines_merge_through_bytes() {
    // Each "machine" fills its own filter and ships the bytes.
    let shipped: Vec<Vec<u8>> = (0..4u64)
        .map(|m| {
            let f = filter(FingerprintBits::Bits16, 10_000);
            for i in 0..2000 {
                f.insert(&(m, i)).unwrap();
            }
            f.to_bytes()
        })
        .collect();
    let all = CuckooFilter::from_bytes(&shipped[0]).unwrap();
    for bytes in &shipped[1..] {
        all.merge(&CuckooFilter::from_bytes(bytes).unwrap())
            .unwrap();
    }
    assert_eq!(all.len(), 8000);
    assert!((0..4u64).all(|m| (0..2000).all(|i| all.contains(&(m, i)))));
    let fp = (0..100_000u64)
        .filter(|i| all.contains(&(9u64, *i)))
        .count();
    assert!(fp < 100, "{fp} false positives in 100000");
}

#[test]
fn self_merge_terminates_and_keeps_everything() {
    let f = filter(FingerprintBits::Bits8, 1000);
    for i in 0..300u32 {
        f.insert(&i).unwrap();
    }
    f.merge(&f).unwrap();
    assert_eq!(f.len(), 600);
    match f.merge(&f) {
        Err(MergeError::Full { merged, total: 600 }) => assert_eq!(f.len(), 600 + merged),
        other => panic!("{other:?}"),
    }
    assert!((0..300u32).all(|i| f.contains(&i)));
    // Each item is held at least twice now.
    for i in 0..300u32 {
        assert!(f.remove(&i) && f.remove(&i));
    }
}

#[test]
fn merge_while_others_insert() {
    let f = filter(FingerprintBits::Bits16, 20_000);
    let other = filter(FingerprintBits::Bits16, 20_000);
    for i in 0..5000u32 {
        other.insert(&(1, i)).unwrap();
    }
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..5000u32 {
                f.insert(&(0, i)).unwrap();
            }
        });
        s.spawn(|| f.merge(&other).unwrap());
    });
    assert_eq!(f.len(), 10_000);
    assert!((0..5000u32).all(|i| f.contains(&(0, i)) && f.contains(&(1, i))));
}

#[cfg(feature = "serde")]
#[test]
fn serde_round_trips_as_the_byte_string() {
    use serde::de::value::{BytesDeserializer, Error};
    use serde::Deserialize;

    let f = small(FingerprintBits::Bits8, 10, 20);
    let json = serde_json::to_string(&f).unwrap();
    assert_eq!(json, serde_json::to_string(&f.to_bytes()).unwrap());
    let g: CuckooFilter = serde_json::from_str(&json).unwrap();
    assert_same(&f, &g, 1000);

    let bytes = f.to_bytes();
    let g = CuckooFilter::deserialize(BytesDeserializer::<Error>::new(&bytes)).unwrap();
    assert_same(&f, &g, 1000);
    let err = CuckooFilter::deserialize(BytesDeserializer::<Error>::new(&bytes[1..])).unwrap_err();
    assert!(err.to_string().contains("magic"), "{err}");
    assert!(serde_json::from_str::<CuckooFilter>("[1, 2, 3]").is_err());
}

mod growable {
    use lockfree_cuckoo_filter::{
        DecodeError, DefaultHashBuilder, GrowableCuckooFilter, DEFAULT_SEED,
    };

    fn grown() -> GrowableCuckooFilter {
        // A fixed seed: across tables, a remove can take a newer table's
        // colliding copy, and the item that owned it then has none to remove
        // (see `remove_hash`); with a random seed, about one call in 400
        // failed an assert below.
        let f = GrowableCuckooFilter::builder()
            .initial_capacity(16)
            .seed(DEFAULT_SEED)
            .build()
            .unwrap();
        for i in 0..2000u32 {
            f.insert(&i).unwrap();
        }
        for i in (0..2000u32).step_by(3) {
            assert!(f.remove(&i));
        }
        assert!(f.table_count() > 3);
        f
    }

    #[test]
    fn round_trip_answers_exactly_as_the_original() {
        let f = grown();
        let bytes = f.to_bytes();
        let g = GrowableCuckooFilter::from_bytes(&bytes).unwrap();
        assert_eq!(g.len(), f.len());
        assert_eq!(g.table_count(), f.table_count());
        assert_eq!(g.capacity(), f.capacity());
        assert_eq!(g.fingerprint_bits(), f.fingerprint_bits());
        assert_eq!(g.max_false_positive_rate(), f.max_false_positive_rate());
        for i in 0..20_000u32 {
            assert_eq!(g.contains(&i), f.contains(&i), "item {i}");
        }
        // Canonical: the decoded filter encodes to the same bytes.
        assert_eq!(g.to_bytes(), bytes);
        // And it keeps growing like the original.
        for i in 5000..9000u32 {
            g.insert(&i).unwrap();
        }
        assert!((5000..9000u32).all(|i| g.contains(&i)));
    }

    #[test]
    fn damaged_chains_are_errors_not_panics() {
        let bytes = grown().to_bytes();
        for len in 0..bytes.len() {
            assert!(
                GrowableCuckooFilter::from_bytes(&bytes[..len]).is_err(),
                "truncated to {len}"
            );
        }
        for at in (0..bytes.len()).step_by(7) {
            let mut bad = bytes.clone();
            bad[at] ^= 0x5a;
            assert!(
                GrowableCuckooFilter::from_bytes(&bad).is_err(),
                "flipped byte {at}"
            );
        }
        let mut long = bytes.clone();
        long.push(0);
        assert!(GrowableCuckooFilter::from_bytes(&long).is_err());
        // A single filter's bytes are not a chain, and the other way round.
        let single = lockfree_cuckoo_filter::CuckooFilter::with_capacity(10).to_bytes();
        assert_eq!(
            GrowableCuckooFilter::from_bytes(&single).unwrap_err(),
            DecodeError::WrongFilterType { growable: false }
        );
        assert_eq!(
            lockfree_cuckoo_filter::CuckooFilter::from_bytes(&bytes).unwrap_err(),
            DecodeError::WrongFilterType { growable: true }
        );
        // Only the whole magic: a prefix of the other one is just not ours.
        assert_eq!(
            GrowableCuckooFilter::from_bytes(&single[..7]).unwrap_err(),
            DecodeError::BadMagic
        );
    }

    /// A chain at a rate below the builder's floor, as an earlier version's
    /// builder took: it loads (saved filters stay readable), and when its
    /// budget runs out, an insert fails with `RateExhausted` and changes
    /// nothing.
    #[test]
    fn a_chain_below_the_rate_floor_loads_and_stops_growing_cleanly() {
        use lockfree_cuckoo_filter::InsertError;
        let low = 1e-8;
        assert!(GrowableCuckooFilter::builder()
            .false_positive_rate(low)
            .build()
            .is_err());
        let f = GrowableCuckooFilter::builder()
            .false_positive_rate(1e-7)
            .seed(DEFAULT_SEED)
            .build()
            .unwrap();
        let mut bytes = f.to_bytes();
        // The rate is the header's f64 at offset 16 (docs/FORMAT.md).
        bytes[16..24].copy_from_slice(&low.to_le_bytes());
        super::fix_crc(&mut bytes);
        let g = GrowableCuckooFilter::from_bytes(&bytes).unwrap();
        assert_eq!(g.max_false_positive_rate(), low);
        let mut inserted = 0u64;
        let err = loop {
            match g.insert(&inserted) {
                Ok(()) => inserted += 1,
                Err(e) => break e,
            }
            assert!(inserted < 1_000_000, "never ran out of budget");
        };
        assert!(matches!(err, InsertError::RateExhausted { rate, .. } if rate == low));
        assert_eq!(g.len() as u64, inserted);
        assert!((0..inserted).all(|i| g.contains(&i)));
    }

    #[test]
    fn hasher_identity_is_checked() {
        let seeded = DefaultHashBuilder::with_seed(5);
        let f = GrowableCuckooFilter::builder()
            .hasher(seeded)
            .build()
            .unwrap();
        f.insert("x").unwrap();
        let bytes = f.to_bytes();
        assert!(GrowableCuckooFilter::from_bytes_with_hasher(&bytes, seeded)
            .unwrap()
            .contains("x"));
        assert!(GrowableCuckooFilter::from_bytes(&bytes)
            .unwrap()
            .contains("x"));
        assert!(matches!(
            GrowableCuckooFilter::from_bytes_with_hasher(
                &bytes,
                DefaultHashBuilder::with_seed(DEFAULT_SEED)
            ),
            Err(DecodeError::HasherMismatch { .. })
        ));
    }
}

#[cfg(feature = "serde")]
#[test]
fn serde_round_trips_a_growable_filter() {
    use lockfree_cuckoo_filter::GrowableCuckooFilter;
    let f = GrowableCuckooFilter::with_capacity(8);
    for i in 0..500u32 {
        f.insert(&i).unwrap();
    }
    let json = serde_json::to_string(&f).unwrap();
    assert_eq!(json, serde_json::to_string(&f.to_bytes()).unwrap());
    let g: GrowableCuckooFilter = serde_json::from_str(&json).unwrap();
    assert_eq!(g.to_bytes(), f.to_bytes());
    assert!(serde_json::from_str::<GrowableCuckooFilter>("[1, 2, 3]").is_err());
}
