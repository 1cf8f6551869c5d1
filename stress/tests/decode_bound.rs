//! What decoding allocates: the tables the input describes, no more bytes of
//! table than the input holds; their relocation stripes, at most one padded
//! counter per 64 buckets (at most half the table's bytes, at most 32 KiB),
//! and on tables of 53 248 buckets or more, more item-count shards (within
//! that half); plus a fixed overhead per table: at most 1.5 × the input plus about 2.5 KB
//! per table; and for a chain, the summary of its older tables, under 8 bytes
//! per slot they hold. And a chain only of the shape growth produces (each
//! table four or two times the one before, of the width the false-positive
//! budget gives it), checked on each table's header before that table is
//! allocated.

use lockfree_cuckoo_filter::test_hooks;
use lockfree_cuckoo_filter::{
    CuckooFilter, DecodeError, DefaultHashBuilder, FingerprintBits, GrowableCuckooFilter,
    DEFAULT_SEED,
};

/// The fixed part of a table's memory (padded item-count shards and
/// relocation stripes, the stash's first lines, the filter's own struct), which the README and the
/// decoders' docs state as "about 2.5 KB".
const PER_TABLE: usize = 2_600;

#[test]
fn a_decoded_table_costs_its_input_plus_a_fixed_overhead() {
    for bits in FingerprintBits::ALL {
        // 8256 and 16386 are just above 128 and 256 stripes' worth of
        // buckets: a stripe count rounded up there would cost up to twice
        // what FORMAT.md states. From 53 248 buckets the item count has
        // more shards (64 + 4 at 2^18).
        for buckets in [2u64, 64, 1 << 12, 8256, 16386, 53_248, 1 << 18] {
            let f = test_hooks::with_buckets(
                buckets,
                bits,
                DefaultHashBuilder::with_seed(DEFAULT_SEED),
            )
            .unwrap();
            let bytes = f.to_bytes();
            let g = CuckooFilter::from_bytes(&bytes).unwrap();
            let used = g.memory_usage();
            assert!(
                used <= bytes.len() * 3 / 2 + PER_TABLE,
                "{bits:?}, {buckets} buckets: {used} bytes for a {}-byte input",
                bytes.len()
            );
        }
    }
}

#[test]
fn a_decoded_chain_costs_its_input_plus_a_fixed_overhead_per_table() {
    let f = GrowableCuckooFilter::builder()
        .initial_capacity(0)
        .build()
        .unwrap();
    for i in 0..20_000u64 {
        f.insert(&i).unwrap();
    }
    assert!(f.table_count() > 5);
    let bytes = f.to_bytes();
    let g = GrowableCuckooFilter::from_bytes(&bytes).unwrap();
    // Grown by four: the summary adds under 0.6 × the input (FORMAT.md).
    let bound = bytes.len() * 21 / 10 + PER_TABLE * g.table_count();
    assert!(g.memory_usage() <= bound, "{} > {bound}", g.memory_usage());
}

/// The summary is the largest beside a chain that doubled, of 8-bit tables
/// (a byte of input per slot): FORMAT.md's bound is 1.5 + 2.7 times the input.
#[test]
fn a_decoded_doubled_chain_costs_at_most_its_bound() {
    let b8 = FingerprintBits::Bits8;
    for first in [8194u64, (1 << 16) + 2] {
        let tables = [table(b8, first), table(b8, 2 * first), table(b8, 4 * first)];
        let bytes = chain(0.5, &tables);
        let g = GrowableCuckooFilter::from_bytes(&bytes).expect("a chain an earlier version grew");
        let used = g.memory_usage();
        let bound = bytes.len() * 42 / 10 + PER_TABLE * 3;
        assert!(used <= bound, "{first} buckets first: {used} > {bound}");
        // The tables alone keep the single-table bound; the rest is summary.
        assert!(
            used > bytes.len() * 3 / 2 + PER_TABLE * 3,
            "no summary was built"
        );
    }
}

/// A chain encoding of `tables` (each a single table's encoding) for `rate`:
/// the layout of docs/FORMAT.md (version 2: the tables one after another),
/// with a correct checksum.
fn chain(rate: f64, tables: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(b"LFCUCKCH");
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&(tables.len() as u32).to_le_bytes());
    out.extend_from_slice(&rate.to_bits().to_le_bytes());
    for t in tables {
        out.extend_from_slice(t);
    }
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

fn table(bits: FingerprintBits, buckets: u64) -> Vec<u8> {
    test_hooks::with_buckets(buckets, bits, DefaultHashBuilder::with_seed(DEFAULT_SEED))
        .unwrap()
        .to_bytes()
}

#[test]
fn chains_growth_cannot_produce_are_refused() {
    let rate = 1e-3;
    let w = FingerprintBits::Bits16; // what growth picks first at 1e-3
                                     // The helper writes what the encoder writes.
    let grown = chain(rate, &[table(w, 2), table(w, 8), table(w, 32)]);
    let g = GrowableCuckooFilter::from_bytes(&grown).expect("a chain growth produces");
    assert_eq!(g.table_count(), 3);
    // Earlier versions doubled: their chains still decode, and grow on by four.
    let doubled = chain(rate, &[table(w, 2), table(w, 4), table(w, 8)]);
    let g = GrowableCuckooFilter::from_bytes(&doubled).expect("an earlier version's chain");
    assert_eq!(g.table_count(), 3);
    let mut i = 0u64;
    while g.table_count() == 3 {
        g.insert(&i).unwrap();
        i += 1;
    }
    assert_eq!(g.slots(), 4 * (2 + 4 + 8 + 32));
    assert!((0..i).all(|k| g.contains(&k)));

    // 33 two-bucket tables: 3.3 KB that would have allocated about 77 KB.
    let same_size = chain(rate, &vec![table(w, 2); 33]);
    assert!(matches!(
        GrowableCuckooFilter::from_bytes(&same_size),
        Err(DecodeError::InvalidChain { .. })
    ));
    // Not growing by two or four, or a width growth would not pick.
    for bad in [
        chain(rate, &[table(w, 4), table(w, 4)]),
        chain(rate, &[table(w, 4), table(w, 12)]),
        chain(rate, &[table(w, 4), table(w, 32)]),
        chain(rate, &[table(FingerprintBits::Bits32, 2)]),
        chain(rate, &[table(w, 2), table(FingerprintBits::Bits8, 4)]),
    ] {
        assert!(
            matches!(
                GrowableCuckooFilter::from_bytes(&bad),
                Err(DecodeError::InvalidChain { .. })
            ),
            "accepted a chain growth cannot produce"
        );
    }
}
