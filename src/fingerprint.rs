//! Fingerprint widths, and the branch-free lane arithmetic that finds a
//! fingerprint (or an empty slot) inside a packed 64-bit word.
//!
//! The width is chosen at run time ([`FingerprintBits`], public) and fixed at
//! compile time inside the table ([`Width`]: [`W8`], [`W16`], [`W32`]); the
//! table module's `AnyTable` maps one to the other.
//!
//! A word holds `64 / BITS` lanes. A bucket is four consecutive lanes: half a
//! word at 8 bits, one word at 16 bits, two words at 32 bits. A lane holding 0
//! is an empty slot, which is why fingerprints are never 0.

/// Slots per bucket: a bucket is this many consecutive lanes.
pub(crate) const SLOTS: u32 = 4;

/// Bits per fingerprint. Longer fingerprints cost memory and buy a lower
/// false-positive rate: about `8 / 2^bits` at full load.
///
/// ```
/// use lockfree_cuckoo_filter::{CuckooFilter, FingerprintBits};
///
/// let f = CuckooFilter::builder()
///     .capacity(1000)
///     .fingerprint_bits(FingerprintBits::Bits8)
///     .build()?;
/// assert_eq!(f.fingerprint_bits(), FingerprintBits::Bits8);
/// assert_eq!(FingerprintBits::Bits8.bits(), 8);
/// # Ok::<(), lockfree_cuckoo_filter::BuildError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum FingerprintBits {
    /// 8-bit fingerprints: about 3 % false positives at full load, 8.4 bits per
    /// item.
    Bits8,
    /// 16-bit fingerprints (the default): about 0.012 % false positives.
    #[default]
    Bits16,
    /// 32-bit fingerprints: about 2 in 10^9 false positives.
    Bits32,
}

impl FingerprintBits {
    /// All widths, shortest first.
    pub const ALL: [FingerprintBits; 3] = [Self::Bits8, Self::Bits16, Self::Bits32];

    /// The width in bits.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::FingerprintBits;
    /// assert_eq!(FingerprintBits::Bits32.bits(), 32);
    /// ```
    pub const fn bits(self) -> u32 {
        match self {
            Self::Bits8 => 8,
            Self::Bits16 => 16,
            Self::Bits32 => 32,
        }
    }

    /// The width of `bits` bits, if it is one of the three offered.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::FingerprintBits;
    /// assert_eq!(FingerprintBits::from_bits(8), Some(FingerprintBits::Bits8));
    /// assert_eq!(FingerprintBits::from_bits(12), None);
    /// assert!(FingerprintBits::ALL.iter().all(|b| FingerprintBits::from_bits(b.bits()) == Some(*b)));
    /// ```
    pub const fn from_bits(bits: u32) -> Option<Self> {
        match bits {
            8 => Some(Self::Bits8),
            16 => Some(Self::Bits16),
            32 => Some(Self::Bits32),
            _ => None,
        }
    }

    /// The false-positive rate bound at load factor `load` (0 to 1): a lookup
    /// compares against the `2 · 4 · load` fingerprints of its two buckets, each
    /// matching with probability `2^-bits`, so the rate is at most
    /// `1 - (1 - 2^-bits)^(8 · load)`.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::FingerprintBits;
    /// let p = FingerprintBits::Bits16.false_positive_rate(0.95);
    /// assert!(p > 1.1e-4 && p < 1.2e-4);
    /// ```
    pub fn false_positive_rate(self, load: f64) -> f64 {
        let miss = 1.0 - (-f64::from(self.bits())).exp2();
        1.0 - miss.powf(2.0 * f64::from(SLOTS) * load)
    }
}

/// A fingerprint width, fixed at compile time so that each width gets its own
/// monomorphised table: the run-time choice costs one predictable branch per
/// operation (in `CuckooFilter`'s dispatch), never one per slot.
pub(crate) trait Width: Copy + Send + Sync + 'static {
    /// Bits per fingerprint: 8, 16 or 32.
    const BITS: u32;
    /// Fingerprint lanes in one 64-bit word.
    const LANES: u32 = 64 / Self::BITS;
    /// Slots of one bucket that share a word (4 when the bucket fits in one).
    const SLOTS_PER_WORD: u32 = if Self::LANES < SLOTS {
        Self::LANES
    } else {
        SLOTS
    };
    /// Words a bucket spans: 1, or 2 for 32-bit fingerprints.
    const WORDS_PER_BUCKET: usize = (SLOTS / Self::SLOTS_PER_WORD) as usize;
    /// Largest fingerprint, `2^BITS - 1`; fingerprints lie in `1..=MAX`.
    const MAX: u64 = (1u64 << Self::BITS) - 1;
    /// The lowest bit of every lane.
    const LOW: u64 = u64::MAX / Self::MAX;
    /// The highest bit of every lane.
    const HIGH: u64 = Self::LOW << (Self::BITS - 1);
}

/// 8-bit fingerprints: two buckets per word.
#[derive(Clone, Copy, Debug)]
pub(crate) struct W8;
/// 16-bit fingerprints: one bucket per word.
#[derive(Clone, Copy, Debug)]
pub(crate) struct W16;
/// 32-bit fingerprints: one bucket in two words.
#[derive(Clone, Copy, Debug)]
pub(crate) struct W32;

impl Width for W8 {
    const BITS: u32 = 8;
}
impl Width for W16 {
    const BITS: u32 = 16;
}
impl Width for W32 {
    const BITS: u32 = 32;
}

/// The high bit of each lane of `x` that is exactly zero.
///
/// Exact, unlike the shorter `(x - LOW) & !x & HIGH`, whose borrow can flag a
/// lane holding 1 just above a zero lane: in an 8-bit table that lane may belong
/// to the neighbouring bucket, and a remove would clear the wrong fingerprint.
/// Adding `0x7f..` to the low bits of a lane cannot carry out of the lane.
#[inline(always)]
pub(crate) fn zero_lanes<W: Width>(x: u64) -> u64 {
    let low_bits = !W::HIGH;
    !(((x & low_bits).wrapping_add(low_bits)) | x | low_bits)
}

/// `fp` repeated in every lane.
#[inline(always)]
pub(crate) fn broadcast<W: Width>(fp: u32) -> u64 {
    u64::from(fp).wrapping_mul(W::LOW)
}

/// Index of the lowest lane flagged (by its high bit) in `flags`, which is not 0.
#[inline(always)]
pub(crate) fn first_lane<W: Width>(flags: u64) -> u32 {
    flags.trailing_zeros() / W::BITS
}

/// The fingerprint in `lane` of `word`.
#[inline(always)]
pub(crate) fn lane_value<W: Width>(word: u64, lane: u32) -> u32 {
    ((word >> (lane * W::BITS)) & W::MAX) as u32
}

/// `word` with `lane` set to `fp` (the lane is assumed empty).
#[inline(always)]
pub(crate) fn with_lane<W: Width>(word: u64, lane: u32, fp: u32) -> u64 {
    word | (u64::from(fp) << (lane * W::BITS))
}

/// `word` with `lane` emptied.
#[inline(always)]
pub(crate) fn without_lane<W: Width>(word: u64, lane: u32) -> u64 {
    word & !(W::MAX << (lane * W::BITS))
}

/// The fingerprint of a 64-bit hash: its high 32 bits scaled onto `1..=MAX`.
///
/// The low 32 bits choose the bucket, so fingerprint and bucket are independent.
/// Multiply-shift maps the 32 bits uniformly (to within one part in 2^32/MAX)
/// without a division, and never yields the empty value 0.
#[inline(always)]
pub(crate) fn of_hash<W: Width>(hash: u64) -> u32 {
    (((hash >> 32) * W::MAX) >> 32) as u32 + 1
}

/// A hash whose fingerprint is `fp` (in `1..=MAX`) and whose low half is `low`.
/// The inverse of [`of_hash`]; test hooks use it to aim items at buckets.
#[cfg(any(test, feature = "test-hooks"))]
pub(crate) fn hash_with<W: Width>(fp: u32, low: u32) -> u64 {
    debug_assert!(fp >= 1 && u64::from(fp) <= W::MAX);
    let high = (u64::from(fp - 1) << 32).div_ceil(W::MAX);
    (high << 32) | u64::from(low)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zero_lanes_naive<W: Width>(x: u64) -> u64 {
        (0..W::LANES)
            .filter(|&l| lane_value::<W>(x, l) == 0)
            .fold(0, |m, l| m | (1u64 << (l * W::BITS + W::BITS - 1)))
    }

    fn check_zero_lanes<W: Width>() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Zero out some lanes and plant 1s above them, the borrow trap.
            let sparse = x & (x >> 3) & (x >> 5);
            let planted = sparse & W::LOW.wrapping_mul(1);
            for v in [x, sparse, planted, x & 0xffff_0000_ffff, 1, 0, u64::MAX] {
                assert_eq!(zero_lanes::<W>(v), zero_lanes_naive::<W>(v), "{v:#x}");
            }
        }
    }

    #[test]
    fn zero_lanes_is_exact() {
        check_zero_lanes::<W8>();
        check_zero_lanes::<W16>();
        check_zero_lanes::<W32>();
        // The borrow trap of the short formula: a zero lane under a lane of 1.
        assert_eq!(zero_lanes::<W8>(0x0100), 0x8080_8080_8080_0080);
    }

    #[test]
    fn layout_constants() {
        assert_eq!(
            (W8::LANES, W8::SLOTS_PER_WORD, W8::WORDS_PER_BUCKET),
            (8, 4, 1)
        );
        assert_eq!(
            (W16::LANES, W16::SLOTS_PER_WORD, W16::WORDS_PER_BUCKET),
            (4, 4, 1)
        );
        assert_eq!(
            (W32::LANES, W32::SLOTS_PER_WORD, W32::WORDS_PER_BUCKET),
            (2, 2, 2)
        );
        assert_eq!(W16::LOW, 0x0001_0001_0001_0001);
        assert_eq!(W16::HIGH, 0x8000_8000_8000_8000);
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
        check_fingerprint_range::<W16>();
        check_fingerprint_range::<W32>();
    }
}
