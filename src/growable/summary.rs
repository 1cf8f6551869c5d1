//! A summary of what the older tables of a growable filter hold: one bit per
//! key, so that a lookup reads one bit, not two buckets of each older table,
//! to learn that its item is in none of them.
//!
//! # Keys
//!
//! The key of an item is the pair of the top `s` bits of its hash's low half
//! (the bits that choose its first bucket, `⌊low · n / 2^32⌋` in a table of `n`
//! buckets) and its fingerprint in the tables' width `w`: `s + w` bits, with
//! `2^s` at most the buckets of the chain's first table, its smallest. A key
//! can be computed from the hash (lookups, and inserts that record their own
//! item) and also from what a table holds, without the hash: an entry of
//! bucket `b` with fingerprint `fp` has its first bucket at `b` or at `b`'s
//! alternate, and a first bucket `i` puts the low half in
//! `[i · 2^32 / n, (i + 1) · 2^32 / n)`, which spans at most two prefixes of
//! `s` bits when `2^s <= n`. So an entry sets two to four keys, one of them its
//! item's, and all of them are fixed by its bucket pair and its fingerprint:
//! moving it to its other bucket changes none.
//!
//! The bitmap has [`BITS_PER_SLOT`] bits for each slot of the tables it
//! covers, rounded up to a power of two, but never more bits than there are
//! keys: when it has one bit per key, the key is its index; otherwise the key
//! is mixed (multiply-shift) onto the bits. Bits are set, never cleared: a bit set for
//! an item that is gone only sends lookups to the tables.
//!
//! # Orderings
//!
//! Relaxed. The bits a covering sets from the tables are written before the
//! chain that publishes the summary (a Release CAS, loaded with Acquire); the
//! bits an insert sets for its own item are written before the insert
//! returns, and a lookup is owed that item only if it starts after that
//! return, so whatever ordered the two also orders the bit before the lookup.

use crate::error::AllocError;
use crate::fingerprint::{self, FingerprintBits};
use crate::sync::{AtomicU64, Ordering};
use crate::table::AnyTable;

/// Bits of the summary for each slot of the tables it covers (before
/// rounding up to a power of two). With two to four keys per entry, a lookup
/// of an absent item finds its bit set one time in ten to twenty-five (4 % on
/// the filter grown from 1000 items to 4 M).
const BITS_PER_SLOT: u64 = 32;

/// The smallest summary: 2^9 bits, one cache line.
const MIN_LOG_BITS: u32 = 9;

/// The multiplier that mixes a key onto fewer bits than it has.
const MIX: u64 = 0x9e37_79b9_7f4a_7c15;

/// The bitmap of keys of the items the covered tables hold (see the module
/// documentation).
pub(super) struct Summary {
    bits: Box<[AtomicU64]>,
    /// `32 - s`: the hash's low half shifted right by this is the prefix.
    prefix_shift: u32,
    /// The width `w` of the fingerprints in the key.
    fp_bits: u32,
    /// `2^w - 1`, the largest fingerprint (the tables' fingerprint of a hash
    /// is `fingerprint::of_hash_up_to` it).
    fp_max: u64,
    /// A key's bit is `key · mix >> index_shift`: for the direct index,
    /// `mix` is the power of two that makes that the key itself.
    mix: u64,
    index_shift: u32,
}

impl Summary {
    /// An empty summary for tables of `width`-bit fingerprints behind a first
    /// table of `first_buckets` buckets, sized for `slots` slots; an error if
    /// it cannot be allocated.
    pub(super) fn new(
        width: FingerprintBits,
        first_buckets: u64,
        slots: u64,
    ) -> Result<Self, AllocError> {
        let s = 63 - first_buckets.max(2).leading_zeros();
        let fp_bits = width.bits();
        let key_bits = s + fp_bits;
        let log_bits = Self::log_bits(slots, key_bits);
        let words = 1usize << (log_bits - 6);
        let mut bits = Vec::new();
        bits.try_reserve_exact(words).map_err(|_| AllocError {
            bytes: words as u64 * 8,
        })?;
        bits.extend((0..words).map(|_| AtomicU64::new(0)));
        Ok(Self {
            bits: bits.into_boxed_slice(),
            prefix_shift: 32 - s,
            fp_bits,
            fp_max: (1 << fp_bits) - 1,
            mix: if log_bits == key_bits {
                1 << (64 - log_bits)
            } else {
                MIX
            },
            index_shift: 64 - log_bits,
        })
    }

    /// The size of a summary of `slots` slots, for keys of `key_bits` bits,
    /// as the log of its bits: [`BITS_PER_SLOT`] a slot rounded up to a
    /// power of two, at least [`MIN_LOG_BITS`], at most one bit per key.
    fn log_bits(slots: u64, key_bits: u32) -> u32 {
        let wanted = slots.saturating_mul(BITS_PER_SLOT).max(1);
        // `next_power_of_two` would overflow above 2^63.
        (64 - (wanted - 1).leading_zeros()).clamp(MIN_LOG_BITS, key_bits)
    }

    /// Whether a summary for `slots` slots would have this one's size (so this
    /// one can be extended rather than replaced).
    pub(super) fn fits(&self, slots: u64) -> bool {
        let key_bits = 32 - self.prefix_shift + self.fp_bits;
        Self::log_bits(slots, key_bits) == 64 - self.index_shift
    }

    /// Whether the item of `hash` may be in the tables this covers.
    #[inline]
    pub(super) fn may_hold(&self, hash: u64) -> bool {
        let (word, bit) = self.place(self.key_of_hash(hash));
        self.bits[word].load(Ordering::Relaxed) & bit != 0
    }

    /// Records the item of `hash`.
    pub(super) fn record_hash(&self, hash: u64) {
        self.set(self.key_of_hash(hash));
    }

    /// Records the item of an entry of `table`: fingerprint `fp` in bucket
    /// `bucket`, whichever bucket of its pair that is (see the module
    /// documentation, "Keys").
    pub(super) fn record_entry(&self, table: &AnyTable, bucket: u64, fp: u32) {
        let n = u128::from(table.buckets());
        for first in [bucket, table.alternate(bucket, fp)] {
            let first = u128::from(first);
            let low = (first << 32).div_ceil(n);
            let high = ((first + 1) << 32).div_ceil(n) - 1;
            for prefix in (low >> self.prefix_shift)..=(high >> self.prefix_shift) {
                // `prefix` < 2^s, so this is the key `key_of_hash` gives.
                self.set(((prefix as u64) << self.fp_bits) | u64::from(fp));
            }
        }
    }

    /// The key of the item of `hash`: its prefix, then its fingerprint.
    #[inline(always)]
    fn key_of_hash(&self, hash: u64) -> u64 {
        let prefix = u64::from(hash as u32 >> self.prefix_shift);
        let fp = u64::from(fingerprint::of_hash_up_to(hash, self.fp_max));
        (prefix << self.fp_bits) | fp
    }

    /// The word and the bit of `key`.
    #[inline(always)]
    fn place(&self, key: u64) -> (usize, u64) {
        // At most `log_bits` bits, below the bits allocated.
        let index = (key.wrapping_mul(self.mix) >> self.index_shift) as usize;
        (index / 64, 1 << (index % 64))
    }

    fn set(&self, key: u64) {
        let (word, bit) = self.place(key);
        self.bits[word].fetch_or(bit, Ordering::Relaxed);
    }

    /// Bytes of the bitmap.
    pub(super) fn memory_usage(&self) -> usize {
        std::mem::size_of::<Self>() + std::mem::size_of_val(&*self.bits)
    }
}

#[cfg(all(test, not(lockfree_cuckoo_filter_loom)))]
mod tests {
    use super::*;
    use crate::fingerprint::{of_hash, W16, W32, W8};
    use crate::test_rng::xorshift;

    #[test]
    fn fingerprints_are_the_tables() {
        for (width, of) in [
            (FingerprintBits::Bits8, of_hash::<W8> as fn(u64) -> u32),
            (FingerprintBits::Bits16, of_hash::<W16>),
            (FingerprintBits::Bits32, of_hash::<W32>),
        ] {
            let s = Summary::new(width, 264, 1000).unwrap();
            let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
            for h in (0..10_000).map(|_| next()) {
                assert_eq!(s.key_of_hash(h) & s.fp_max, u64::from(of(h)));
            }
        }
    }

    /// The key of an item is among those its entry records, wherever in its
    /// pair the entry sits, in tables of any size at least the first's.
    #[test]
    fn an_entry_records_its_items_key() {
        for width in [FingerprintBits::Bits8, FingerprintBits::Bits16] {
            for first in [2, 6, 264, 1056] {
                for buckets in [first, first * 4 + 2, 16_900, 270_336] {
                    let table = AnyTable::new(width, buckets).unwrap();
                    let mut next = xorshift(0x2545_f491_4f6c_dd1d ^ buckets);
                    for h in (0..2_000).map(|_| next()) {
                        let pos = table.position(h);
                        for bucket in [pos.i1, pos.i2] {
                            let s = Summary::new(width, first, 1 << 20).unwrap();
                            s.record_entry(&table, bucket, pos.fp);
                            assert!(s.may_hold(h), "{width:?} {first} {buckets} {h:#x}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn sizes_are_powers_of_two_within_the_keys() {
        let s = Summary::new(FingerprintBits::Bits16, 264, 360_000).unwrap();
        // 8 + 16 key bits: at most 2^24 bits, the direct index.
        assert_eq!(s.bits.len(), 1 << 18);
        assert_eq!(s.mix, 1 << 40);
        assert!(s.fits(300_000) && !s.fits(1000));
        let small = Summary::new(FingerprintBits::Bits16, 264, 1000).unwrap();
        assert_eq!(small.bits.len() * 64, 1 << 15);
        assert_eq!(small.mix, MIX);
        let tiny = Summary::new(FingerprintBits::Bits8, 2, 0).unwrap();
        assert_eq!(tiny.bits.len() * 64, 1 << MIN_LOG_BITS);
        let h = 0x1234_5678_9abc_def0;
        assert!(!tiny.may_hold(h));
        tiny.record_hash(h);
        assert!(tiny.may_hold(h));
    }
}
