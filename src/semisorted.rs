//! Semi-sorted buckets (the cuckoo filter paper's §5.2): four fingerprints
//! whose order within the bucket carries no information, stored sorted so that
//! their four high bits can be compressed.
//!
//! # The idea
//!
//! A lookup only asks whether a bucket holds a fingerprint, never where, so a
//! bucket is a multiset and any fixed order of its slots will do. Sort the four
//! slots and split each fingerprint into a 4-bit *prefix* (its high bits) and a
//! *suffix* (the rest). The sorted prefixes form a non-decreasing sequence of
//! four values in `0..16`; there are only C(16 + 4 − 1, 4) = 3876 such
//! sequences (multisets of size four from sixteen values), fewer than
//! 2^12 = 4096. So the sixteen prefix bits of a bucket fit in a 12-bit code, one
//! bit saved per slot, and the suffixes are stored as they are. The paper counts
//! empty slots as the value 0 and applies the trick to buckets of four only, so
//! that the decoding table stays small enough for the first-level cache.
//!
//! # Layout
//!
//! [`BITS`]` = 17`: one bucket of four 17-bit fingerprints per 64-bit word,
//! 4-bit prefixes, 13-bit suffixes. Slots are sorted by their whole 17-bit value,
//! ascending, empty slots (0) first; slot `i` is the `i`-th smallest:
//!
//! ```text
//!  63      52 51     39 38     26 25     13 12      0
//! +----------+---------+---------+---------+---------+
//! |   code   | suffix3 | suffix2 | suffix1 | suffix0 |
//! +----------+---------+---------+---------+---------+
//! ```
//!
//! `code` ranks the prefix sequence `p0 ≤ p1 ≤ p2 ≤ p3` in the combinatorial
//! number system: with `cᵢ = pᵢ + i` (strictly increasing, at most 18),
//! `code = C(c0, 1) + C(c1, 2) + C(c2, 3) + C(c3, 4)`, a bijection from the 3876
//! sequences onto `0..3876`. Decoding is one load from [`DECODE`], a table of
//! 4096 `u16` (8 KiB) built at compile time that holds the four prefixes packed
//! four bits each, `p0` lowest. Encoding (writes only) sums four entries of a
//! 64-entry rank table. Codes `3876..4096` are never written; the table maps
//! them to four zero prefixes, and [`is_canonical`] rejects them.
//!
//! [`half`] is the same codec at 9 bits (4-bit prefixes, 5-bit suffixes): a
//! bucket takes 12 + 4·5 = 32 bits, two buckets per word.
//!
//! # Why the word is canonical
//!
//! Sorting by the whole value, not by the prefix alone, makes the encoding of a
//! multiset unique: two buckets are equal words exactly when they hold the same
//! fingerprints with the same counts. The table changes a bucket by
//! compare-and-swap of its whole word: a CAS that expects word `w` then succeeds
//! exactly when the bucket still holds the multiset it read, whatever order
//! other writers left the slots in (they cannot leave another order). Were two
//! encodings of one multiset possible, a CAS could fail although nothing it
//! depended on had changed, or a reader could see two different words for one
//! unchanged bucket.
//!
//! # Why the empty bucket is the word 0
//!
//! Four empty slots are four zero fingerprints: four zero prefixes (the sequence
//! `0, 0, 0, 0`, ranked 0: `C(0,1) + C(1,2) + C(2,3) + C(3,4) = 0`) and four zero
//! suffixes. So a zeroed allocation is an empty table, as for the plain widths,
//! and a slot is empty exactly when its prefix and suffix are both 0. Empty
//! slots sort first, so a full bucket is one whose slot 0 is not empty.
//!
//! # Costs
//!
//! [`holds`] is branch-free: one load from [`DECODE`] (its index needs no
//! bounds check) and about 25 instructions on x86-64, three of them
//! multiplications (SWAR over the four suffix lanes and the four prefix
//! nibbles, the nibble hits moved onto the suffix lanes by one multiplication).
//! Two buckets probed for one fingerprint share the broadcasts once inlined.
//! [`with`] and [`without`] decode the four fingerprints, sort them (a
//! five-comparator network) and re-encode (four loads from a 128-byte rank
//! table): a few tens of operations, paid only by writers. (The tests also
//! use a `replace`, an `of_hash` and a `MAX` of their own, compiled only for
//! them.)

use crate::ranked::binomial;

/// Slots per bucket.
const SLOTS: usize = 4;
/// Bits of a fingerprint's prefix, the part the code compresses.
pub(crate) const PREFIX_BITS: u32 = 4;
/// Bits of the code of four sorted prefixes.
pub(crate) const CODE_BITS: u32 = 12;
/// Number of non-decreasing sequences of four prefixes: C(19, 4). Valid codes
/// are `0..CODES`.
pub(crate) const CODES: u32 = 3876;
const _: () = assert!(CODES as u64 == binomial(16 + 4 - 1, 4) && CODES <= 1 << CODE_BITS);

/// Bits per fingerprint of the one-bucket-per-word layout.
pub(crate) const BITS: u32 = 17;
/// Bits of each slot's stored suffix.
pub(crate) const SUFFIX_BITS: u32 = BITS - PREFIX_BITS;
/// Largest fingerprint, `2^17 - 1`; fingerprints lie in `1..=MAX`, 0 is empty.
#[cfg(test)]
pub(crate) const MAX: u32 = (1 << BITS) - 1;
/// The word of an empty bucket.
#[cfg(test)]
pub(crate) const EMPTY: u64 = 0;

/// Prefix sequence by code: `DECODE[code]` holds the four sorted prefixes, four
/// bits each, `p0` in the low nibble. Unused codes (`CODES..`) read as 0.
pub(crate) static DECODE: [u16; 1 << CODE_BITS] = build_decode();

/// `RANK[i][p]` = C(p + i, i + 1): the share of the code of prefix `p` in
/// sorted slot `i`.
static RANK: [[u16; 16]; SLOTS] = build_rank();

const fn build_rank() -> [[u16; 16]; SLOTS] {
    let mut t = [[0u16; 16]; SLOTS];
    let mut i = 0;
    while i < SLOTS {
        let mut p = 0;
        while p < 16 {
            t[i][p] = binomial((p + i) as u64, (i + 1) as u64) as u16;
            p += 1;
        }
        i += 1;
    }
    t
}

const fn build_decode() -> [u16; 1 << CODE_BITS] {
    let rank = build_rank();
    let mut t = [0u16; 1 << CODE_BITS];
    let mut p0 = 0;
    while p0 < 16 {
        let mut p1 = p0;
        while p1 < 16 {
            let mut p2 = p1;
            while p2 < 16 {
                let mut p3 = p2;
                while p3 < 16 {
                    let code = rank[0][p0] + rank[1][p1] + rank[2][p2] + rank[3][p3];
                    t[code as usize] = (p0 | p1 << 4 | p2 << 8 | p3 << 12) as u16;
                    p3 += 1;
                }
                p2 += 1;
            }
            p1 += 1;
        }
        p0 += 1;
    }
    t
}

/// The codec for `S`-bit suffixes: a bucket of `4·S + 12` bits in the low bits
/// of a `u64` (suffix `i` at bit `S·i`, the code at bit `4·S`).
mod codec {
    use super::{CODE_BITS, DECODE, PREFIX_BITS, RANK};

    /// The mask of one suffix.
    #[inline(always)]
    const fn suffix_mask<const S: u32>() -> u64 {
        (1 << S) - 1
    }

    /// The lowest bit of each of the four suffix lanes.
    #[inline(always)]
    const fn low<const S: u32>() -> u64 {
        1 | 1 << S | 1 << (2 * S) | 1 << (3 * S)
    }

    /// The highest bit of each of the four suffix lanes.
    #[inline(always)]
    const fn high<const S: u32>() -> u64 {
        low::<S>() << (S - 1)
    }

    /// The four suffix lanes.
    #[inline(always)]
    const fn lanes<const S: u32>() -> u64 {
        (1 << (4 * S)) - 1
    }

    /// Multiplier that moves the flag of prefix nibble `i` (bit `4i + 3`) onto
    /// the flag of suffix lane `i` (bit `S·i + S − 1`): a shift by
    /// `(S − 4)(i + 1)`. The sixteen products of a flag and a term land on
    /// distinct bits (no carries), and only the `i = j` ones on lane flags;
    /// `spread_is_exact` checks both for the two widths.
    #[inline(always)]
    pub(super) const fn spread<const S: u32>() -> u64 {
        let d = S - PREFIX_BITS;
        1 << d | 1 << (2 * d) | 1 << (3 * d) | 1 << (4 * d)
    }

    /// The largest fingerprint.
    #[inline(always)]
    pub(super) const fn max<const S: u32>() -> u32 {
        (1 << (S + PREFIX_BITS)) - 1
    }

    /// Bits of a whole bucket.
    #[inline(always)]
    pub(super) const fn bucket_bits<const S: u32>() -> u32 {
        4 * S + CODE_BITS
    }

    /// The four prefixes of `bucket`, packed in nibbles (`p0` lowest).
    #[inline(always)]
    fn prefixes<const S: u32>(bucket: u64) -> u64 {
        u64::from(DECODE[((bucket >> (4 * S)) & ((1 << CODE_BITS) - 1)) as usize])
    }

    /// The flag bits (high bit of each suffix lane) of the slots of `bucket`
    /// that hold `fp`; with `fp = 0`, of its empty slots.
    #[inline(always)]
    pub(super) fn hits<const S: u32>(bucket: u64, fp: u32) -> u64 {
        debug_assert!(fp <= max::<S>());
        let fp = u64::from(fp);
        // Suffix lanes equal to fp's suffix: exact zero-lane test (adding the
        // low bits of a lane to all-ones below its high bit cannot carry out).
        let x = (bucket ^ (fp & suffix_mask::<S>()).wrapping_mul(low::<S>())) & lanes::<S>();
        let l = lanes::<S>() & !high::<S>();
        let suffix_hits = !(((x & l) + l) | x | l) & high::<S>();
        // Prefix nibbles equal to fp's prefix, the same test on 4-bit lanes.
        let y = prefixes::<S>(bucket) ^ (fp >> S).wrapping_mul(0x1111);
        let prefix_hits = !(((y & 0x7777) + 0x7777) | y | 0x7777) & 0x8888;
        suffix_hits & prefix_hits.wrapping_mul(spread::<S>())
    }

    /// The four fingerprints of `bucket`, ascending (0 = empty, first).
    #[inline]
    pub(super) fn fingerprints<const S: u32>(bucket: u64) -> [u32; 4] {
        let p = prefixes::<S>(bucket);
        let mut fps = [0u32; 4];
        for (i, fp) in fps.iter_mut().enumerate() {
            let i = i as u32;
            let prefix = (p >> (4 * i)) & 0xf;
            let suffix = (bucket >> (S * i)) & suffix_mask::<S>();
            *fp = (prefix << S | suffix) as u32;
        }
        fps
    }

    /// Sorts four values ascending (a five-comparator network).
    #[inline(always)]
    fn sort4(mut v: [u32; 4]) -> [u32; 4] {
        let mut cx = |a: usize, b: usize| {
            let (lo, hi) = (v[a].min(v[b]), v[a].max(v[b]));
            v[a] = lo;
            v[b] = hi;
        };
        cx(0, 1);
        cx(2, 3);
        cx(0, 2);
        cx(1, 3);
        cx(1, 2);
        v
    }

    /// The bucket holding the multiset `fps` (0 = empty), in canonical order.
    #[inline]
    pub(super) fn encode<const S: u32>(fps: [u32; 4]) -> u64 {
        let fps = sort4(fps);
        let mut code = 0u64;
        let mut suffixes = 0u64;
        for (i, &fp) in fps.iter().enumerate() {
            debug_assert!(fp <= max::<S>(), "fingerprint {fp:#x} too wide");
            let prefix = ((fp >> S) & 0xf) as usize;
            code += u64::from(RANK[i][prefix]);
            suffixes |= (u64::from(fp) & suffix_mask::<S>()) << (S * i as u32);
        }
        code << (4 * S) | suffixes
    }

    /// `bucket` with one more copy of `fp`; None when full.
    #[inline]
    pub(super) fn with<const S: u32>(bucket: u64, fp: u32) -> Option<u64> {
        debug_assert!(fp != 0 && fp <= max::<S>());
        let mut fps = fingerprints::<S>(bucket);
        if fps[0] != 0 {
            return None;
        }
        fps[0] = fp;
        Some(encode::<S>(fps))
    }

    /// `bucket` with one copy of `fp` fewer; None when it holds none.
    #[inline]
    pub(super) fn without<const S: u32>(bucket: u64, fp: u32) -> Option<u64> {
        debug_assert!(fp != 0 && fp <= max::<S>());
        if fp == 0 {
            return None;
        }
        let fps = crate::ranked::without_sorted(&fingerprints::<S>(bucket), 4, fp)?;
        Some(encode::<S>(fps))
    }

    /// `bucket` with one copy of `old` replaced by `new`; None when it holds
    /// no `old`.
    #[cfg(test)]
    #[inline]
    pub(super) fn replace<const S: u32>(bucket: u64, old: u32, new: u32) -> Option<u64> {
        debug_assert!(old != 0 && old <= max::<S>() && new != 0 && new <= max::<S>());
        if old == 0 {
            return None;
        }
        let mut fps = fingerprints::<S>(bucket);
        let slot = fps.iter().position(|&f| f == old)?;
        fps[slot] = new;
        Some(encode::<S>(fps))
    }

    /// Occupied slots of `bucket`.
    #[inline]
    pub(super) fn len<const S: u32>(bucket: u64) -> u32 {
        // The empty slots' flags, moved to their lanes' low bits and summed
        // into the top lane by one multiplication: `count_ones` without the
        // `popcnt` instruction (not in the x86-64 baseline) is a dozen
        // instructions, and inserts count two buckets.
        let ones = hits::<S>(bucket, 0) >> (S - 1);
        4 - ((ones.wrapping_mul(low::<S>()) >> (3 * S)) & 0x7) as u32
    }

    /// Whether `bucket` is the encoding this codec writes for some multiset:
    /// a valid code, no bits above the bucket, slots in canonical order.
    pub(super) fn is_canonical<const S: u32>(bucket: u64) -> bool {
        let bits = bucket_bits::<S>();
        (bits == 64 || bucket >> bits == 0)
            && ((bucket >> (4 * S)) & ((1 << CODE_BITS) - 1)) < u64::from(super::CODES)
            && encode::<S>(fingerprints::<S>(bucket)) == bucket
    }

    /// The fingerprint of a 64-bit hash: its high 32 bits scaled onto
    /// `1..=max` by multiply-shift (never 0), as `crate::fingerprint::of_hash`.
    #[cfg(test)]
    #[inline(always)]
    pub(super) fn of_hash<const S: u32>(hash: u64) -> u32 {
        (((hash >> 32) * u64::from(max::<S>())) >> 32) as u32 + 1
    }

    /// A hash whose fingerprint is `fp` and whose low half is `low`.
    #[cfg(test)]
    pub(super) fn hash_with<const S: u32>(fp: u32, low: u32) -> u64 {
        debug_assert!(fp >= 1 && fp <= max::<S>());
        let m = u64::from(max::<S>());
        let high = (u64::from(fp - 1) << 32).div_ceil(m);
        (high << 32) | u64::from(low)
    }
}

/// Whether the bucket `word` holds `fp` (in `1..=MAX`). Branch-free, one table
/// load. With `fp = 0` it answers whether the bucket has an empty slot.
#[inline]
pub(crate) fn holds(word: u64, fp: u32) -> bool {
    codec::hits::<SUFFIX_BITS>(word, fp) != 0
}

/// The four fingerprints of `word`, ascending; empty slots are 0 and first.
#[inline]
pub(crate) fn fingerprints(word: u64) -> [u32; 4] {
    codec::fingerprints::<SUFFIX_BITS>(word)
}

/// The word of the bucket holding the fingerprints `fps` (any order, 0 for an
/// empty slot, each at most `MAX`); the inverse of [`fingerprints`].
#[inline]
pub(crate) fn encode(fps: [u32; 4]) -> u64 {
    codec::encode::<SUFFIX_BITS>(fps)
}

/// `word` with one more copy of `fp` (in `1..=MAX`); None when the bucket is
/// full.
#[inline]
pub(crate) fn with(word: u64, fp: u32) -> Option<u64> {
    codec::with::<SUFFIX_BITS>(word, fp)
}

/// `word` with one copy of `fp` (in `1..=MAX`) fewer; None when it holds none.
#[inline]
pub(crate) fn without(word: u64, fp: u32) -> Option<u64> {
    codec::without::<SUFFIX_BITS>(word, fp)
}

/// `word` with one copy of `old` replaced by `new` (both in `1..=MAX`); None
/// when it holds no `old`. One CAS swaps a fingerprint for another.
#[cfg(test)]
#[inline]
pub(crate) fn replace(word: u64, old: u32, new: u32) -> Option<u64> {
    codec::replace::<SUFFIX_BITS>(word, old, new)
}

/// Occupied slots of `word` (0 to 4). Branch-free, one table load.
#[inline]
pub(crate) fn len(word: u64) -> u32 {
    codec::len::<SUFFIX_BITS>(word)
}

/// Whether `word` is a word this codec writes: a valid code and canonical slot
/// order. Words read from untrusted bytes must pass it before a table uses
/// them (the other functions assume it, though they never misbehave beyond
/// giving wrong answers on other words).
pub(crate) fn is_canonical(word: u64) -> bool {
    codec::is_canonical::<SUFFIX_BITS>(word)
}

/// The fingerprint of a 64-bit hash: its high 32 bits mapped onto `1..=MAX`
/// by multiply-shift, never 0 (as `crate::fingerprint::of_hash`).
#[cfg(test)]
#[inline(always)]
pub(crate) fn of_hash(hash: u64) -> u32 {
    codec::of_hash::<SUFFIX_BITS>(hash)
}

/// A hash whose fingerprint is `fp` (in `1..=MAX`) and whose low half is `low`:
/// the inverse of [`of_hash`].
#[cfg(test)]
pub(crate) fn hash_with(fp: u32, low: u32) -> u64 {
    codec::hash_with::<SUFFIX_BITS>(fp, low)
}

/// Two buckets of four 9-bit fingerprints per word (4-bit prefixes, 5-bit
/// suffixes): bucket `half` (0 or 1) is bits `32·half .. 32·half + 32`, laid
/// out like the one-bucket word (suffix `i` at bit `5i`, the code at bit 20).
/// A word of two empty buckets is 0.
pub(crate) mod half {
    use super::codec;

    /// Bits per fingerprint.
    pub(crate) const BITS: u32 = 9;
    /// Bits of each slot's stored suffix.
    pub(crate) const SUFFIX_BITS: u32 = BITS - super::PREFIX_BITS;
    /// Largest fingerprint, 511; fingerprints lie in `1..=MAX`, 0 is empty.
    #[cfg(test)]
    pub(crate) const MAX: u32 = (1 << BITS) - 1;

    /// The 32 bits of bucket `half` of `word`.
    #[inline(always)]
    pub(crate) fn bucket(word: u64, half: u32) -> u32 {
        debug_assert!(half < 2);
        (word >> (32 * half)) as u32
    }

    /// `word` with bucket `half` set to `bucket`.
    #[inline(always)]
    pub(crate) fn with_bucket(word: u64, half: u32, bucket: u32) -> u64 {
        debug_assert!(half < 2);
        let shift = 32 * half;
        (word & !(0xffff_ffff << shift)) | u64::from(bucket) << shift
    }

    /// Whether bucket `half` of `word` holds `fp` (in `1..=MAX`); with `fp = 0`,
    /// whether it has an empty slot.
    #[inline]
    pub(crate) fn holds(word: u64, half: u32, fp: u32) -> bool {
        codec::hits::<SUFFIX_BITS>(u64::from(bucket(word, half)), fp) != 0
    }

    /// The four fingerprints of bucket `half` of `word`, ascending (0 = empty).
    #[inline]
    pub(crate) fn fingerprints(word: u64, half: u32) -> [u32; 4] {
        codec::fingerprints::<SUFFIX_BITS>(u64::from(bucket(word, half)))
    }

    /// The 32 bits of the bucket holding `fps` (any order, 0 = empty).
    #[inline]
    pub(crate) fn encode(fps: [u32; 4]) -> u32 {
        codec::encode::<SUFFIX_BITS>(fps) as u32
    }

    /// `word` with one more copy of `fp` in bucket `half`; None when it is full.
    #[inline]
    pub(crate) fn with(word: u64, half: u32, fp: u32) -> Option<u64> {
        let b = codec::with::<SUFFIX_BITS>(u64::from(bucket(word, half)), fp)?;
        Some(with_bucket(word, half, b as u32))
    }

    /// `word` with one copy of `fp` fewer in bucket `half`; None when it holds
    /// none.
    #[inline]
    pub(crate) fn without(word: u64, half: u32, fp: u32) -> Option<u64> {
        let b = codec::without::<SUFFIX_BITS>(u64::from(bucket(word, half)), fp)?;
        Some(with_bucket(word, half, b as u32))
    }

    /// `word` with one copy of `old` replaced by `new` in bucket `half`; None
    /// when it holds no `old`.
    #[cfg(test)]
    #[inline]
    pub(crate) fn replace(word: u64, half: u32, old: u32, new: u32) -> Option<u64> {
        let b = codec::replace::<SUFFIX_BITS>(u64::from(bucket(word, half)), old, new)?;
        Some(with_bucket(word, half, b as u32))
    }

    /// Occupied slots of bucket `half` of `word`.
    #[inline]
    pub(crate) fn len(word: u64, half: u32) -> u32 {
        codec::len::<SUFFIX_BITS>(u64::from(bucket(word, half)))
    }

    /// Whether both buckets of `word` are canonical (see
    /// [`super::is_canonical`]).
    pub(crate) fn is_canonical(word: u64) -> bool {
        (0..2).all(|h| codec::is_canonical::<SUFFIX_BITS>(u64::from(bucket(word, h))))
    }

    /// The fingerprint of a 64-bit hash, in `1..=MAX`.
    #[cfg(test)]
    #[inline(always)]
    pub(crate) fn of_hash(hash: u64) -> u32 {
        codec::of_hash::<SUFFIX_BITS>(hash)
    }

    /// The inverse of [`of_hash`].
    #[cfg(test)]
    pub(crate) fn hash_with(fp: u32, low: u32) -> u64 {
        codec::hash_with::<SUFFIX_BITS>(fp, low)
    }
}

#[cfg(test)]
mod tests;
