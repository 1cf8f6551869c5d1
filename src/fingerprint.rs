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
//! them are unused and stay 0. A bucket is four consecutive lanes: half a word
//! at 8 bits, one word at 16 bits, two words at 32 bits, and at 10, 12 and 21
//! bits the end of one word and the start of the next (or the middle of one
//! word). A lane holding 0 is an empty slot, which is why fingerprints are
//! never 0.

use crate::semisorted;

/// Slots per bucket: a bucket is this many consecutive lanes.
pub(crate) const SLOTS: u32 = 4;

/// Bits per fingerprint. Longer fingerprints cost memory and buy a lower
/// false-positive rate: about `8 / 2^bits` at full load.
///
/// Every slot lies inside one 64-bit word, `⌊64 / bits⌋` slots to a word (the
/// unused top bits of a word stay zero; the semi-sorted 9 and 17-bit layouts
/// pack 8 and 4, see [`slots_per_word`](Self::slots_per_word)), so a width
/// costs `64 / slots_per_word()` bits per slot:
/// [`bits_per_slot`](Self::bits_per_slot). The widths are
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
    /// 10-bit fingerprints, six to a word (a bucket may span two words): about
    /// 0.73 % false positives at the 94 % load a filter is sized for, 11.3
    /// bits per item.
    ///
    /// ```
    /// # use lockfree_cuckoo_filter::FingerprintBits;
    /// assert_eq!(FingerprintBits::Bits10.bits(), 10);
    /// assert!((FingerprintBits::Bits10.bits_per_slot() - 64.0 / 6.0).abs() < 1e-12);
    /// ```
    Bits10,
    /// 12-bit fingerprints, five to a word (a bucket may span two words):
    /// about 0.18 % false positives at the 94 % load a filter is sized for,
    /// 13.6 bits per item.
    ///
    /// ```
    /// # use lockfree_cuckoo_filter::FingerprintBits;
    /// assert_eq!(FingerprintBits::Bits12.bits_per_slot(), 12.8);
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
    /// 21-bit fingerprints, three to a word (every bucket spans two words):
    /// about 4 in 10^6 false positives at full load, 22.7 bits per item.
    ///
    /// ```
    /// # use lockfree_cuckoo_filter::FingerprintBits;
    /// assert!(FingerprintBits::Bits21.false_positive_rate(1.0) < 4e-6);
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
    /// All layouts, cheapest (in bits per slot) first, and shortest first;
    /// of two that cost the same ([`Bits8`](Self::Bits8) and the semi-sorted
    /// [`Bits9`](Self::Bits9), [`Bits16`](Self::Bits16) and the semi-sorted
    /// [`Bits17`](Self::Bits17)), the faster one first.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::FingerprintBits;
    /// let all = FingerprintBits::ALL;
    /// assert!(all.windows(2).all(|w| w[0].bits_per_slot() <= w[1].bits_per_slot()));
    /// assert!(all.windows(2).all(|w| w[0].bits() < w[1].bits()));
    /// ```
    pub const ALL: [FingerprintBits; 8] = [
        Self::Bits8,
        Self::Bits9,
        Self::Bits10,
        Self::Bits12,
        Self::Bits16,
        Self::Bits17,
        Self::Bits21,
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
        }
    }

    /// The width of `bits` bits, if it is one of those offered
    /// ([`ALL`](Self::ALL)).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::FingerprintBits;
    /// assert_eq!(FingerprintBits::from_bits(8), Some(FingerprintBits::Bits8));
    /// assert_eq!(FingerprintBits::from_bits(12), Some(FingerprintBits::Bits12));
    /// assert_eq!(FingerprintBits::from_bits(13), None);
    /// assert!(FingerprintBits::ALL.iter().all(|b| FingerprintBits::from_bits(b.bits()) == Some(*b)));
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
            _ => 64 / self.bits(),
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
    /// a lookup compares against the `2 · 4 · load` fingerprints of its two
    /// buckets, each matching with probability about `2^-bits`, so the rate
    /// is at most about `1 - (1 - 2^-bits)^(8 · load)`. Fingerprints are never
    /// 0, so one matches with probability `1/(2^bits - 1)`, and the exact
    /// bound is higher by a factor of up to `2^bits / (2^bits - 1)`: 0.4 % at
    /// 8 bits, less at wider ones. The builders choose widths by this bound;
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
        let miss = 1.0 - (-f64::from(self.bits())).exp2();
        1.0 - miss.powf(2.0 * f64::from(SLOTS) * load.clamp(0.0, 1.0))
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
/// A bucket is the four consecutive lanes `4b .. 4b + 4`, lane `L` being lane
/// `L mod LANES` of word `L / LANES`. With 8 or 16 bits a bucket lies inside
/// one word, with 32 bits it is two whole words; with 10, 12 or 21 bits
/// ([`SPANS`](Width::SPANS)) it may lie across two words, each of its slots
/// inside one of them. The unused top `64 mod BITS` bits of every word stay 0.
pub(crate) trait Width: Copy + Send + Sync + 'static {
    /// Bits per fingerprint.
    const BITS: u32;
    /// Fingerprint lanes in one 64-bit word (slots, for a semi-sorted word).
    const LANES: u32 = 64 / Self::BITS;
    /// Whether a word is one or two semi-sorted buckets
    /// ([`crate::semisorted`]), each decoded and re-encoded as a whole: the
    /// content methods below are then the codec's, and there are no lanes
    /// (the lane constants only give the table one bucket per word,
    /// `LANES = 4`, or two, `LANES = 8`; the mask is nonzero, and for two
    /// buckets a word it is the bucket's half of the word, which tells the
    /// content methods which half is meant: see [`half_of`]).
    const SORTED: bool = false;
    /// Words a bucket may touch: 1 when a word holds whole buckets, else 2.
    const WORDS_PER_BUCKET: usize = if Self::LANES % SLOTS == 0 { 1 } else { 2 };
    /// Whether a bucket's lanes may start in the middle of a word and run into
    /// the next (10, 12, 21 bits). Such tables are aligned to 64-byte lines,
    /// where a line of 8 words holds a whole number of buckets
    /// (`8 · LANES` is a multiple of 4), so no bucket straddles a line.
    const SPANS: bool = Self::LANES % SLOTS != 0 && SLOTS % Self::LANES != 0;
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

    /// The four fingerprints of the semi-sorted bucket in `mask`'s part of
    /// `word`, ascending (only called when [`SORTED`](Width::SORTED)).
    #[inline(always)]
    fn sorted_fingerprints(word: u64, mask: u64) -> [u32; 4] {
        let _ = (word, mask);
        unreachable!("not a semi-sorted layout")
    }

    /// `word` with the semi-sorted bucket in `mask`'s part of it holding
    /// `fps` (any order, 0 = empty) and nothing else (only called when
    /// [`SORTED`](Width::SORTED)).
    #[inline(always)]
    fn sorted_with_bucket(word: u64, mask: u64, fps: [u32; 4]) -> u64 {
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
}

/// 8-bit fingerprints: two buckets per word.
#[derive(Clone, Copy, Debug)]
pub(crate) struct W8;
/// 9-bit fingerprints in semi-sorted buckets: two buckets per word, one in
/// each 32-bit half, encoded by [`crate::semisorted::half`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct W9;
/// 10-bit fingerprints: six per word, a bucket in one or two words.
#[derive(Clone, Copy, Debug)]
pub(crate) struct W10;
/// 12-bit fingerprints: five per word, a bucket in one or two words.
#[derive(Clone, Copy, Debug)]
pub(crate) struct W12;
/// 16-bit fingerprints: one bucket per word.
#[derive(Clone, Copy, Debug)]
pub(crate) struct W16;
/// 17-bit fingerprints in semi-sorted buckets: one bucket per word, encoded by
/// [`crate::semisorted`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct W17;
/// 21-bit fingerprints: three per word, a bucket always in two words.
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
}
impl Width for W12 {
    const BITS: u32 = 12;
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
    fn sorted_fingerprints(word: u64, _mask: u64) -> [u32; 4] {
        semisorted::fingerprints(word)
    }

    #[inline(always)]
    fn sorted_with_bucket(_word: u64, _mask: u64, fps: [u32; 4]) -> u64 {
        semisorted::encode(fps)
    }

    fn valid_word(word: u64) -> bool {
        semisorted::is_canonical(word)
    }
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
    fn sorted_fingerprints(word: u64, mask: u64) -> [u32; 4] {
        semisorted::half::fingerprints(word, half_of(mask))
    }

    #[inline(always)]
    fn sorted_with_bucket(word: u64, mask: u64, fps: [u32; 4]) -> u64 {
        semisorted::half::with_bucket(word, half_of(mask), semisorted::half::encode(fps))
    }

    fn valid_word(word: u64) -> bool {
        semisorted::half::is_canonical(word)
    }
}
impl Width for W21 {
    const BITS: u32 = 21;
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
///
/// The unused top bits of a word (10, 12, 21-bit lanes) are never flagged,
/// whatever `x` holds there: they are in `!HIGH`, which the last `|` sets and
/// the `!` clears, and adding `!HIGH` to them cannot carry into a lane (they
/// are the top of the word; a carry out of them is lost).
#[inline(always)]
pub(crate) fn zero_lanes<W: Width>(x: u64) -> u64 {
    let low_bits = !W::HIGH;
    !(((x & low_bits).wrapping_add(low_bits)) | x | low_bits)
}

/// Nonzero if and only if `masks`' lanes of either of `words` hold `fp`
/// (`masks[k]` flags lanes of `words[k]` by their high bit; `fp` is never 0,
/// so an empty lane never matches): what a lookup asks of a bucket pair, or of
/// a bucket of two words. A number rather than a `bool`, so that a caller can
/// fold it into arithmetic without the compiler turning it into a branch (see
/// `Table::contains`).
///
/// For 8, 16 and 32-bit lanes on x86-64, one SSE2 comparison of both words'
/// lanes with `fp` ([`equal_bytes`]), ANDed with the byte mask of the lanes
/// asked about. The same question by [`Width::holds_in`] on each word, the
/// zero-lane trick, takes about twice the instructions. Semi-sorted words and
/// lanes that are not bytes, halves or whole 32-bit words take the per-word
/// way (and give 0 or 1).
#[inline(always)]
pub(crate) fn matches_in_either<W: Width>(words: [u64; 2], masks: [u64; 2], fp: u32) -> u32 {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if !W::SORTED && matches!(W::BITS, 8 | 16 | 32) {
        use std::arch::x86_64::{_mm_movemask_epi8, _mm_set_epi64x};
        let equal = equal_bytes::<W>(words, fp);
        // Every bucket of 16 or 32-bit lanes is whole words, so a lookup asks
        // about every lane and the byte mask alone answers. The masks are
        // constants where the lookup is inlined, so this test compiles away,
        // with the AND it saves (four instructions as LLVM lowers it).
        if W::BITS != 8 && masks == [W::HIGH; 2] {
            return equal;
        }
        // A lane's high bit is the top bit of its last byte: that byte's bit
        // in the mask of bytes.
        let [m0, m1] = masks.map(|m| m as i64);
        // SAFETY: SSE2 is enabled for this target (the `cfg` above); these
        // intrinsics compute on values in registers and touch no memory.
        let asked = unsafe { _mm_movemask_epi8(_mm_set_epi64x(m1, m0)) };
        return equal & asked as u32;
    }
    u32::from(W::holds_in(words[0], masks[0], fp) | W::holds_in(words[1], masks[1], fp))
}

/// [`matches_in_either`] for a bucket pair of 8-bit lanes: nonzero if and
/// only if the pair holds `fp`, given the word of its bucket `first` and the
/// word of its other bucket.
///
/// Two buckets of 8-bit lanes share a word, bucket `b` being half `b % 2` of
/// word `b / 2` (see `Table::locus`), and the two buckets of a pair are of
/// opposite halves (the alternate flips a bucket's low bit: see
/// `Table::alternate`). So one bucket's parity says which half of each word
/// is the pair's: for an even `first`, bytes 0-3 of the first word and 4-7
/// of the second, bits 0-3 and 12-15 of [`equal_bytes`]; for an odd one,
/// bits 4-7 and 8-11. A shift of one constant picks the mask (a 32-bit shift
/// takes its count mod 32, so by 16 or by 0): a few scalar instructions,
/// where turning the halves' masks into a byte mask, as
/// [`matches_in_either`] does, took seven vector ones (batched 8-bit
/// lookups went from 70 to 64 instructions a key, plain ones 9 % faster).
#[inline(always)]
pub(crate) fn matches_in_halves<W: Width>(words: [u64; 2], first: u64, fp: u32) -> u32 {
    debug_assert!(W::BITS == 8 && W::LANES == 2 * SLOTS && !W::SORTED);
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        let halves = 0x0ff0_f00f_u32.wrapping_shr((first as u32) << 4);
        equal_bytes::<W>(words, fp) & halves
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        let ours = |bucket: u64| W::HIGH & half_mask((bucket % 2) as u32);
        matches_in_either::<W>(words, [ours(first), ours(first + 1)], fp)
    }
}

/// The mask of bytes of `words` (bit `8k + j` for byte `j` of `words[k]`)
/// that belong to a lane holding `fp`, for lanes of 8, 16 or 32 bits: one
/// SSE2 comparison (`pcmpeqb`, `pcmpeqw` or `pcmpeqd`; a matching lane sets
/// all its bytes) and its byte mask.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn equal_bytes<W: Width>(words: [u64; 2], fp: u32) -> u32 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi16, _mm_cmpeq_epi32, _mm_cmpeq_epi8, _mm_movemask_epi8, _mm_set1_epi16,
        _mm_set1_epi32, _mm_set1_epi8, _mm_set_epi64x,
    };
    debug_assert!(matches!(W::BITS, 8 | 16 | 32));
    // The casts only reinterpret bits: `fp` fits the lane (it is at most
    // `W::MAX`), and the words are bit patterns.
    let [w0, w1] = words.map(|w| w as i64);
    // SAFETY: SSE2 is enabled for this target (the `cfg` above); these
    // intrinsics compute on values in registers and touch no memory.
    let equal = unsafe {
        let lanes = _mm_set_epi64x(w1, w0);
        _mm_movemask_epi8(match W::BITS {
            8 => _mm_cmpeq_epi8(lanes, _mm_set1_epi8(fp as i8)),
            16 => _mm_cmpeq_epi16(lanes, _mm_set1_epi16(fp as i16)),
            _ => _mm_cmpeq_epi32(lanes, _mm_set1_epi32(fp as i32)),
        })
    };
    equal as u32
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

#[cfg(test)]
mod tests {
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
        let shape = |lanes, words, spans, used: u64| (lanes, words, spans, used.count_ones());
        assert_eq!(
            (
                W8::LANES,
                W8::WORDS_PER_BUCKET,
                W8::SPANS,
                W8::USED.count_ones()
            ),
            shape(8, 1, false, u64::MAX)
        );
        assert_eq!(
            (
                W10::LANES,
                W10::WORDS_PER_BUCKET,
                W10::SPANS,
                W10::USED.count_ones()
            ),
            shape(6, 2, true, (1 << 60) - 1)
        );
        assert_eq!(
            (
                W12::LANES,
                W12::WORDS_PER_BUCKET,
                W12::SPANS,
                W12::USED.count_ones()
            ),
            shape(5, 2, true, (1 << 60) - 1)
        );
        assert_eq!(
            (
                W16::LANES,
                W16::WORDS_PER_BUCKET,
                W16::SPANS,
                W16::USED.count_ones()
            ),
            shape(4, 1, false, u64::MAX)
        );
        assert_eq!(
            (
                W21::LANES,
                W21::WORDS_PER_BUCKET,
                W21::SPANS,
                W21::USED.count_ones()
            ),
            shape(3, 2, true, (1 << 63) - 1)
        );
        assert_eq!(
            (
                W32::LANES,
                W32::WORDS_PER_BUCKET,
                W32::SPANS,
                W32::USED.count_ones()
            ),
            shape(2, 2, false, u64::MAX)
        );
        assert_eq!(W8::LOW, 0x0101_0101_0101_0101);
        assert_eq!(W16::LOW, 0x0001_0001_0001_0001);
        assert_eq!(W16::HIGH, 0x8000_8000_8000_8000);
        assert_eq!(W12::HIGH, 0x0800_8008_0080_0800);
        // A line of eight words holds whole buckets at every width.
        for lanes in [
            W8::LANES,
            W10::LANES,
            W12::LANES,
            W16::LANES,
            W21::LANES,
            W32::LANES,
        ] {
            assert_eq!(8 * lanes % SLOTS, 0);
        }
        for b in FingerprintBits::ALL {
            if b != FingerprintBits::Bits17 && b != FingerprintBits::Bits9 {
                assert_eq!(b.slots_per_word(), 64 / b.bits());
            }
        }
        assert_eq!(
            (W17::LANES, W17::WORDS_PER_BUCKET, W17::SPANS, W17::MAX),
            (4, 1, false, (1 << 17) - 1)
        );
        assert_eq!(
            (W9::LANES, W9::WORDS_PER_BUCKET, W9::SPANS, W9::MAX),
            (8, 1, false, 511)
        );
        assert_eq!(FingerprintBits::Bits9.slots_per_word(), 8);
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
        // The table's fingerprint of a hash is the codec's.
        for h in [0, 1 << 40, u64::MAX, 0x9e37_79b9_7f4a_7c15] {
            assert_eq!(of_hash::<W17>(h), semisorted::of_hash(h));
            assert_eq!(of_hash::<W9>(h), semisorted::half::of_hash(h));
        }
        check_fingerprint_range::<W32>();
    }
}
