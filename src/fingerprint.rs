//! Fingerprint widths, and the branch-free lane arithmetic that finds a
//! fingerprint (or an empty slot) inside a packed 64-bit word.
//!
//! The width is chosen at run time ([`FingerprintBits`], public) and fixed at
//! compile time inside the table ([`Width`]: [`W8`], [`W9`], [`W10`],
//! [`W12`], [`W16`], [`W17`], [`W21`], [`W32`]); the table module's
//! `AnyTable` maps one to the other. The 9 and 17-bit layouts are semi-sorted
//! buckets ([`crate::semisorted`]): two buckets a word and one, without lanes.
//!
//! A word holds `64 / BITS` lanes, from bit 0 up; the `64 mod BITS` bits above
//! them are unused and stay 0. A bucket is [`Width::SLOTS`] consecutive lanes
//! and never crosses a word boundary: half a word of four lanes at 8 bits, a
//! whole word at 10, 12 and 16 bits (six, five and four lanes), two whole
//! words at 21 and 32 bits (six and four lanes). A lane holding 0 is an empty
//! slot, which is why fingerprints are never 0.

mod lanes;
#[cfg(test)]
mod tests;

use crate::{ranked, semisorted};
pub(crate) use lanes::{
    broadcast, first_lane, lane_value, matches_in_either, matches_in_halves, with_lane,
    without_lane, zero_lanes,
};

/// The most slots a bucket has (the ranked bucket of eight): the size of
/// the fixed arrays that hold one bucket's fingerprints.
pub(crate) const MAX_SLOTS: usize = 8;

/// Bits per fingerprint. Longer fingerprints cost memory and buy a lower
/// false-positive rate: about `2 · slots / 2^bits` at full load, for a
/// bucket of [`slots_per_bucket`](Self::slots_per_bucket) slots.
///
/// Every slot lies inside one 64-bit word, `⌊64 / bits⌋` slots to a word (the
/// unused top bits of a word stay zero; the semi-sorted 9 and 17-bit layouts
/// pack 8 and 4, see [`slots_per_word`](Self::slots_per_word)), so a width
/// costs `64 / slots_per_word()` bits per slot:
/// [`bits_per_slot`](Self::bits_per_slot). A bucket is four slots, or, where
/// four do not divide a word's slots evenly (10, 12 and 21 bits), all the
/// slots of one word or of two: every bucket then lies in whole words, which
/// keeps a lookup to one comparison per word. The widths are
/// listed in [`ALL`](Self::ALL), cheapest first; the builder's
/// [`false_positive_rate`](crate::Builder::false_positive_rate) picks the
/// cheapest one that meets the rate asked.
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
///
/// The enum is `#[non_exhaustive]`: layouts may be added (as 9, 10, 12, 17
/// and 21 bits were), so a `match` on it needs a `_` arm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[non_exhaustive]
pub enum FingerprintBits {
    /// 8-bit fingerprints, eight to a word: about 2.9 % false positives at
    /// the 94 % load a filter is sized for, 8.5 bits per item.
    ///
    /// ```
    /// # use lockfree_cuckoo_filter::FingerprintBits;
    /// assert_eq!(FingerprintBits::Bits8.bits_per_slot(), 8.0);
    /// ```
    Bits8,
    /// 9-bit fingerprints in **semi-sorted** buckets (the cuckoo filter
    /// paper's §5.2, as [`Bits17`](Self::Bits17)): a bucket of four 9-bit
    /// fingerprints is half a 64-bit word, two buckets to a word. The memory
    /// of 8-bit fingerprints with about half their false positives: about
    /// 1.5 % at the 94 % load a filter is sized for, 8.5 bits per item.
    /// Lookups decode the bucket's code through the same 8 KiB table, and
    /// every change re-encodes the bucket's half of the word (one CAS, as for
    /// every layout).
    ///
    /// ```
    /// # use lockfree_cuckoo_filter::FingerprintBits;
    /// assert_eq!(FingerprintBits::Bits9.slots_per_word(), 8);
    /// assert_eq!(FingerprintBits::Bits9.bits_per_slot(), 8.0);
    /// assert!(FingerprintBits::Bits9.false_positive_rate(0.95) < 0.015);
    /// ```
    Bits9,
    /// 10-bit fingerprints, six to a word and a bucket of six, one word:
    /// about 1.1 % false positives at the 94 % load a filter is sized for,
    /// 11.3 bits per item.
    ///
    /// ```
    /// # use lockfree_cuckoo_filter::FingerprintBits;
    /// assert_eq!(FingerprintBits::Bits10.bits(), 10);
    /// assert_eq!(FingerprintBits::Bits10.slots_per_bucket(), 6);
    /// assert!((FingerprintBits::Bits10.bits_per_slot() - 64.0 / 6.0).abs() < 1e-12);
    /// ```
    Bits10,
    /// 12-bit fingerprints, five to a word and a bucket of five, one word:
    /// about 0.23 % false positives at the 94 % load a filter is sized for,
    /// 13.6 bits per item.
    ///
    /// ```
    /// # use lockfree_cuckoo_filter::FingerprintBits;
    /// assert_eq!(FingerprintBits::Bits12.bits_per_slot(), 12.8);
    /// assert_eq!(FingerprintBits::Bits12.slots_per_bucket(), 5);
    /// ```
    Bits12,
    /// 16-bit fingerprints (the default), four to a word, one bucket per word:
    /// about 0.012 % false positives.
    ///
    /// ```
    /// # use lockfree_cuckoo_filter::FingerprintBits;
    /// assert_eq!(FingerprintBits::default(), FingerprintBits::Bits16);
    /// ```
    #[default]
    Bits16,
    /// 17-bit fingerprints in **semi-sorted** buckets (the cuckoo filter
    /// paper's §5.2): a bucket's four fingerprints are kept sorted, so their
    /// four 4-bit prefixes fit in a 12-bit code, and a bucket of four 17-bit
    /// fingerprints is one 64-bit word. The memory of 16-bit fingerprints
    /// with half their false positives: about 0.0057 % at the 94 % load a
    /// filter is sized for, 17 bits per item. Lookups decode the bucket's
    /// code through an 8 KiB table, and every change re-encodes the whole
    /// word (one CAS, as for every layout).
    ///
    /// ```
    /// # use lockfree_cuckoo_filter::FingerprintBits;
    /// assert_eq!(FingerprintBits::Bits17.slots_per_word(), 4);
    /// assert_eq!(FingerprintBits::Bits17.bits_per_slot(), 16.0);
    /// assert!(FingerprintBits::Bits17.false_positive_rate(0.95) < 1e-4);
    /// ```
    Bits17,
    /// Eight fingerprints a word in a **ranked** bucket
    /// ([`slots_per_bucket`](Self::slots_per_bucket) 8): each of 703
    /// values (about 9.5 bits: 11 prefix values and a 6-bit suffix), the
    /// bucket's eight prefixes stored as one 16-bit rank among the sorted
    /// multisets. 8 bits a slot, as [`Bits8`](Self::Bits8), sized for 97 %
    /// load: about 2.2 % false positives at 8.2 bits per item.
    /// [`bits`](Self::bits) names it 10 (the header's width byte; with
    /// eight slots a bucket, where [`Bits10`](Self::Bits10) has six).
    ///
    /// ```
    /// # use lockfree_cuckoo_filter::FingerprintBits;
    /// let r = FingerprintBits::Ranked8;
    /// assert_eq!((r.slots_per_word(), r.slots_per_bucket(), r.bits()), (8, 8, 10));
    /// assert_eq!(r.bits_per_slot(), 8.0);
    /// assert!(r.false_positive_rate(0.98) < 0.023);
    /// ```
    Ranked8,
    /// Seven fingerprints a word in a **ranked** bucket
    /// ([`slots_per_bucket`](Self::slots_per_bucket) 7): each of 1535
    /// values (about 10.6 bits: 12 prefix values and a 7-bit suffix), the
    /// bucket's seven prefixes stored as one 15-bit rank among the sorted
    /// multisets. 9.1 bits a slot, sized for 97 % load: about 0.9 % false
    /// positives at 9.9 bits per item. [`bits`](Self::bits) names it 11
    /// (the header's width byte).
    ///
    /// ```
    /// # use lockfree_cuckoo_filter::FingerprintBits;
    /// let r = FingerprintBits::Ranked7;
    /// assert_eq!((r.slots_per_word(), r.slots_per_bucket(), r.bits()), (7, 7, 11));
    /// assert!(r.false_positive_rate(0.98) < 0.01);
    /// ```
    Ranked7,
    /// Six 12-bit fingerprints a word in a **ranked** bucket (16 prefix
    /// values, 8-bit suffixes, a 16-bit rank): 10.7 bits a slot, sized for
    /// 97 % load, about 0.29 % false positives at 11.4 bits per item (the
    /// plain [`Bits12`](Self::Bits12), five a word, gives 0.23 % at 13.9).
    ///
    /// ```
    /// # use lockfree_cuckoo_filter::FingerprintBits;
    /// let r = FingerprintBits::Ranked6;
    /// assert_eq!((r.slots_per_word(), r.slots_per_bucket(), r.bits()), (6, 6, 12));
    /// assert!(r.false_positive_rate(0.98) < 0.003);
    /// ```
    Ranked6,
    /// Five 14-bit fingerprints a word in a **ranked** bucket (16 prefix
    /// values, 10-bit suffixes, a 14-bit rank): 12.8 bits a slot, sized for
    /// 97 % load, about 0.06 % false positives at 13.6 bits per item.
    ///
    /// ```
    /// # use lockfree_cuckoo_filter::FingerprintBits;
    /// let r = FingerprintBits::Ranked5;
    /// assert_eq!((r.slots_per_word(), r.slots_per_bucket(), r.bits()), (5, 5, 14));
    /// assert!(r.false_positive_rate(0.98) < 6e-4);
    /// ```
    Ranked5,
    /// Three fingerprints a word in a **ranked** bucket
    /// ([`slots_per_bucket`](Self::slots_per_bucket) 3): each of 4 456 447
    /// values (about 22.1 bits: 17 prefix values and an 18-bit suffix), the
    /// bucket's three prefixes stored as one 10-bit rank among the sorted
    /// multisets. 21.3 bits a slot, as [`Bits21`](Self::Bits21); buckets of
    /// three fill less far, so it is sized for 91 % load: about 1.2 in 10^6
    /// false positives at 23.4 bits per item. [`bits`](Self::bits) names it
    /// 23 (the header's width byte).
    ///
    /// ```
    /// # use lockfree_cuckoo_filter::FingerprintBits;
    /// let r = FingerprintBits::Ranked3;
    /// assert_eq!((r.slots_per_word(), r.slots_per_bucket(), r.bits()), (3, 3, 23));
    /// assert!(r.false_positive_rate(0.92) < 1.3e-6);
    /// ```
    Ranked3,
    /// 21-bit fingerprints, three to a word and a bucket of six, two words:
    /// about 6 in 10^6 false positives at full load, 22.7 bits per item.
    ///
    /// ```
    /// # use lockfree_cuckoo_filter::FingerprintBits;
    /// assert_eq!(FingerprintBits::Bits21.slots_per_bucket(), 6);
    /// assert!(FingerprintBits::Bits21.false_positive_rate(1.0) < 6e-6);
    /// ```
    Bits21,
    /// 32-bit fingerprints, two to a word, one bucket in two words: about 2 in
    /// 10^9 false positives.
    ///
    /// ```
    /// # use lockfree_cuckoo_filter::FingerprintBits;
    /// assert_eq!(FingerprintBits::Bits32.bits_per_slot(), 32.0);
    /// ```
    Bits32,
}

impl FingerprintBits {
    /// All layouts, cheapest (in bits per slot) first; of two that cost the
    /// same ([`Bits8`](Self::Bits8), the semi-sorted
    /// [`Bits9`](Self::Bits9) and the ranked [`Ranked8`](Self::Ranked8);
    /// [`Bits10`](Self::Bits10) and the ranked [`Ranked6`](Self::Ranked6);
    /// [`Bits21`](Self::Bits21) and the ranked [`Ranked3`](Self::Ranked3),
    /// ...), the faster one first.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::FingerprintBits;
    /// let all = FingerprintBits::ALL;
    /// assert!(all.windows(2).all(|w| w[0].bits_per_slot() <= w[1].bits_per_slot()));
    /// ```
    pub const ALL: [FingerprintBits; 13] = [
        Self::Bits8,
        Self::Bits9,
        Self::Ranked8,
        Self::Ranked7,
        Self::Bits10,
        Self::Ranked6,
        Self::Bits12,
        Self::Ranked5,
        Self::Bits16,
        Self::Bits17,
        Self::Bits21,
        Self::Ranked3,
        Self::Bits32,
    ];

    /// The width in bits.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::FingerprintBits;
    /// assert_eq!(FingerprintBits::Bits32.bits(), 32);
    /// assert_eq!(FingerprintBits::Bits12.bits(), 12);
    /// ```
    pub const fn bits(self) -> u32 {
        match self {
            Self::Bits8 => 8,
            Self::Bits9 => 9,
            Self::Bits10 => 10,
            Self::Bits12 => 12,
            Self::Bits16 => 16,
            Self::Bits17 => 17,
            Self::Bits21 => 21,
            Self::Bits32 => 32,
            Self::Ranked8 => 10,
            Self::Ranked7 => 11,
            Self::Ranked6 => 12,
            Self::Ranked5 => 14,
            Self::Ranked3 => 23,
        }
    }

    /// The layout whose header records `bits` and `slots` (the byte
    /// format's width and bucket size: together they name a layout).
    pub(crate) fn from_layout(bits: u32, slots: u32) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|b| b.bits() == bits && b.slots_per_bucket() == slots)
    }

    /// Whether the bucket is ranked ([`Ranked8`](Self::Ranked8),
    /// [`Ranked7`](Self::Ranked7), [`Ranked6`](Self::Ranked6),
    /// [`Ranked5`](Self::Ranked5), [`Ranked3`](Self::Ranked3)).
    pub(crate) const fn is_ranked(self) -> bool {
        matches!(
            self,
            Self::Ranked8 | Self::Ranked7 | Self::Ranked6 | Self::Ranked5 | Self::Ranked3
        )
    }

    /// Distinct fingerprints, `2^bits − 1` (the value 0 marks an empty
    /// slot); 703 for [`Ranked8`](Self::Ranked8), 1535 for
    /// [`Ranked7`](Self::Ranked7), 4 456 447 for [`Ranked3`](Self::Ranked3).
    pub(crate) fn fingerprints(self) -> f64 {
        match self {
            Self::Ranked8 => 703.0,
            Self::Ranked7 => 1535.0,
            Self::Ranked3 => 4_456_447.0,
            b => (f64::from(b.bits())).exp2() - 1.0,
        }
    }

    /// The load, in thousandths, a table of this layout is sized for when
    /// no rate is asked (`with_capacity`, the builder without a rate, each
    /// table of a growable filter, a table whose bytes record no load): 940
    /// for the plain and semi-sorted layouts, whose first failure lies past
    /// 95 %; 970 for the ranked ones of five to eight slots, which fill to
    /// 98.2 % (five slots) to 99.25 % (eight) at the first failure: bigger
    /// buckets, and their well-mixed alternates; 910 for the ranked buckets
    /// of three, which fill a table of 2^20 slots to 93.4 % to 94.5 % (a
    /// bucket pair holds six): two percent and the rounding below the
    /// lowest of those. A rate asked sizes a table for up to
    /// [`max_load`](Self::max_load), or for less: fewer fingerprints a
    /// bucket pair at its capacity, a lower rate for more bits (see
    /// [`crate::builder`]).
    pub(crate) const fn full_load(self) -> u32 {
        match self {
            Self::Ranked3 => 910,
            _ if self.is_ranked() => 970,
            _ => 940,
        }
    }

    /// The highest load, in thousandths, the builder sizes a table of this
    /// layout for when it is asked for a rate: it then sizes for the fewest
    /// bits that meet the rate, up to this load. At least
    /// [`full_load`](Self::full_load), which keeps the headroom of
    /// `with_capacity` and of a growable filter's tables (and is the load of
    /// a table whose bytes record none); above it by what each layout's
    /// first refused insert allows, measured on well-mixed keys: 95.3 % (8
    /// bits) and 96.1 % (9) at 2^24 slots, the short fingerprints' crowded
    /// alternates, keep 940; buckets of four (16, 17, 32 bits) first refuse
    /// at 97.1 to 97.2 % and are sized up to 955; buckets of five (12 bits,
    /// ranked five) at 98.2 %, 965 and 970; of six at 98.2 % (10 bits), 98.8 %
    /// (ranked six) and 98.9 % (21 bits), 965, 980 and 970; ranked seven at
    /// 99.1 % and eight at 99.25 % (2^20 slots, 200 seeds), 980. Ranked
    /// buckets of three first refuse at 93.4 % (2^20 slots, 200 seeds) and
    /// stay at their full load, 910. The first refusal moves by a tenth of
    /// a percent between seeds and falls by about that much from 2^20 to
    /// 2^24 slots; the builder's slack covers small tables. (The
    /// benchmarks' `first_refusal` example measures these.)
    pub(crate) const fn max_load(self) -> u32 {
        match self {
            Self::Bits8 | Self::Bits9 => 940,
            Self::Bits16 | Self::Bits17 | Self::Bits32 => 955,
            Self::Bits10 | Self::Bits12 => 965,
            Self::Bits21 | Self::Ranked5 => 970,
            Self::Ranked6 | Self::Ranked7 | Self::Ranked8 => 980,
            Self::Ranked3 => 910,
        }
    }

    /// The load at which the builder takes the rate bound of a table sized
    /// for `load` thousandths: one percent above it (0.95 for a plain
    /// layout's [`full_load`](Self::full_load)).
    pub(crate) fn rated_load(load: u32) -> f64 {
        f64::from(load + 10) / 1000.0
    }

    /// Table memory per item of a table sized for `load` thousandths, in
    /// bits: what the builder minimises.
    pub(crate) fn bits_per_item(self, load: u32) -> f64 {
        self.bits_per_slot() * 1000.0 / f64::from(load)
    }

    /// The width of `bits` bits, if it is one of those offered
    /// ([`ALL`](Self::ALL)); for 12, the plain [`Bits12`](Self::Bits12)
    /// ([`Ranked6`](Self::Ranked6) has 12-bit fingerprints too), and for
    /// 10 the plain [`Bits10`](Self::Bits10) ([`Ranked8`](Self::Ranked8)'s
    /// [`bits`](Self::bits) is 10 too).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::FingerprintBits;
    /// assert_eq!(FingerprintBits::from_bits(8), Some(FingerprintBits::Bits8));
    /// assert_eq!(FingerprintBits::from_bits(12), Some(FingerprintBits::Bits12));
    /// assert_eq!(FingerprintBits::from_bits(10), Some(FingerprintBits::Bits10));
    /// assert_eq!(FingerprintBits::from_bits(13), None);
    /// assert_eq!(FingerprintBits::from_bits(11), Some(FingerprintBits::Ranked7));
    /// assert_eq!(FingerprintBits::from_bits(23), Some(FingerprintBits::Ranked3));
    /// assert!(FingerprintBits::ALL
    ///     .iter()
    ///     .filter(|b| ![FingerprintBits::Ranked6, FingerprintBits::Ranked8].contains(b))
    ///     .all(|b| FingerprintBits::from_bits(b.bits()) == Some(*b)));
    /// ```
    pub const fn from_bits(bits: u32) -> Option<Self> {
        match bits {
            8 => Some(Self::Bits8),
            9 => Some(Self::Bits9),
            10 => Some(Self::Bits10),
            12 => Some(Self::Bits12),
            16 => Some(Self::Bits16),
            17 => Some(Self::Bits17),
            21 => Some(Self::Bits21),
            32 => Some(Self::Bits32),
            11 => Some(Self::Ranked7),
            14 => Some(Self::Ranked5),
            23 => Some(Self::Ranked3),
            _ => None,
        }
    }

    /// Fingerprints in one 64-bit word: `⌊64 / bits⌋`, and 4 for the
    /// semi-sorted [`Bits17`](Self::Bits17), 8 for the semi-sorted
    /// [`Bits9`](Self::Bits9).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::FingerprintBits;
    /// assert_eq!(FingerprintBits::Bits10.slots_per_word(), 6);
    /// assert_eq!(FingerprintBits::Bits16.slots_per_word(), 4);
    /// assert_eq!(FingerprintBits::Bits17.slots_per_word(), 4);
    /// assert_eq!(FingerprintBits::Bits9.slots_per_word(), 8);
    /// ```
    pub const fn slots_per_word(self) -> u32 {
        match self {
            Self::Bits9 => 8,
            Self::Bits17 => 4,
            Self::Ranked8 => 8,
            Self::Ranked7 => 7,
            Self::Ranked6 => 6,
            Self::Ranked5 => 5,
            Self::Ranked3 => 3,
            _ => 64 / self.bits(),
        }
    }

    /// Slots in one bucket: 4, or the slots of one word at 10 and 12 bits
    /// (6 and 5), of two words at 21 bits (6). An item may sit in any slot
    /// of its two buckets, so a lookup compares against
    /// `2 · slots_per_bucket()` fingerprints.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::FingerprintBits;
    /// assert_eq!(FingerprintBits::Bits16.slots_per_bucket(), 4);
    /// assert_eq!(FingerprintBits::Bits12.slots_per_bucket(), 5);
    /// assert_eq!(FingerprintBits::Bits10.slots_per_bucket(), 6);
    /// ```
    pub const fn slots_per_bucket(self) -> u32 {
        match self {
            Self::Ranked8 => 8,
            Self::Ranked7 => 7,
            Self::Bits10 | Self::Bits21 | Self::Ranked6 => 6,
            Self::Bits12 | Self::Ranked5 => 5,
            Self::Ranked3 => 3,
            _ => 4,
        }
    }

    /// Table memory per slot, in bits: `64 / slots_per_word()` (the unused
    /// top bits of each word included). A filter sized for `n` items has about
    /// `n / 0.94` slots.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::FingerprintBits;
    /// assert_eq!(FingerprintBits::Bits12.bits_per_slot(), 12.8);
    /// ```
    pub fn bits_per_slot(self) -> f64 {
        64.0 / f64::from(self.slots_per_word())
    }

    /// The false-positive rate bound at load factor `load` (clamped to 0..=1):
    /// a lookup compares against the `2 · s · load` fingerprints of its two
    /// buckets of `s` [slots](Self::slots_per_bucket), each matching with
    /// probability about `2^-bits`, so the rate is at most about
    /// `1 - (1 - 2^-bits)^(2 · s · load)`. Fingerprints are never
    /// 0, so one matches with probability `1/(2^bits - 1)`, and the exact
    /// bound is higher by a factor of up to `2^bits / (2^bits - 1)`: 0.4 % at
    /// 8 bits, less at wider ones. The ranked layouts take the exact
    /// `1/v` for their `v` fingerprint values (1535 for
    /// [`Ranked7`](Self::Ranked7)). The builders choose widths by this bound;
    /// the growable filter's budget takes it at load 1, computed in basic
    /// arithmetic so that every platform gets the same bits (the decoder of
    /// a chain recomputes it).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::FingerprintBits;
    /// let b = FingerprintBits::Bits16;
    /// let p = b.false_positive_rate(0.95);
    /// assert!(p > 1.1e-4 && p < 1.2e-4);
    /// assert_eq!(b.false_positive_rate(2.0), b.false_positive_rate(1.0));
    /// assert_eq!(b.false_positive_rate(-1.0), 0.0);
    /// ```
    pub fn false_positive_rate(self, load: f64) -> f64 {
        let miss = if self.is_ranked() {
            1.0 - 1.0 / self.fingerprints()
        } else {
            1.0 - (-f64::from(self.bits())).exp2()
        };
        let slots = self.slots_per_bucket();
        1.0 - miss.powf(2.0 * f64::from(slots) * load.clamp(0.0, 1.0))
    }
}

/// The lowest bit of each of the `64 / bits` lanes of a word.
const fn low_bits(bits: u32) -> u64 {
    let mut low = 0;
    let mut lane = 0;
    while lane < 64 / bits {
        low |= 1 << (lane * bits);
        lane += 1;
    }
    low
}

/// A fingerprint width, fixed at compile time so that each width gets its own
/// monomorphised table: the run-time choice costs one predictable branch per
/// operation (in `CuckooFilter`'s dispatch; a lookup of the uncommon widths
/// also makes one call), never one per slot.
///
/// A bucket is the [`SLOTS`](Width::SLOTS) consecutive lanes
/// `SLOTS · b .. SLOTS · (b + 1)`, lane `L` being lane `L mod LANES` of word
/// `L / LANES`. Either a word holds whole buckets (8-bit: two of four lanes;
/// 10, 12, 16-bit: one of six, five, four) or a bucket is whole words (21 and
/// 32-bit: two words of three and two lanes), so no bucket crosses a word
/// boundary. The unused top `64 mod BITS` bits of every word stay 0.
pub(crate) trait Width: Copy + Send + Sync + 'static {
    /// Bits per fingerprint.
    const BITS: u32;
    /// Fingerprint lanes in one 64-bit word (slots, for a semi-sorted word).
    const LANES: u32 = 64 / Self::BITS;
    /// Slots per bucket ([`FingerprintBits::slots_per_bucket`]), at most
    /// [`MAX_SLOTS`].
    const SLOTS: u32 = 4;
    /// Whether a word is one or two semi-sorted buckets
    /// ([`crate::semisorted`]), each decoded and re-encoded as a whole: the
    /// content methods below are then the codec's, and there are no lanes
    /// (the lane constants only give the table one bucket per word,
    /// `LANES = 4`, or two, `LANES = 8`; the mask is nonzero, and for two
    /// buckets a word it is the bucket's half of the word, which tells the
    /// content methods which half is meant: see [`half_of`]).
    const SORTED: bool = false;
    /// Words a bucket lies in: 1, or 2 where a bucket is two whole words.
    /// Evaluating it checks the three shapes the table knows: a bucket is
    /// a word, half a word, or two words; none crosses a word boundary.
    const WORDS_PER_BUCKET: usize = {
        assert!(Self::SLOTS as usize <= MAX_SLOTS);
        assert!(
            Self::LANES == Self::SLOTS
                || Self::LANES == 2 * Self::SLOTS
                || Self::SLOTS == 2 * Self::LANES
        );
        if Self::SLOTS <= Self::LANES {
            1
        } else {
            2
        }
    };
    /// Largest fingerprint, `2^BITS - 1`; fingerprints lie in `1..=MAX`.
    const MAX: u64 = (1u64 << Self::BITS) - 1;
    /// The lowest bit of every lane (none in the unused top bits).
    const LOW: u64 = low_bits(Self::BITS);
    /// The highest bit of every lane (none in the unused top bits).
    const HIGH: u64 = Self::LOW << (Self::BITS - 1);
    /// The bits of a word that belong to a lane; the others stay 0.
    const USED: u64 = Self::LOW.wrapping_mul(Self::MAX);
    // ----- bucket contents, one word at a time --------------------------
    //
    // The table changes and reads a bucket only through these: each looks at
    // one word and the lanes of it that belong to the bucket (`mask`, their
    // high bits), and a change is a new value for the whole word, which the
    // table installs by one CAS. They name fingerprints, never slots, so that
    // a layout whose slots have no stable position (a semi-sorted bucket,
    // re-encoded as a whole on every change) can implement them too. The
    // defaults are the plain lane layout's.

    /// Whether `mask`'s lanes of `word` hold `fp`.
    #[inline(always)]
    fn holds_in(word: u64, mask: u64, fp: u32) -> bool {
        zero_lanes::<Self>(word ^ broadcast::<Self>(fp)) & mask != 0
    }

    /// Whether `masks[k]`'s lanes of `words[k]` hold `fp` for either `k`
    /// (the two words of a bucket pair, or of a bucket): by default
    /// [`holds_in`](Width::holds_in) on each.
    #[inline(always)]
    fn holds_in_either(words: [u64; 2], masks: [u64; 2], fp: u32) -> bool {
        Self::holds_in(words[0], masks[0], fp) | Self::holds_in(words[1], masks[1], fp)
    }

    /// `word` with `fp` put into one of `mask`'s empty slots; `None` if they
    /// are all full.
    #[inline(always)]
    fn put_in(word: u64, mask: u64, fp: u32) -> Option<u64> {
        let free = zero_lanes::<Self>(word) & mask;
        (free != 0).then(|| with_lane::<Self>(word, first_lane::<Self>(free), fp))
    }

    /// `word` with one copy of `fp` taken out of `mask`'s slots; `None` if
    /// they hold none.
    #[inline(always)]
    fn take_from(word: u64, mask: u64, fp: u32) -> Option<u64> {
        let copies = zero_lanes::<Self>(word ^ broadcast::<Self>(fp)) & mask;
        (copies != 0).then(|| without_lane::<Self>(word, first_lane::<Self>(copies)))
    }

    /// Copies of `fp` in `mask`'s slots of `word`.
    #[inline(always)]
    fn copies_in(word: u64, mask: u64, fp: u32) -> u32 {
        (zero_lanes::<Self>(word ^ broadcast::<Self>(fp)) & mask).count_ones()
    }

    /// Occupied slots of `word` (all its lanes).
    #[inline(always)]
    fn occupied_in(word: u64) -> u32 {
        Self::LANES - zero_lanes::<Self>(word).count_ones()
    }

    /// Empty slots among `mask`'s slots of `word`.
    ///
    /// Counted by a multiplication, not `count_ones`: without the `popcnt`
    /// instruction (not in the x86-64 baseline) that is a dozen
    /// instructions, on every insert. Each empty lane's flag, moved to the
    /// lane's lowest bit, times [`LOW`](Width::LOW) sums the flags of lanes
    /// `0..=k` into lane `k`; the top lane holds them all (at most 8, so no
    /// lane overflows into the next).
    #[inline(always)]
    fn free_in(word: u64, mask: u64) -> u32 {
        let ones = (zero_lanes::<Self>(word) & mask) >> (Self::BITS - 1);
        ((ones.wrapping_mul(Self::LOW) >> ((Self::LANES - 1) * Self::BITS)) & Self::MAX) as u32
    }

    /// The [`SLOTS`](Width::SLOTS) fingerprints of the semi-sorted bucket in
    /// `mask`'s part of `word`, ascending, then 0 up to [`MAX_SLOTS`] (only
    /// called when [`SORTED`](Width::SORTED)).
    #[inline(always)]
    fn sorted_fingerprints(word: u64, mask: u64) -> [u32; MAX_SLOTS] {
        let _ = (word, mask);
        unreachable!("not a semi-sorted layout")
    }

    /// `word` with the semi-sorted bucket in `mask`'s part of it holding
    /// the first [`SLOTS`](Width::SLOTS) values of `fps` (any order, 0 =
    /// empty) and nothing else (only called when [`SORTED`](Width::SORTED)).
    #[inline(always)]
    fn sorted_with_bucket(word: u64, mask: u64, fps: [u32; MAX_SLOTS]) -> u64 {
        let _ = (word, mask, fps);
        unreachable!("not a semi-sorted layout")
    }

    /// Whether `word` may be in a table of this layout as read from bytes
    /// (the padding rules of plain layouts are checked by the decoder; a
    /// semi-sorted word must be one the codec writes).
    #[inline(always)]
    fn valid_word(word: u64) -> bool {
        let _ = word;
        true
    }

    /// Whether the alternate bucket takes the fingerprint through a full
    /// 64-bit mixer rather than one multiplication (see
    /// `Table::alternate`). Only the ranked layouts do: the others' tables
    /// in bytes were written with the plain multiplication, and must keep
    /// the buckets they were written with.
    const MIXED_ALTERNATE: bool = false;
}

/// 8-bit fingerprints: two buckets per word.
#[derive(Clone, Copy, Debug)]
pub(crate) struct W8;
/// 9-bit fingerprints in semi-sorted buckets: two buckets per word, one in
/// each 32-bit half, encoded by [`crate::semisorted::half`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct W9;
/// 10-bit fingerprints: six per word, a bucket of six in one word.
#[derive(Clone, Copy, Debug)]
pub(crate) struct W10;
/// 12-bit fingerprints: five per word, a bucket of five in one word.
#[derive(Clone, Copy, Debug)]
pub(crate) struct W12;
/// 16-bit fingerprints: one bucket per word.
#[derive(Clone, Copy, Debug)]
pub(crate) struct W16;
/// 17-bit fingerprints in semi-sorted buckets: one bucket per word, encoded by
/// [`crate::semisorted`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct W17;
/// 21-bit fingerprints: three per word, a bucket of six in two words.
#[derive(Clone, Copy, Debug)]
pub(crate) struct W21;
/// 32-bit fingerprints: one bucket in two words.
#[derive(Clone, Copy, Debug)]
pub(crate) struct W32;

impl Width for W8 {
    const BITS: u32 = 8;
}
impl Width for W10 {
    const BITS: u32 = 10;
    const SLOTS: u32 = 6;
}
impl Width for W12 {
    const BITS: u32 = 12;
    const SLOTS: u32 = 5;
}
impl Width for W16 {
    const BITS: u32 = 16;
}
impl Width for W17 {
    const BITS: u32 = 17;
    const LANES: u32 = 4;
    const SORTED: bool = true;

    #[inline(always)]
    fn holds_in(word: u64, _mask: u64, fp: u32) -> bool {
        semisorted::holds(word, fp)
    }

    #[inline(always)]
    fn put_in(word: u64, _mask: u64, fp: u32) -> Option<u64> {
        semisorted::with(word, fp)
    }

    #[inline(always)]
    fn take_from(word: u64, _mask: u64, fp: u32) -> Option<u64> {
        semisorted::without(word, fp)
    }

    #[inline(always)]
    fn copies_in(word: u64, _mask: u64, fp: u32) -> u32 {
        let fps = semisorted::fingerprints(word);
        fps.iter().filter(|&&f| f == fp).count() as u32
    }

    #[inline(always)]
    fn occupied_in(word: u64) -> u32 {
        semisorted::len(word)
    }

    #[inline(always)]
    fn free_in(word: u64, _mask: u64) -> u32 {
        Self::SLOTS - semisorted::len(word)
    }

    #[inline(always)]
    fn sorted_fingerprints(word: u64, _mask: u64) -> [u32; MAX_SLOTS] {
        four(semisorted::fingerprints(word))
    }

    #[inline(always)]
    fn sorted_with_bucket(_word: u64, _mask: u64, fps: [u32; MAX_SLOTS]) -> u64 {
        semisorted::encode(first_four(fps))
    }

    fn valid_word(word: u64) -> bool {
        semisorted::is_canonical(word)
    }
}

/// A bucket of four fingerprints as [`Width::sorted_fingerprints`] gives it.
#[inline(always)]
fn four(fps: [u32; 4]) -> [u32; MAX_SLOTS] {
    let mut all = [0; MAX_SLOTS];
    all[..4].copy_from_slice(&fps);
    all
}

/// The first four of `fps`: a bucket of four as
/// [`Width::sorted_with_bucket`] is given it.
#[inline(always)]
fn first_four(fps: [u32; MAX_SLOTS]) -> [u32; 4] {
    [fps[0], fps[1], fps[2], fps[3]]
}

/// The half of the word (0: low 32 bits, 1: high) that a two-buckets-a-word
/// semi-sorted bucket's mask (`0xffff_ffff << (32 · half)`) names.
#[inline(always)]
pub(crate) const fn half_of(mask: u64) -> u32 {
    (mask & 1 == 0) as u32
}

/// The mask of half `half` (0 or 1) of a word: see [`half_of`].
#[inline(always)]
pub(crate) const fn half_mask(half: u32) -> u64 {
    0xffff_ffff << (32 * half)
}

impl Width for W9 {
    const BITS: u32 = 9;
    const LANES: u32 = 8;
    const SORTED: bool = true;

    #[inline(always)]
    fn holds_in(word: u64, mask: u64, fp: u32) -> bool {
        semisorted::half::holds(word, half_of(mask), fp)
    }

    #[inline(always)]
    fn put_in(word: u64, mask: u64, fp: u32) -> Option<u64> {
        semisorted::half::with(word, half_of(mask), fp)
    }

    #[inline(always)]
    fn take_from(word: u64, mask: u64, fp: u32) -> Option<u64> {
        semisorted::half::without(word, half_of(mask), fp)
    }

    #[inline(always)]
    fn copies_in(word: u64, mask: u64, fp: u32) -> u32 {
        let fps = semisorted::half::fingerprints(word, half_of(mask));
        fps.iter().filter(|&&f| f == fp).count() as u32
    }

    #[inline(always)]
    fn occupied_in(word: u64) -> u32 {
        semisorted::half::len(word, 0) + semisorted::half::len(word, 1)
    }

    #[inline(always)]
    fn free_in(word: u64, mask: u64) -> u32 {
        Self::SLOTS - semisorted::half::len(word, half_of(mask))
    }

    #[inline(always)]
    fn sorted_fingerprints(word: u64, mask: u64) -> [u32; MAX_SLOTS] {
        four(semisorted::half::fingerprints(word, half_of(mask)))
    }

    #[inline(always)]
    fn sorted_with_bucket(word: u64, mask: u64, fps: [u32; MAX_SLOTS]) -> u64 {
        let bucket = semisorted::half::encode(first_four(fps));
        semisorted::half::with_bucket(word, half_of(mask), bucket)
    }

    fn valid_word(word: u64) -> bool {
        semisorted::half::is_canonical(word)
    }
}
/// The [`Width`] of a ranked layout ([`crate::ranked`]): one bucket of
/// `L::SLOTS` fingerprints per word, its content methods the codec's.
macro_rules! ranked_width {
    ($(#[$doc:meta])* $W:ident, $L:ty, bits $bits:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub(crate) struct $W;

        impl Width for $W {
            const BITS: u32 = $bits;
            const LANES: u32 = <$L as ranked::Layout>::SLOTS as u32;
            const SLOTS: u32 = <$L as ranked::Layout>::SLOTS as u32;
            const MAX: u64 = <$L as ranked::Layout>::MAX as u64;
            const SORTED: bool = true;
            const MIXED_ALTERNATE: bool = true;

            #[inline(always)]
            fn holds_in(word: u64, _mask: u64, fp: u32) -> bool {
                ranked::holds::<$L>(word, fp)
            }

            #[inline(always)]
            fn holds_in_either(words: [u64; 2], _masks: [u64; 2], fp: u32) -> bool {
                ranked::holds_in_either::<$L>(words, fp)
            }

            #[inline(always)]
            fn put_in(word: u64, _mask: u64, fp: u32) -> Option<u64> {
                ranked::with::<$L>(word, fp)
            }

            #[inline(always)]
            fn take_from(word: u64, _mask: u64, fp: u32) -> Option<u64> {
                ranked::without::<$L>(word, fp)
            }

            #[inline(always)]
            fn copies_in(word: u64, _mask: u64, fp: u32) -> u32 {
                ranked::copies::<$L>(word, fp)
            }

            #[inline(always)]
            fn occupied_in(word: u64) -> u32 {
                ranked::len::<$L>(word)
            }

            #[inline(always)]
            fn free_in(word: u64, _mask: u64) -> u32 {
                Self::SLOTS - ranked::len::<$L>(word)
            }

            #[inline(always)]
            fn sorted_fingerprints(word: u64, _mask: u64) -> [u32; MAX_SLOTS] {
                ranked::fingerprints::<$L>(word)
            }

            #[inline(always)]
            fn sorted_with_bucket(_word: u64, _mask: u64, fps: [u32; MAX_SLOTS]) -> u64 {
                ranked::encode::<$L>(fps)
            }

            fn valid_word(word: u64) -> bool {
                ranked::is_canonical::<$L>(word)
            }
        }
    };
}

ranked_width!(
    /// Seven fingerprints in `1..=1535` (about 10.6 bits) a word, ranked:
    /// [`crate::ranked::Seven`].
    R7, ranked::Seven, bits 11
);
ranked_width!(
    /// Six 12-bit fingerprints a word, ranked: [`crate::ranked::Six`].
    R6, ranked::Six, bits 12
);
ranked_width!(
    /// Five 14-bit fingerprints a word, ranked: [`crate::ranked::Five`].
    R5, ranked::Five, bits 14
);
ranked_width!(
    /// Eight fingerprints in `1..=703` (about 9.5 bits) a word, ranked:
    /// [`crate::ranked::Eight`].
    R8, ranked::Eight, bits 10
);
ranked_width!(
    /// Three fingerprints in `1..=4_456_447` (about 22.1 bits) a word,
    /// ranked: [`crate::ranked::Three`].
    R3, ranked::Three, bits 23
);

impl Width for W21 {
    const BITS: u32 = 21;
    const SLOTS: u32 = 6;
}
impl Width for W32 {
    const BITS: u32 = 32;
}

/// The fingerprint of a 64-bit hash: its high 32 bits scaled onto `1..=MAX`.
///
/// The low 32 bits choose the bucket, so fingerprint and bucket are independent.
/// Multiply-shift maps the 32 bits uniformly (to within one part in 2^32/MAX)
/// without a division, and never yields the empty value 0.
#[inline(always)]
pub(crate) fn of_hash<W: Width>(hash: u64) -> u32 {
    of_hash_up_to(hash, W::MAX)
}

/// [`of_hash`] for a width known only at run time: the fingerprint in
/// `1..=max` (`max` is `2^w - 1` for `w`-bit fingerprints, at most 32).
#[inline(always)]
pub(crate) fn of_hash_up_to(hash: u64, max: u64) -> u32 {
    (((hash >> 32) * max) >> 32) as u32 + 1
}

/// A hash whose fingerprint is `fp` (in `1..=MAX`) and whose low half is `low`.
/// The inverse of [`of_hash`]; test hooks use it to aim items at buckets.
#[cfg(any(test, feature = "test-hooks"))]
pub(crate) fn hash_with<W: Width>(fp: u32, low: u32) -> u64 {
    debug_assert!(fp >= 1 && u64::from(fp) <= W::MAX);
    let high = (u64::from(fp - 1) << 32).div_ceil(W::MAX);
    (high << 32) | u64::from(low)
}
